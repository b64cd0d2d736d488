import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { nodeOf, startE2eCluster, type E2eCluster, waitThenEcho } from '@flowline/testing';

describe('a tool worker killed mid-job', () => {
  let c: E2eCluster;

  beforeAll(async () => {
    // a short job lock (WORKER_LOCK_MS), so the dead worker's job is noticed within ~3 s
    c = await startE2eCluster({ dispatchers: 2, toolWorkers: 1, env: { WORKER_LOCK_MS: '3000' } });
  }, 90_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') process.stdout.write(`${c.lines.slice(-60).join('\n')}\n`);
  });

  afterAll(async () => {
    await c?.close();
  });

  it('fails the node as Interrupted and completes its retry on a surviving worker', async () => {
    const definitionId = await c.api.createDefinition('slow', waitThenEcho(4000, 3));
    const runId = await c.api.startRun(definitionId, {});
    // The only worker takes the job; a second one starts before the first dies.
    await c.api.waitForRun(runId, (v) => nodeOf(v, 'slow')?.status === 'Running', 30_000, 'slow node running');
    c.cluster.launch({ label: 'worker-tool-2', service: 'worker-tool' });
    await c.cluster.kill('worker-tool-1', 'SIGKILL');

    const done = await c.api.waitForRun(runId, (v) => v.run.status === 'Completed', 50_000, 'run completed');
    expect(nodeOf(done, 'slow')).toMatchObject({ status: 'Succeeded', attempt: 2 });
    const events = await c.api.events(runId);
    const slow = events.filter((e) => e.nodeKey === 'slow').map((e) => e.kind);
    expect(slow.filter((k) => k === 'node.started')).toHaveLength(2);
    expect(slow.filter((k) => k === 'node.interrupted')).toHaveLength(1);
    expect(slow.filter((k) => k === 'node.retried')).toHaveLength(1);
  }, 80_000);
});
