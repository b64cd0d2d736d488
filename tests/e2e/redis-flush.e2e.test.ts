import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { nodeOf, startE2eCluster, type E2eCluster, waitThenEcho } from '@flowline/testing';

describe('Redis flushed mid-run', () => {
  let c: E2eCluster;

  beforeAll(async () => {
    c = await startE2eCluster({ dispatchers: 2, toolWorkers: 1 });
  }, 90_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') process.stdout.write(`${c.lines.slice(-60).join('\n')}\n`);
  });

  afterAll(async () => {
    await c?.close();
  });

  it('still completes the run: lost jobs are enqueued again from Postgres', async () => {
    const definitionId = await c.api.createDefinition('slow', waitThenEcho(2000));
    const runId = await c.api.startRun(definitionId, {});
    await c.api.waitForRun(runId, (v) => nodeOf(v, 'slow')?.status === 'Running', 30_000, 'slow node running');

    // This cluster's own redis-server: FLUSHALL disturbs no other test.
    await c.redis.flushall();

    const done = await c.api.waitForRun(runId, (v) => v.run.status === 'Completed', 40_000, 'run completed');
    expect(nodeOf(done, 'slow')?.status).toBe('Succeeded');
    expect(nodeOf(done, 'end')?.status).toBe('Succeeded');
  }, 60_000);

  // The whole machine room goes down mid-attempt: the worker holding the job dies and Redis loses
  // the job. The job is rebuilt from its committed row, so the same attempt number runs again
  // under the node's original maxAttempts: a crash never grants a node a fresh retry budget.
  it('repeats an in-flight attempt under its number and its original bound', async () => {
    const flaky = (untilAttempt: number) => ({
      schemaVersion: 1,
      nodes: [
        { key: 'start', kind: 'Start' },
        {
          key: 'flaky', kind: 'Tool', maxAttempts: 2, retryBackoff: { initialMs: 0 },
          config: { toolName: 'test_fail', arguments: { untilAttempt, ms: 3000 } },
        },
        { key: 'end', kind: 'End', config: { outcome: 'done' } },
      ],
      edges: [
        { key: 'e1', from: 'start', to: 'flaky' },
        { key: 'e2', from: 'flaky', to: 'end' },
      ],
    });
    const succeeds = await c.api.startRun(await c.api.createDefinition('flaky-2', flaky(2)), {});
    const exhausts = await c.api.startRun(await c.api.createDefinition('flaky-3', flaky(3)), {});
    const secondAttempt = (v: Parameters<typeof nodeOf>[0]) => nodeOf(v, 'flaky')?.status === 'Running' && nodeOf(v, 'flaky')?.attempt === 2;
    await c.api.waitForRun(succeeds, secondAttempt, 30_000, 'second attempt running');
    await c.api.waitForRun(exhausts, secondAttempt, 30_000, 'second attempt running');

    await c.cluster.kill('worker-tool-1', 'SIGKILL');
    await c.redis.flushall();
    c.cluster.launch({ label: 'worker-tool-2', service: 'worker-tool' });

    // attempt 2 runs again as attempt 2 and succeeds (untilAttempt 2)
    const done = await c.api.waitForRun(succeeds, (v) => v.run.status === 'Completed', 40_000, 'run completed');
    expect(nodeOf(done, 'flaky')).toMatchObject({ status: 'Succeeded', attempt: 2 });
    // attempt 2 is the last of two: it fails again and no third attempt is granted
    const failed = await c.api.waitForRun(exhausts, (v) => v.run.status === 'Failed', 40_000, 'run failed');
    expect(nodeOf(failed, 'flaky')).toMatchObject({ status: 'Failed', attempt: 2 });
    // repeated, not interrupted: the lost attempt is not counted as one of the two
    for (const runId of [succeeds, exhausts]) {
      const kinds = (await c.api.events(runId)).filter((e) => e.nodeKey === 'flaky').map((e) => e.kind);
      expect(kinds.filter((k) => k === 'node.interrupted')).toHaveLength(0);
      expect(kinds.filter((k) => k === 'node.retried')).toHaveLength(1);
    }
  }, 90_000);
});
