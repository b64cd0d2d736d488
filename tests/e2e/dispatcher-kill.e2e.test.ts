import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { nodeOf, startE2eCluster, type E2eCluster, waitThenEcho } from '@flowline/testing';

describe('a dispatcher killed mid-run', () => {
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

  it('hands its shards to the surviving dispatcher, which completes the run', async () => {
    const definitionId = await c.api.createDefinition('slow', waitThenEcho(3000));
    const runId = await c.api.startRun(definitionId, {});
    await c.api.waitForRun(runId, (v) => nodeOf(v, 'slow')?.status === 'Running', 30_000, 'slow node running');
    const { killed } = await c.killRunOwner(runId);
    expect(killed).toMatch(/^dispatcher-[12]$/);
    const done = await c.api.waitForRun(runId, (v) => v.run.status === 'Completed', 30_000, 'run completed');
    expect(nodeOf(done, 'slow')).toMatchObject({ status: 'Succeeded', attempt: 1 });
    expect(nodeOf(done, 'echo')).toMatchObject({ status: 'Succeeded', attempt: 1 });
  }, 60_000);
});
