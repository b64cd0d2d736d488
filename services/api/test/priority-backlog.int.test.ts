/**
 * Run priority and the backlog bound on start (issue #16), through the real app on real
 * Postgres and Redis: `priority` 1–5 (default 3) stored on the run and on its summary, keyed
 * 400 outside 1–5; MAX_PENDING_RUNS answers 429 BacklogFull with Retry-After, per tenant.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, createDefinition, lineGraph, startHarness, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  // tenantA may hold 2 Pending runs, tenantB is unbounded (a TENANT_MAX_PENDING_RUNS override of 0)
  h = await startHarness({ maxPendingRuns: (t) => (t === 'tenantB' ? 0 : 2), backlogRetryAfterS: 7 });
});
afterAll(async () => {
  await h.close();
});

describe('run priority on start', () => {
  it('stores the priority given (default 3) on the run and its summary', async () => {
    const defId = await createDefinition(h, lineGraph(), 'prio', KEYS.b);
    const high = await h.call('POST', `/v1/definitions/${defId}/runs`, { body: { priority: 5 }, token: KEYS.b });
    const plain = await h.call('POST', `/v1/definitions/${defId}/runs`, { body: {}, token: KEYS.b });
    expect([high.status, plain.status]).toEqual([202, 202]);
    const rows = await h.db.pool.query<{ id: string; priority: number }>(`SELECT id, priority FROM runs WHERE id = ANY($1::uuid[])`, [[high.body.runId, plain.body.runId]]);
    expect(new Map(rows.rows.map((r) => [r.id, r.priority]))).toEqual(new Map([[high.body.runId, 5], [plain.body.runId, 3]]));
    expect((await h.call('GET', `/v1/runs/${high.body.runId}`, { token: KEYS.b })).body.run.priority).toBe(5);
    const list = await h.call('GET', `/v1/runs?definitionId=${defId}`, { token: KEYS.b });
    expect(list.body.items.map((r: { priority: number }) => r.priority).sort()).toEqual([3, 5]);
  });

  it('refuses a priority outside 1–5 or not an integer: 400 ValidationFailed keyed `priority`, no run created', async () => {
    const defId = await createDefinition(h, lineGraph(), 'prio-bad', KEYS.b);
    for (const priority of [0, 6, 2.5, '4', null, -1]) {
      const r = await h.call('POST', `/v1/definitions/${defId}/runs`, { body: { priority }, token: KEYS.b });
      expect({ priority, status: r.status, code: r.body.error?.code }).toEqual({ priority, status: 400, code: 'ValidationFailed' });
      expect(r.body.error.details.map((d: { key: string }) => d.key)).toEqual(['priority']);
    }
    const n = await h.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM runs WHERE definition_id = $1`, [defId]);
    expect(n.rows[0]!.n).toBe(0);
  });
});

describe('MAX_PENDING_RUNS', () => {
  it("answers 429 BacklogFull with Retry-After past the tenant's Pending runs, replays still answer, and a freed place starts again", async () => {
    const defId = await createDefinition(h, lineGraph(), 'backlog');
    const first = await h.call('POST', `/v1/definitions/${defId}/runs`, { body: { requestId: 'b-1' } });
    const second = await h.call('POST', `/v1/definitions/${defId}/runs`, { body: {} });
    expect([first.status, second.status]).toEqual([202, 202]);
    const refused = await h.call('POST', `/v1/definitions/${defId}/runs`, { body: { priority: 5 } });
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('BacklogFull');
    expect(refused.body.error.message).toContain('MAX_PENDING_RUNS');
    expect(refused.res.headers.get('retry-after')).toBe('7');
    // nothing of the refused start was kept
    const count = async () => (await h.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM runs WHERE definition_id = $1`, [defId])).rows[0]!.n;
    expect(await count()).toBe(2);
    // a replay of a run that exists is answered as ever
    const replay = await h.call('POST', `/v1/definitions/${defId}/runs`, { body: { requestId: 'b-1' } });
    expect(replay.status).toBe(202);
    expect(replay.body.runId).toBe(first.body.runId);
    // another tenant has its own bound (here none)
    const otherDef = await createDefinition(h, lineGraph(), 'backlog-b', KEYS.b);
    for (let i = 0; i < 3; i++) expect((await h.call('POST', `/v1/definitions/${otherDef}/runs`, { body: {}, token: KEYS.b })).status).toBe(202);
    // runs that started (or ended) no longer count: the tenant may start again
    await h.db.pool.query(`UPDATE runs SET status = 'Running' WHERE id = $1`, [second.body.runId]);
    expect((await h.call('POST', `/v1/definitions/${defId}/runs`, { body: {} })).status).toBe(202);
    expect((await h.call('POST', `/v1/definitions/${defId}/runs`, { body: {} })).status).toBe(429);
    expect(await count()).toBe(3);
  });
});
