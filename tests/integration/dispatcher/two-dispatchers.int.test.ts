import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@flowline/testing';
import { createHarness, runStatuses, startMismatches, toolChain, type Harness } from '../../../services/dispatcher/test/harness';
import { startToolWorker } from '../tool-worker';

describe('two dispatchers sharing the shards', () => {
  let h: Harness;
  let stopWorker: () => Promise<void>;

  beforeAll(async () => {
    h = await createHarness();
    stopWorker = await startToolWorker(h, 50);
    await h.startDispatcher('d1');
    await h.startDispatcher('d2');
  });

  afterAll(async () => {
    await stopWorker?.();
    await h?.close();
  });

  it('drives 200 concurrent runs to a terminal state starting every node attempt exactly once', async () => {
    const inputs = Array.from({ length: 200 }, (_, i) => ({ i }));
    const runIds = await h.createRuns(toolChain('echo', { hello: 'many' }), inputs);
    await waitFor(
      async () => {
        const s = await runStatuses(h.db, runIds);
        return [...s.values()].every((v) => v === 'Completed');
      },
      { timeoutMs: 60_000, intervalMs: 250, description: '200 runs completed' },
    );
    expect(await startMismatches(h.db, runIds)).toEqual([]);
    const attempts = await h.db.pool.query<{ n: number }>(
      `select count(*)::int as n from node_runs where run_id = any($1::uuid[]) and node_key = 'tool' and attempt = 1 and status = 'Succeeded'`,
      [runIds],
    );
    expect(attempts.rows[0]!.n).toBe(200);
  }, 90_000);
});
