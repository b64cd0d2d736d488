import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@flowline/testing';
import { createHarness, runStatuses, toolChain, type Harness } from '../../../services/dispatcher/test/harness';
import { startToolWorker } from '../tool-worker';

describe('dispatcher with a tool worker', () => {
  let h: Harness;
  let stopWorker: () => Promise<void>;

  beforeAll(async () => {
    h = await createHarness();
    stopWorker = await startToolWorker(h);
    await h.startDispatcher('d1');
  });

  afterAll(async () => {
    await stopWorker?.();
    await h?.close();
  });

  it('completes a Start → Tool(echo) → End run and records the echoed output', async () => {
    const [runId] = await h.createRuns(toolChain('echo', { hello: 'world' }), [{ n: 1 }]);
    await waitFor(async () => (await runStatuses(h.db, [runId!])).get(runId!) === 'Completed', {
      timeoutMs: 20_000,
      description: 'run completed',
    });
    const tool = await h.db.pool.query<{ status: string; attempt: number; output: { output: unknown } }>(
      `select status, attempt, output from node_runs where run_id = $1 and node_key = 'tool'`,
      [runId],
    );
    expect(tool.rows[0]).toMatchObject({ status: 'Succeeded', attempt: 1 });
    expect(tool.rows[0]!.output.output).toEqual({ result: { hello: 'world' } });
    const events = await h.db.pool.query<{ seq: number; kind: string }>('select seq, kind from events where run_id = $1 order by seq', [runId]);
    expect(events.rows.map((e) => e.seq)).toEqual(events.rows.map((_, i) => i + 1));
    expect(events.rows.map((e) => e.kind)).toContain('run.completed');
  });
});
