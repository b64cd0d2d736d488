import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@flowline/testing';
import { createHarness, runStatuses, SHARD_COUNT, toolChain, type Harness } from '../../../services/dispatcher/test/harness';
import { startToolWorker } from '../tool-worker';

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
    await second.stop();
  });

  it("takes the shards of a peer whose liveness lock is gone at once, long before its lease would run out", async () => {
    // a minute-long lease: only the liveness lock can move the shards within the test's time
    const slow = { SHARD_LEASE_MS: '60000', DISPATCHER_LIVENESS_PROBE_MS: '200' };
    const first = await h.startDispatcher('lively-first', slow);
    expect(first.ownedShards()).toHaveLength(SHARD_COUNT);
    const second = await h.startDispatcher('lively-second', slow);
    expect(second.ownedShards()).toHaveLength(0);
    // halt: no lease released, but the process's session (and its lock) ends as a killed one's would
    await first.halt();
    const runIds = await h.createRuns(toolChain('echo', { after: 'liveness' }), [{ a: 1 }, { a: 2 }]);
    await waitFor(() => second.ownedShards().length === SHARD_COUNT, { timeoutMs: 10_000, description: 'second owns all shards' });
    await waitFor(
      async () => [...(await runStatuses(h.db, runIds)).values()].every((s) => s === 'Completed'),
      { timeoutMs: 20_000, description: 'runs completed by the survivor' },
    );
    await second.stop();
  });

  it('settles a job that completed while nobody owned its shard from the job return value, without running it again', async () => {
    const owner = await h.startDispatcher('owner');
    expect(owner.ownedShards()).toHaveLength(SHARD_COUNT);
    const [runId] = await h.createRuns(toolChain('wait', { ms: 800 }), [{ b: 1 }]);
    await waitFor(
      async () =>
        (await h.db.pool.query(`select 1 from node_runs where run_id = $1 and node_key = 'tool' and status = 'Running'`, [runId]))
          .rowCount === 1,
      { timeoutMs: 15_000, description: 'tool node running' },
    );
    await owner.halt();
    // The job finishes while the shard has no live owner: its completion event reaches no owner.
    await waitFor(
      async () => (await h.conn.hget(`${h.redis.prefix}:node.tool:${await invocationOf(runId!)}`, 'finishedOn')) !== null,
      { timeoutMs: 15_000, description: 'job finished' },
    );
    await h.startDispatcher('heir');
    await waitFor(async () => (await runStatuses(h.db, [runId!])).get(runId!) === 'Completed', {
      timeoutMs: 20_000,
      description: 'run completed by the heir',
    });
    const tool = await h.db.pool.query<{ attempt: number; status: string }>(
      `select attempt, status from node_runs where run_id = $1 and node_key = 'tool'`,
      [runId],
    );
    expect(tool.rows[0]).toEqual({ attempt: 1, status: 'Succeeded' });
  });

  async function invocationOf(runId: string): Promise<string> {
    const r = await h.db.pool.query<{ invocation_id: string }>(
      `select invocation_id from node_runs where run_id = $1 and node_key = 'tool'`,
      [runId],
    );
    return r.rows[0]!.invocation_id;
  }
});
