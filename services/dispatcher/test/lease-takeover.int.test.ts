import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@flowline/testing';
import { createHarness, runStatuses, SHARD_COUNT, startToolWorker, toolChain, type Harness } from './harness';

describe('shard lease takeover', () => {
  let h: Harness;
  let stopWorker: () => Promise<void>;

  beforeAll(async () => {
    h = await createHarness();
    stopWorker = await startToolWorker(h);
  });

  afterAll(async () => {
    await stopWorker?.();
    await h?.close();
  });

  it('hands every shard of a dispatcher that stopped heartbeating to the survivor, which completes its runs', async () => {
    const first = await h.startDispatcher('first');
    expect(first.ownedShards()).toHaveLength(SHARD_COUNT);
    const second = await h.startDispatcher('second');
    await first.halt();
    const runIds = await h.createRuns(toolChain('echo', { after: 'takeover' }), [{ a: 1 }, { a: 2 }, { a: 3 }]);
    await waitFor(() => second.ownedShards().length === SHARD_COUNT, { timeoutMs: 15_000, description: 'second owns all shards' });
    await waitFor(
      async () => [...(await runStatuses(h.db, runIds)).values()].every((s) => s === 'Completed'),
      { timeoutMs: 20_000, description: 'runs completed by the survivor' },
    );
    const owners = await h.db.pool.query<{ owner: string }>('select distinct owner from shard_leases where expires_at > now()');
    expect(owners.rows.map((r) => r.owner)).toEqual(['second']);
  });
});
