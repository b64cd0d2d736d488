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
});
