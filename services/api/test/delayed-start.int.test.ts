/**
 * Delayed starts through the real app on real Postgres and Redis: `startAt` / `delay` on run
 * creation make a Scheduled run with `notBefore` and `wake_at` at that time (no slot, not in the
 * Pending backlog), `POST /v1/runs/{id}/reschedule` moves it (409 once it is not Scheduled), and a
 * cancel ends it. The release at `notBefore` is the dispatcher's (services/dispatcher/test).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, createDefinition, lineGraph, startHarness, type Harness } from './harness';

let h: Harness;
let defId: string;
beforeAll(async () => {
  h = await startHarness({ maxPendingRuns: () => 1 });
  defId = await createDefinition(h, lineGraph(), 'delayed');
});
afterAll(async () => {
  await h.close();
});

const row = async (id: string) =>
  (await h.db.pool.query<{ status: string; not_before: Date | null; wake_at: Date | null }>(`SELECT status, not_before, wake_at FROM runs WHERE id = $1`, [id])).rows[0]!;

describe('a delayed start on run creation', () => {
  it('reads Scheduled with notBefore = startAt, woken at that time, and is not counted by the Pending backlog', async () => {
    const startAt = new Date(Date.now() + 3_600_000).toISOString();
    const r = await h.call('POST', `/v1/definitions/${defId}/runs`, { body: { startAt } });
    expect(r.status).toBe(202);
    const run = (await h.call('GET', `/v1/runs/${r.body.runId}`)).body.run;
    expect(run).toMatchObject({ status: 'Scheduled', notBefore: startAt, startedAt: null, scheduleId: null });
    expect((await row(r.body.runId)).wake_at?.toISOString()).toBe(startAt);
    const created = (await h.call('GET', `/v1/runs/${r.body.runId}/events`)).body.events[0];
    expect(created).toMatchObject({ kind: 'run.created', detail: { notBefore: startAt } });
    // MAX_PENDING_RUNS is 1 here: a Scheduled run holds no place in it
    const immediate = await h.call('POST', `/v1/definitions/${defId}/runs`, { body: {} });
    expect(immediate.status).toBe(202);
    expect((await row(immediate.body.runId)).status).toBe('Pending');
    await h.db.pool.query(`UPDATE runs SET status = 'Cancelled' WHERE id = $1`, [immediate.body.runId]);
  });

  it('counts delay from now, and a startAt already past starts the run at once (Pending)', async () => {
    const before = Date.now();
    const r = await h.call('POST', `/v1/definitions/${defId}/runs`, { body: { delay: 'PT10M' } });
    const nb = (await row(r.body.runId)).not_before!.getTime();
    expect(nb).toBeGreaterThanOrEqual(before + 600_000);
    expect(nb).toBeLessThan(Date.now() + 600_000 + 1);
    const past = await h.call('POST', `/v1/definitions/${defId}/runs`, { body: { startAt: '2020-01-01T00:00:00Z' } });
    expect(await row(past.body.runId)).toMatchObject({ status: 'Pending', not_before: null });
    await h.db.pool.query(`UPDATE runs SET status = 'Cancelled' WHERE id = $1`, [past.body.runId]);
  });

  it('refuses both members, a malformed one, or one past MAX_START_DELAY_DAYS: 400 keyed, nothing created', async () => {
    const before = (await h.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM runs`)).rows[0]!.n;
    for (const [body, key] of [
      [{ startAt: '2030-01-01T00:00:00Z', delay: 'PT1M' }, 'startAt'],
      [{ startAt: 'tomorrow' }, 'startAt'],
      [{ delay: 'P1M' }, 'delay'],
      [{ delay: 'P400D' }, 'delay'],
    ] as const) {
      const r = await h.call('POST', `/v1/definitions/${defId}/runs`, { body });
      expect({ body, status: r.status, code: r.body.error?.code, key: r.body.error?.details?.[0]?.key }).toEqual({ body, status: 400, code: 'ValidationFailed', key });
    }
    expect((await h.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM runs`)).rows[0]!.n).toBe(before);
  });
});

describe('a delayed fork', () => {
  it('forks a run as a delayed start (Scheduled with notBefore), and refuses a bad delay with 400 keyed', async () => {
    const source = await h.call('POST', `/v1/definitions/${defId}/runs`, { body: {} });
    const fork = await h.call('POST', `/v1/runs/${source.body.runId}/fork`, { body: { fromNodeKey: 'start', delay: 'PT2H' } });
    expect(fork.status).toBe(202);
    const r = await row(fork.body.runId);
    expect(r.status).toBe('Scheduled');
    expect(r.wake_at).toEqual(r.not_before);
    expect(r.not_before!.getTime()).toBeGreaterThan(Date.now() + 7_000_000);
    const bad = await h.call('POST', `/v1/runs/${source.body.runId}/fork`, { body: { fromNodeKey: 'start', delay: 'soon' } });
    expect([bad.status, bad.body.error.details[0].key]).toEqual([400, 'delay']);
    await h.db.pool.query(`UPDATE runs SET status = 'Cancelled' WHERE id = ANY($1::uuid[])`, [[source.body.runId, fork.body.runId]]);
  });
});

describe('POST /v1/runs/{id}/reschedule', () => {
  it('moves a Scheduled run (notBefore and wake_at), releases it at once for a past time, and 409 once it is not Scheduled', async () => {
    const r = await h.call('POST', `/v1/definitions/${defId}/runs`, { body: { delay: 'PT1H' } });
    const later = new Date(Date.now() + 7_200_000).toISOString();
    const moved = await h.call('POST', `/v1/runs/${r.body.runId}/reschedule`, { body: { startAt: later } });
    expect(moved.status).toBe(200);
    expect(moved.body).toEqual({ runId: r.body.runId, notBefore: later });
    expect(await row(r.body.runId)).toMatchObject({ status: 'Scheduled', not_before: new Date(later), wake_at: new Date(later) });
    const now = await h.call('POST', `/v1/runs/${r.body.runId}/reschedule`, { body: { startAt: '2020-01-01T00:00:00Z' } });
    expect(now.status).toBe(200);
    expect(Date.parse(now.body.notBefore)).toBeGreaterThan(Date.now() - 60_000);
    await h.db.pool.query(`UPDATE runs SET status = 'Pending' WHERE id = $1`, [r.body.runId]);
    const refused = await h.call('POST', `/v1/runs/${r.body.runId}/reschedule`, { body: { delay: 'PT1M' } });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'RunStateConflict', message: expect.stringContaining('Pending') });
    await h.db.pool.query(`UPDATE runs SET status = 'Cancelled' WHERE id = $1`, [r.body.runId]);
  });

  it('answers 404 for an unknown run or another tenant’s, and 400 without a time', async () => {
    const r = await h.call('POST', `/v1/definitions/${defId}/runs`, { body: { delay: 'PT1H' } });
    expect((await h.call('POST', `/v1/runs/00000000-0000-4000-8000-000000000000/reschedule`, { body: { delay: 'PT1M' } })).status).toBe(404);
    expect((await h.call('POST', `/v1/runs/${r.body.runId}/reschedule`, { body: { delay: 'PT1M' }, token: KEYS.b })).status).toBe(404);
    const empty = await h.call('POST', `/v1/runs/${r.body.runId}/reschedule`, { body: {} });
    expect([empty.status, empty.body.error.code]).toEqual([400, 'ValidationFailed']);
  });

  it('cancels a Scheduled run: it leaves Scheduled at once, and reschedule then answers 409', async () => {
    const r = await h.call('POST', `/v1/definitions/${defId}/runs`, { body: { delay: 'PT1H' } });
    expect((await h.call('POST', `/v1/runs/${r.body.runId}/cancel`, { body: {} })).status).toBe(202);
    expect((await row(r.body.runId)).status).toBe('Cancelling');
    expect((await h.call('POST', `/v1/runs/${r.body.runId}/reschedule`, { body: { delay: 'PT1M' } })).status).toBe(409);
  });

  it('lists Scheduled runs by status', async () => {
    const list = await h.call('GET', `/v1/runs?status=Scheduled&definitionId=${defId}`);
    expect(list.status).toBe(200);
    expect(list.body.items.length).toBeGreaterThan(0);
    expect(list.body.items.every((x: { status: string }) => x.status === 'Scheduled')).toBe(true);
  });
});
