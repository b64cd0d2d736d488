/**
 * Delayed starts in the dispatcher, on real Postgres and Redis: a Scheduled run is released by
 * the due sweep at its `notBefore` (its `wake_at`), not before, and then admitted like any
 * Pending run (fair share); while it waits no tick writes it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setRunPaused } from '@flowline/db';
import { waitFor } from '@flowline/testing';
import { createHarness, edge, graphOf, node, toolChain, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

const startEnd = () => graphOf([node('start', 'Start', {}), node('end', 'End', { outcome: 'done' })], [edge('start', 'end')]);
const runRow = async (id: string) =>
  (await h.db.pool.query<{ status: string; version: number; not_before: Date; started_at: Date | null }>(`SELECT status, version, not_before, started_at FROM runs WHERE id = $1`, [id])).rows[0]!;

describe('a delayed start', () => {
  it('stays Scheduled and unwritten until notBefore, then starts within a sweep of it', async () => {
    const d = await h.startDispatcher('d-delay-1');
    const notBefore = Date.now() + 1_500;
    const [id] = await h.createRuns(startEnd(), [{}], undefined, [], { notBefore });
    const first = await runRow(id!);
    expect(first.status).toBe('Scheduled');
    // several sweeps pass while it waits: nothing rewrites it
    await new Promise((r) => setTimeout(r, 800));
    expect(await runRow(id!)).toMatchObject({ status: 'Scheduled', version: first.version });
    await waitFor(async () => (await runRow(id!)).status === 'Completed', { timeoutMs: 10_000 });
    const done = await runRow(id!);
    expect(done.started_at!.getTime()).toBeGreaterThanOrEqual(notBefore);
    expect(done.started_at!.getTime() - notBefore).toBeLessThan(1_000);
    await d.stop();
  }, 20_000);

  it('goes back to sleep until notBefore after an early wake (a pause writes wake_at = now): no busy loop, still Scheduled', async () => {
    const d = await h.startDispatcher('d-delay-3');
    const notBefore = Date.now() + 3_600_000;
    const [id] = await h.createRuns(startEnd(), [{}], undefined, [], { notBefore });
    expect(await setRunPaused(h.db.pool, 'default', id!, true)).not.toBeNull();
    const wake = async () => (await h.db.pool.query<{ wake_at: Date | null; status: string; paused: boolean }>(`SELECT wake_at, status, paused FROM runs WHERE id = $1`, [id])).rows[0]!;
    expect((await wake()).wake_at!.getTime()).toBeLessThan(notBefore);
    await waitFor(async () => (await wake()).wake_at?.getTime() === notBefore, { timeoutMs: 10_000, description: 'wake_at back at notBefore' });
    expect(await wake()).toMatchObject({ status: 'Scheduled', paused: true });
    await d.stop();
  }, 20_000);

  it('becomes an ordinary Pending run at notBefore when the tenant has no run slot, and starts once one frees', async () => {
    await h.startDispatcher('d-delay-2', { MAX_CONCURRENT_RUNS: '1' });
    const tenant = 'fair';
    // the tenant's one run slot is held by a run that reads Running: a Tool node no worker here
    // takes keeps it Running even when the dispatcher ticks it (a Start → End one could complete)
    const [holder] = await h.createRuns(toolChain(), [{}], tenant, [], { notBefore: Date.now() + 3_600_000 });
    await h.db.pool.query(`UPDATE runs SET status = 'Running', wake_at = NULL, version = version + 1 WHERE id = $1`, [holder]);
    const [id] = await h.createRuns(startEnd(), [{}], tenant, [], { notBefore: Date.now() + 300 });
    await waitFor(async () => (await runRow(id!)).status === 'Pending', { timeoutMs: 10_000 });
    await new Promise((r) => setTimeout(r, 500));
    expect((await runRow(id!)).status).toBe('Pending');
    await h.db.pool.query(`UPDATE runs SET status = 'Cancelled', wake_at = NULL, version = version + 1 WHERE id = $1`, [holder]);
    await waitFor(async () => (await runRow(id!)).status === 'Completed', { timeoutMs: 10_000 });
  }, 30_000);
});
