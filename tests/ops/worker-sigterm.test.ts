/**
 * SIGTERM to a real tool worker while its job runs loses nothing and exits 0 within its
 * grace: a call that ends within SHUTDOWN_GRACE_MS finishes and its result settles the node
 * (attempt 1); a call still running at the grace's end is interrupted, reported as
 * `Interrupted`, and retried on another worker, so the run completes either way.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { nodeOf, startE2eCluster, waitThenEcho, type E2eCluster } from '@flowline/testing';

const GRACE_MS = 3000;
/** the worker's own bound on its stop: the grace, then the process-wide deadline (main.ts) */
const EXIT_WITHIN_MS = GRACE_MS + 10_000;

describe('SIGTERM to a tool worker mid-job', () => {
  let c: E2eCluster;
  let n = 1;

  beforeAll(async () => {
    c = await startE2eCluster({ dispatchers: 1, toolWorkers: 1, env: { SHUTDOWN_GRACE_MS: String(GRACE_MS), WORKER_LOCK_MS: '3000' } });
  }, 90_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') process.stdout.write(`${c.lines.slice(-60).join('\n')}\n`);
  });

  afterAll(async () => {
    await c?.close();
  });

  /** SIGTERMs the worker holding the run's `slow` job; resolves with its exit code and how long it took. */
  async function terminateMidJob(runId: string): Promise<{ code: number | null; ms: number }> {
    await c.api.waitForRun(runId, (v) => nodeOf(v, 'slow')?.status === 'Running', 30_000, 'slow node running');
    const label = `worker-tool-${n}`;
    const p = c.cluster.processes.get(label)!;
    // the next worker, to take what the stopping one leaves
    c.cluster.launch({ label: `worker-tool-${++n}`, service: 'worker-tool' });
    const at = Date.now();
    p.proc.kill('SIGTERM');
    const code = await p.exited;
    return { code, ms: Date.now() - at };
  }

  it('lets a call that ends within the grace finish: the node succeeds on its first attempt, exit 0', async () => {
    const definitionId = await c.api.createDefinition('sigterm-short', waitThenEcho(1500, 3));
    const runId = await c.api.startRun(definitionId, {});
    const exit = await terminateMidJob(runId);
    expect(exit.code).toBe(0);
    expect(exit.ms).toBeLessThan(EXIT_WITHIN_MS);
    const done = await c.api.waitForRun(runId, (v) => v.run.status === 'Completed', 40_000, 'run completed');
    expect(nodeOf(done, 'slow')).toMatchObject({ status: 'Succeeded', attempt: 1 });
  }, 80_000);

  it('interrupts a call past the grace, retries it on another worker and completes the run, exit 0', async () => {
    const definitionId = await c.api.createDefinition('sigterm-long', waitThenEcho(GRACE_MS + 4000, 3));
    const runId = await c.api.startRun(definitionId, {});
    const exit = await terminateMidJob(runId);
    expect(exit.code).toBe(0);
    expect(exit.ms).toBeLessThan(EXIT_WITHIN_MS);
    const done = await c.api.waitForRun(runId, (v) => v.run.status === 'Completed', 60_000, 'run completed');
    expect(nodeOf(done, 'slow')).toMatchObject({ status: 'Succeeded', attempt: 2 });
    const kinds = (await c.api.events(runId)).filter((e) => e.nodeKey === 'slow').map((e) => e.kind);
    expect(kinds.filter((k) => k === 'node.interrupted')).toHaveLength(1);
    expect(kinds.filter((k) => k === 'node.retried')).toHaveLength(1);
  }, 100_000);
});
