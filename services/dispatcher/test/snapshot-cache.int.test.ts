import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plan, type PlanContext, type WorkResult } from '@flowline/graph';
import { applyPlans, loadSnapshots, type LoadedSnapshot } from '@flowline/db';
import { coreOptionsOf, dispatcherConfigSchema } from '../src/config';
import { committedState } from '../src/snapshot-cache';
import { createHarness, edge, graphOf, node, SHARD_COUNT, toolChainOf, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

const options = coreOptionsOf(dispatcherConfigSchema.parse({}));
const load = async (id: string) => (await loadSnapshots(h.db.pool, [id], { maxConcurrentRuns: 100 }))[0]!;

/** Plans `loaded` with `results` attached, commits it, and returns what the cache would hold. */
async function tick(loaded: LoadedSnapshot, results: WorkResult[]) {
  const planned = { ...loaded, results: [...loaded.results, ...results] };
  const ctx: PlanContext = { now: Date.now(), options, newId: randomUUID };
  const result = plan(planned, ctx);
  const out = await applyPlans(h.db.pool, [{ snapshot: planned, plan: result }], { shardCount: SHARD_COUNT });
  expect(out.conflicted).toEqual([]);
  return { result, cached: committedState(loaded, planned, result, out.applied.length === 1) };
}

describe('the snapshot cache', () => {
  it('holds exactly what the store reads back after each committed tick of a tool chain', async () => {
    const [id] = await h.createRuns(toolChainOf(3), [{ n: 1 }]);
    let current = await load(id!);
    let ticks = 0;
    for (;;) {
      const queued = current.nodes.filter((n) => n.status === 'Queued' && n.invocationId);
      const results: WorkResult[] = queued.map((n) => ({
        invocationId: n.invocationId!,
        nodeKey: n.nodeKey,
        outcome: { ok: true, output: { result: { step: n.nodeKey } }, startedAt: Date.now(), finishedAt: Date.now() },
      }));
      const { cached } = await tick(current, results);
      ticks++;
      const stored = await load(id!);
      if (stored.run.status === 'Completed') {
        expect(cached).toBeNull();
        break;
      }
      expect(cached).toEqual(stored);
      current = cached!;
      expect(ticks).toBeLessThan(10);
    }
    expect(ticks).toBeGreaterThanOrEqual(4);
  });

  it('keeps nothing for a Pending run, whose tenant slot is counted only at load', async () => {
    const [id] = await h.createRuns(toolChainOf(1), [{ n: 2 }]);
    const loaded = { ...(await load(id!)), runSlotAvailable: false };
    const ctx: PlanContext = { now: Date.now(), options, newId: randomUUID };
    const result = plan(loaded, ctx);
    expect(committedState(loaded, loaded, result, false)).toBeNull();
  });

  it('keeps nothing while an intent the plan left unconsumed stays in the store', async () => {
    const [id] = await h.createRuns(toolChainOf(1), [{ n: 3 }]);
    const loaded = await load(id!);
    const withIntent: LoadedSnapshot = { ...loaded, intents: [{ id: randomUUID(), kind: 'cancel', reason: null }] };
    const ctx: PlanContext = { now: Date.now(), options, newId: randomUUID };
    const result = { ...plan(loaded, ctx), consumedIntentIds: [] };
    expect(committedState(withIntent, withIntent, result, true)).toBeNull();
  });

  it('keeps nothing for a run parked on a person: whatever wakes it drops the entry, so it would only hold memory', async () => {
    const parked = graphOf(
      [node('start', 'Start', {}), node('gate', 'Pause', { prompt: 'Ship it?', allowedDecisions: ['Approve'] }), node('end', 'End', { outcome: 'done' })],
      [edge('start', 'gate'), { ...edge('gate', 'end'), condition: { path: 'output.decision', op: 'Eq', value: 'Approve' } }],
    );
    const [id] = await h.createRuns(parked, [{ n: 4 }]);
    const { cached } = await tick(await load(id!), []);
    const stored = await load(id!);
    expect(stored.run.status).toBe('WaitingForApproval');
    expect(stored.nodes.find((n) => n.nodeKey === 'gate')?.status).toBe('WaitingForApproval');
    expect(cached).toBeNull();
  });
});
