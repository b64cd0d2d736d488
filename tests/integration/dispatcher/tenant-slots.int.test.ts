import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@flowline/testing';
import type { Graph } from '@flowline/graph';
import { createHarness, edge, node, runStatuses, toolChain, type Harness } from '../../../services/dispatcher/test/harness';
import { startToolWorker } from '../tool-worker';

describe('per-tenant run slots', () => {
  let h: Harness;
  let stopWorker: () => Promise<void>;

  beforeAll(async () => {
    h = await createHarness();
    stopWorker = await startToolWorker(h, 16);
    await h.startDispatcher('d1', { MAX_CONCURRENT_RUNS: '2' });
  });

  afterAll(async () => {
    await stopWorker?.();
    await h?.close();
  });

  it('runs at most MAX_CONCURRENT_RUNS runs of a tenant at once and starts the others as slots free', async () => {
    const runIds = await h.createRuns(toolChain('wait', { ms: 200 }), Array.from({ length: 6 }, (_, i) => ({ i })));
    await waitFor(async () => [...(await runStatuses(h.db, runIds)).values()].every((s) => s === 'Completed'), {
      timeoutMs: 30_000,
      intervalMs: 100,
      description: 'every run completed',
    });
    // Replay run.started / run.completed in commit-time order: live runs never exceed the limit.
    const ev = await h.db.pool.query<{ kind: string }>(
      `select kind from events where run_id = any($1::uuid[]) and kind in ('run.started', 'run.completed') order by at, kind desc`,
      [runIds],
    );
    let live = 0;
    let peak = 0;
    for (const e of ev.rows) {
      live += e.kind === 'run.started' ? 1 : -1;
      peak = Math.max(peak, live);
    }
    expect(ev.rows).toHaveLength(12);
    expect(peak).toBeLessThanOrEqual(2);
  });

  it('gives no slot to a run parked on a person: with both slots held by Pause gates, a third run still completes', async () => {
    const gated: Graph = {
      ...toolChain(),
      nodes: [node('start', 'Start', {}), node('gate', 'Pause', {}), node('end', 'End', { outcome: 'done' })],
      edges: [edge('start', 'gate'), edge('gate', 'end')],
    };
    const parked = await h.createRuns(gated, [{ p: 1 }, { p: 2 }]);
    await waitFor(async () => [...(await runStatuses(h.db, parked)).values()].every((s) => s === 'WaitingForApproval'), {
      timeoutMs: 15_000,
      intervalMs: 100,
      description: 'both gated runs parked',
    });
    const [free] = await h.createRuns(toolChain(), [{ free: true }]);
    await waitFor(async () => (await runStatuses(h.db, [free!])).get(free!) === 'Completed', {
      timeoutMs: 15_000,
      intervalMs: 100,
      description: 'the third run completed while two runs wait on a person',
    });
    expect([...(await runStatuses(h.db, parked)).values()]).toEqual(['WaitingForApproval', 'WaitingForApproval']);
  });
});
