/**
 * Run and wait (`POST /v1/definitions/{id}/runs?wait=…`). No dispatcher runs here: the test
 * ends a run by writing its row as the dispatcher would, so the wait's answer is decided by
 * exactly what the test did and when.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app';
import { DEFAULT_EDGE_OPTIONS } from '../src/edge/config';
import { KEYS, createDefinition, lineGraph, startHarness, type Harness } from './harness';

let h: Harness;
let defId: string;
beforeAll(async () => {
  h = await startHarness({ maxRunWaitS: 2 });
  defId = await createDefinition(h, lineGraph());
});
afterAll(async () => {
  await h.close();
});

const start = (query: string, body: Record<string, unknown> = {}) => h.call('POST', `/v1/definitions/${defId}/runs${query}`, { body });

/** Ends the run `after` ms from now, as the dispatcher would: Completed with its output. */
function completeLater(runId: () => string | undefined, after: number): Promise<void> {
  return new Promise((resolve, reject) => {
    setTimeout(() => {
      const id = runId();
      if (!id) return reject(new Error('no run yet'));
      h.db.pool
        .query(`UPDATE runs SET status = 'Completed', finished_at = now(), output = '{"outcome":"done","result":{"n":1}}'::jsonb, last_seq = last_seq + 1 WHERE id = $1`, [id])
        .then(() => resolve(), reject);
    }, after);
  });
}

describe('POST /v1/definitions/{id}/runs?wait=', () => {
  it('answers 200 with the run summary and output when the run ends within the wait', async () => {
    const requestId = `wait-ok-${Date.now()}`;
    let runId: string | undefined;
    // learn the run id from its row as soon as it exists, then end it
    const ender = (async () => {
      for (let i = 0; i < 100 && !runId; i++) {
        const r = await h.db.pool.query(`SELECT id FROM runs WHERE request_id = $1`, [requestId]);
        runId = r.rows[0]?.id;
        if (!runId) await new Promise((res) => setTimeout(res, 20));
      }
      await completeLater(() => runId, 200);
    })();
    const r = await start('?wait=2s', { requestId });
    await ender;
    expect(r.status).toBe(200);
    expect(r.res.headers.get('location')).toBe(`/v1/runs/${runId}`);
    expect(r.body).toMatchObject({ runId, run: { id: runId, status: 'Completed' }, output: { outcome: 'done', result: { n: 1 } } });
  });

  it('answers the usual 202 with Location when the wait runs out first, and a replay waits on the same run', async () => {
    const requestId = `wait-late-${Date.now()}`;
    const r = await start('?wait=300ms', { requestId });
    expect(r.status).toBe(202);
    expect(Object.keys(r.body)).toEqual(['runId']);
    expect(r.res.headers.get('location')).toBe(`/v1/runs/${r.body.runId}`);
    await completeLater(() => r.body.runId, 0);
    const replay = await start('?wait=1s', { requestId });
    expect(replay.status).toBe(200);
    expect(replay.body.runId).toBe(r.body.runId);
  });

  it('caps the wait at MAX_RUN_WAIT_S', async () => {
    const began = Date.now();
    const r = await start('?wait=10m');
    expect(r.status).toBe(202);
    const took = Date.now() - began;
    expect(took).toBeGreaterThanOrEqual(1900);
    expect(took).toBeLessThan(10_000);
  });

  it('refuses a wait that is not a duration with 400 ValidationFailed keyed wait, creating nothing', async () => {
    for (const wait of ['abc', '-1s', '1h', '1.5s', '']) {
      const requestId = `wait-bad-${wait}-${Date.now()}`;
      const r = await start(`?wait=${encodeURIComponent(wait)}`, { requestId });
      expect({ wait, status: r.status, details: r.body.error?.details }).toEqual({ wait, status: 400, details: [{ key: 'wait', message: 'a duration such as 30s, 1500ms or 2m' }] });
      expect((await h.db.pool.query(`SELECT 1 FROM runs WHERE request_id = $1`, [requestId])).rowCount).toBe(0);
    }
  });

  it('holds no admission slot of the tenant while it waits: another write of the tenant is admitted meanwhile', async () => {
    const app = createApp({ ...h.deps, edge: { ...DEFAULT_EDGE_OPTIONS, rateLimit: null, admission: { ...DEFAULT_EDGE_OPTIONS.admission, tenantWrites: 1 } } });
    const post = (path: string, body: unknown) =>
      app.request(path, { method: 'POST', headers: { authorization: `Bearer ${KEYS.a}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const waiting = post(`/v1/definitions/${defId}/runs?wait=1500ms`, {});
    await new Promise((r) => setTimeout(r, 300));
    const other = await post(`/v1/definitions/${defId}/runs`, {});
    expect(other.status).toBe(202);
    expect((await waiting).status).toBe(202);
  });
});
