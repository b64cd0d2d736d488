import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getNodeRun, getRunDetail } from '@flowline/db';
import { JsonNumber, type JsonObject } from '@flowline/graph';
import { waitFor } from '@flowline/testing';
import { createHarness, routeOnInput, runStatuses, TENANT, toolChain, type Harness } from '../../../services/dispatcher/test/harness';
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

  it('carries a number written with an exponent through conditions, the tool and every node document in its own short form', async () => {
    const huge = new JsonNumber('1e131071');
    const graph = routeOnInput('x', 1e308);
    const [runId] = await h.createRuns(graph, [{ x: huge } as unknown as JsonObject]);
    await waitFor(async () => (await runStatuses(h.db, [runId!])).get(runId!) === 'Completed', { timeoutMs: 30_000, description: 'run completed' });
    expect((await getNodeRun(h.db.pool, runId!, 'lte'))!.status).toBe('Skipped');
    expect(((await getNodeRun(h.db.pool, runId!, 'tool'))!.output as { output: unknown }).output).toEqual({ result: { x: huge } });
    expect((await getRunDetail(h.db.pool, TENANT, runId!))!.output).toEqual({ outcome: 'gt', result: { x: huge } });
    // no stored document of the run spells the number out (131,072 digits)
    const sizes = await h.db.pool.query<{ n: number }>(
      `SELECT max(greatest(length(coalesce(input::text, '')), length(coalesce(output::text, '')))) AS n FROM node_runs WHERE run_id = $1
       UNION ALL SELECT greatest(length(input::text), length(coalesce(output::text, ''))) FROM runs WHERE id = $1`,
      [runId],
    );
    expect(Math.max(...sizes.rows.map((r) => r.n))).toBeLessThan(2_000);
  });
});
