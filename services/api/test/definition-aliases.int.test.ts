/**
 * Version aliases over REST: `current` decides what a start naming no version runs (absent: the
 * latest), a named alias places its share of starts on its version and the rest on `current`, a
 * start may name `version` or `alias`, and the chosen version is on the run and in `run.created`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDefinition, KEYS, lineGraph, startHarness, type Harness } from './harness';

let h: Harness;
let def: string;

beforeAll(async () => {
  h = await startHarness({ maxPendingRuns: () => 0 });
  def = await createDefinition(h, lineGraph(), 'aliased');
  for (const v of [1, 2]) {
    const res = await h.call('PUT', `/v1/definitions/${def}`, { body: { graph: lineGraph({ inputSchema: { type: 'object', description: `v${v + 1}` } }), version: v } });
    expect(res.status).toBe(200);
  }
});
afterAll(async () => {
  await h?.close();
});

async function start(body: Record<string, unknown> = {}) {
  const res = await h.call('POST', `/v1/definitions/${def}/runs`, { body: { input: {}, ...body } });
  expect(res.status).toBe(202);
  const created = await h.db.pool.query(`SELECT r.definition_version AS v, e.detail FROM runs r JOIN events e ON e.run_id = r.id AND e.seq = 1 WHERE r.id = $1`, [res.body.runId]);
  return created.rows[0] as { v: number; detail: { definitionVersion: number; alias?: string } };
}

describe('version aliases', () => {
  it('runs the latest version without aliases, a named version, and `current` once set; moving `current` applies to the next start', async () => {
    expect(await start()).toMatchObject({ v: 3, detail: { definitionVersion: 3, alias: 'current' } });
    expect(await start({ version: 1 })).toMatchObject({ v: 1, detail: { definitionVersion: 1 } });
    expect((await start({ version: 1 })).detail.alias).toBeUndefined();
    const set = await h.call('PUT', `/v1/definitions/${def}/aliases/current`, { body: { version: 2 } });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ name: 'current', targets: [{ version: 2, percent: 100 }], updatedAt: expect.any(String) });
    expect(await start()).toMatchObject({ v: 2, detail: { definitionVersion: 2, alias: 'current' } });
    // the run pins version 2's graph, not the latest one
    const run = await h.call('POST', `/v1/definitions/${def}/runs`, { body: { input: {} } });
    const detail = await h.call('GET', `/v1/runs/${run.body.runId}`);
    expect(detail.body.run.definitionVersion).toBe(2);
    expect(detail.body.graph.inputSchema).toEqual({ type: 'object', description: 'v2' });
    // rollback: move current back
    await h.call('PUT', `/v1/definitions/${def}/aliases/current`, { body: { version: 1 } });
    expect((await start()).v).toBe(1);
    expect((await h.call('DELETE', `/v1/definitions/${def}/aliases/current`)).status).toBe(204);
    expect((await start()).v).toBe(3);
  });

  it('places a canary share of starts on its version and the rest on current', async () => {
    await h.call('PUT', `/v1/definitions/${def}/aliases/current`, { body: { version: 2 } });
    const canary = await h.call('PUT', `/v1/definitions/${def}/aliases/canary`, { body: { targets: [{ version: 3, percent: 10 }] } });
    expect(canary.status).toBe(200);
    const counts = { 2: 0, 3: 0 } as Record<number, number>;
    // CANARY_STARTS=10000 measures the contract's 10 ± 2 % over ten thousand starts; CI runs fewer
    const n = Number(process.env.CANARY_STARTS ?? 2_000);
    for (let i = 0; i < n; i++) {
      const c = await start({ alias: 'canary' });
      expect(c.detail.alias).toBe('canary');
      counts[c.v] = (counts[c.v] ?? 0) + 1;
    }
    expect(counts[2]! + counts[3]!).toBe(n);
    // ±2 % of the starts, or five binomial standard deviations when fewer starts make 2 % too tight to hold
    const tolerance = Math.max(0.02 * n, 5 * Math.sqrt(n * 0.1 * 0.9));
    process.stdout.write(`canary: ${counts[3]} of ${n} starts (${((100 * counts[3]!) / n).toFixed(2)} %), tolerance ±${Math.round(tolerance)}\n`);
    expect(Math.abs(counts[3]! - 0.1 * n)).toBeLessThanOrEqual(tolerance);
    const list = await h.call('GET', `/v1/definitions/${def}/aliases`);
    expect(list.body).toEqual({
      items: [
        { name: 'canary', targets: [{ version: 3, percent: 10 }], updatedAt: expect.any(String) },
        { name: 'current', targets: [{ version: 2, percent: 100 }], updatedAt: expect.any(String) },
      ],
      nextCursor: null,
    });
  }, 900_000);

  it('refuses keyed: version and alias together, an unknown alias, a version never saved, bad targets; another tenant is 404', async () => {
    const refused = async (body: Record<string, unknown>) => (await h.call('POST', `/v1/definitions/${def}/runs`, { body: { input: {}, ...body } })).body.error;
    expect(await refused({ version: 1, alias: 'canary' })).toMatchObject({ code: 'ValidationFailed', details: [{ key: 'alias' }] });
    expect(await refused({ alias: 'nope' })).toMatchObject({ code: 'ValidationFailed', details: [{ key: 'alias' }] });
    expect(await refused({ version: 9 })).toMatchObject({ code: 'ValidationFailed', details: [{ key: 'version' }] });
    const put = (name: string, body: unknown) => h.call('PUT', `/v1/definitions/${def}/aliases/${name}`, { body });
    expect((await put('x', { version: 9 })).body.error).toMatchObject({ code: 'ValidationFailed', details: [{ key: 'version' }] });
    expect((await put('x', { targets: [{ version: 1, percent: 60 }, { version: 2, percent: 60 }] })).body.error).toMatchObject({ code: 'ValidationFailed', details: [{ key: 'targets' }] });
    expect((await put('x', { targets: [{ version: 1, percent: 10 }, { version: 1, percent: 10 }] })).body.error).toMatchObject({ details: [{ key: 'targets.1.version' }] });
    expect((await put('bad name', { version: 1 })).status).toBe(400);
    expect((await h.call('DELETE', `/v1/definitions/${def}/aliases/x`)).status).toBe(404);
    expect((await h.call('GET', `/v1/definitions/${def}/aliases`, { token: KEYS.b })).status).toBe(404);
    expect((await h.call('PUT', `/v1/definitions/${def}/aliases/current`, { body: { version: 1 }, token: KEYS.b })).status).toBe(404);
  });
});
