/**
 * Issue #19: a worker's report reaches only the dispatcher owning its run's shard (one wake
 * channel per shard, joined on gain, left on loss), so the cost of a hop does not grow with
 * the number of dispatchers; and a shard handed over keeps its runs moving on reports.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@flowline/testing';
import { createHarness, runStatuses, SHARD_COUNT, toolChainOf, type Harness } from '../../../services/dispatcher/test/harness';
import type { Dispatcher } from '../../../services/dispatcher/src/dispatcher';
import { startToolWorker } from '../tool-worker';

describe('wake routing by shard', () => {
  let h: Harness;
  let stopWorker: () => Promise<void>;

  beforeAll(async () => {
    h = await createHarness();
    stopWorker = await startToolWorker(h, 16);
  });

  afterAll(async () => {
    await stopWorker?.();
    await h?.close();
  });

  const allCompleted = async (runIds: string[]) => [...(await runStatuses(h.db, runIds)).values()].every((s) => s === 'Completed');

  it('delivers each report only to the owner of its run shard, and keeps runs moving on reports across a hand-off', async () => {
    const d1 = await h.startDispatcher('d1');
    const d2 = await h.startDispatcher('d2');
    const settled = () =>
      d1.ownedShards().length === SHARD_COUNT / 2 &&
      d2.ownedShards().length === SHARD_COUNT / 2 &&
      new Set([...d1.ownedShards(), ...d2.ownedShards()]).size === SHARD_COUNT;
    await waitFor(settled, { timeoutMs: 15_000, description: 'shards split between d1 and d2' });
    const before = (d: Dispatcher) => ({ ...d.totals() });
    const b1 = before(d1);
    const b2 = before(d2);

    // 30 runs of three tool nodes: about 90 outcome reports, spread over both dispatchers' shards
    const runIds = await h.createRuns(toolChainOf(3, 'echo', { routed: true }), Array.from({ length: 30 }, (_, i) => ({ i })));
    await waitFor(() => allCompleted(runIds), { timeoutMs: 30_000, intervalMs: 100, description: '30 runs completed' });
    expect(settled()).toBe(true);
    const a1 = d1.totals();
    const a2 = d2.totals();
    // both worked (their shards hold runs) …
    expect(a1.wakesReceived - b1.wakesReceived).toBeGreaterThan(0);
    expect(a2.wakesReceived - b2.wakesReceived).toBeGreaterThan(0);
    // … and neither received a single message about the other's runs (one channel for all: about half of them)
    expect(a1.wakesForeign - b1.wakesForeign).toBe(0);
    expect(a2.wakesForeign - b2.wakesForeign).toBe(0);

    // hand-off: d2 leaves, d1 gains its shards and must hear their reports from now on
    await d2.stop();
    await waitFor(() => d1.ownedShards().length === SHARD_COUNT, { timeoutMs: 15_000, description: 'd1 owns every shard' });
    await new Promise((r) => setTimeout(r, 300)); // the gained shards' reconcile ran
    const c1 = d1.totals();
    const later = await h.createRuns(toolChainOf(3, 'echo', { handedOver: true }), Array.from({ length: 30 }, (_, i) => ({ i })));
    await waitFor(() => allCompleted(later), { timeoutMs: 30_000, intervalMs: 100, description: '30 runs completed after the hand-off' });
    const e1 = d1.totals();
    expect(e1.wakesForeign - c1.wakesForeign).toBe(0);
    // every run's creation wake and its three outcome reports reached d1, those of d2's former
    // shards included (without joining their channels on gain, about half would be missing)
    expect(e1.wakesReceived - c1.wakesReceived).toBeGreaterThanOrEqual(later.length * 4);
  }, 90_000);
});
