/**
 * Cancel that tells the truth, against the whole cluster as processes (API, two
 * dispatchers, one tool worker; real Postgres and Redis): the run reads Cancelling until
 * the worker confirms; a worker that cannot be reached (SIGSTOP) leaves a survivor that the
 * run's `run.cancelled` event names once CANCEL_DRAIN_GRACE_MS passed, and a retry of it
 * reopens the run.
 *
 * The grace stays below the time a stopped worker's BullMQ lock takes to lapse (5–10 s),
 * so the in-flight check cannot report the stopped job orphaned before the deadline.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { nodeOf, startE2eCluster, type E2eCluster } from '@flowline/testing';

const GRACE_MS = 2500;

let c: E2eCluster;
beforeAll(async () => {
  c = await startE2eCluster({ dispatchers: 2, toolWorkers: 1, env: { CANCEL_DRAIN_GRACE_MS: String(GRACE_MS) } });
}, 120_000);
afterEach((ctx) => {
  if (ctx.task.result?.state === 'fail') process.stdout.write(`${c.lines.slice(-60).join('\n')}\n`);
});
afterAll(async () => {
  const worker = c?.cluster.processes.get('worker-tool-1');
  if (worker && worker.proc.exitCode === null && worker.proc.signalCode === null) worker.proc.kill('SIGCONT');
  await c?.close();
});

interface EventView {
  seq: number;
  kind: string;
  nodeKey: string | null;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- event details are asserted field by field
  detail: any;
}


async function events(runId: string): Promise<EventView[]> {
  return (await c.api.send('GET', `/v1/runs/${runId}/events?limit=1000`)).body.events as EventView[];
}

/** Start → `slow` (wait `ms`, honours cancellation) → End. */
async function runningWait(ms: number): Promise<string> {
  const defId = await c.api.createDefinition(`wait-${ms}`, {
    nodes: [
      { key: 'start', kind: 'Start' },
      { key: 'slow', kind: 'Tool', config: { toolName: 'wait', arguments: { ms } } },
      { key: 'end', kind: 'End', config: { outcome: 'done' } },
    ],
    edges: [
      { key: 'e1', from: 'start', to: 'slow' },
      { key: 'e2', from: 'slow', to: 'end' },
    ],
  });
  const runId = await c.api.startRun(defId, {});
  await c.api.waitForRun(runId, (v) => nodeOf(v, 'slow')?.status === 'Running', 30_000, 'slow running');
  return runId;
}

describe('cancel drains live work', () => {
  it('reads Cancelling until the worker confirms the cancel, then Cancelled with no survivors', async () => {
    const runId = await runningWait(60_000);
    expect((await c.api.send('POST', `/v1/runs/${runId}/cancel`, { reason: 'operator stop' })).status).toBe(202);
    expect((await c.api.getRun(runId)).run.status).toMatch(/^(Cancelling|Cancelled)$/);
    expect((await c.api.send('POST', `/v1/runs/${runId}/cancel`, {})).status).toBe(202);
    const end = await c.api.waitForRun(runId, (v) => v.run.status === 'Cancelled', 30_000, 'run cancelled');
    expect(end.run).toMatchObject({ failureClass: 'Cancelled', reason: 'operator stop' });
    expect(nodeOf(end, 'slow')).toMatchObject({ status: 'Cancelled', failureClass: 'Cancelled', reason: 'run cancelled: operator stop' });
    expect(nodeOf(end, 'end')?.status).toBe('Pending');

    const ev = await events(runId);
    const queued = ev.find((e) => e.kind === 'node.queued' && e.nodeKey === 'slow')!;
    // the node was cancelled by its worker's outcome (the wait tool aborted), not by fiat
    const cancelled = ev.filter((e) => e.kind === 'node.cancelled' && e.nodeKey === 'slow');
    expect(cancelled).toHaveLength(1);
    expect(cancelled[0]!.detail).toEqual({
      reason: 'run cancelled: operator stop',
      confirmed: true,
      invocationId: queued.detail.invocationId,
      outcome: 'Cancelled',
    });
    const runCancelled = ev.filter((e) => e.kind === 'run.cancelled');
    expect(runCancelled).toHaveLength(1);
    expect(runCancelled[0]!.detail).toEqual({ reason: 'operator stop', survivors: [] });
    expect(cancelled[0]!.seq).toBeLessThan(runCancelled[0]!.seq);
    expect(ev.at(-1)!.kind).toBe('run.cancelled');
  }, 60_000);

  it('a cancel the stopped worker cannot confirm: Cancelling until the grace deadline, then Cancelled naming the survivor, and a retry reopens the run', async () => {
    const runId = await runningWait(6_000);
    const worker = c.cluster.processes.get('worker-tool-1')!;
    worker.proc.kill('SIGSTOP');
    let stopped = true;
    try {
      expect((await c.api.send('POST', `/v1/runs/${runId}/cancel`, { reason: 'unreachable' })).status).toBe(202);
      // the worker cannot answer: the run reads Cancelling, its node still Running
      const draining = await c.api.getRun(runId);
      expect(draining.run.status).toBe('Cancelling');
      expect(nodeOf(draining, 'slow')?.status).toBe('Running');

      const end = await c.api.waitForRun(runId, (v) => v.run.status === 'Cancelled', 30_000, 'run cancelled at the grace deadline');
      expect(end.run.failureClass).toBe('Cancelled');
      expect(end.run.reason).toMatch(/^unreachable; cancel not confirmed for 'slow'/);
      const slow = nodeOf(end, 'slow')!;
      expect(slow).toMatchObject({ status: 'Failed', failureClass: 'Interrupted', attempt: 1 });
      expect(slow.reason).toMatch(/^cancel not confirmed by the worker .*may still be running/);

      const ev = await events(runId);
      const invocationId = ev.find((e) => e.kind === 'node.queued' && e.nodeKey === 'slow')!.detail.invocationId as string;
      expect(ev.filter((e) => e.kind === 'run.cancelled').map((e) => e.detail)).toEqual([
        { reason: 'unreachable', survivors: [{ nodeKey: 'slow', invocationId }] },
      ]);
      expect(ev.find((e) => e.kind === 'node.failed' && e.nodeKey === 'slow')!.detail).toMatchObject({
        class: 'Interrupted',
        cancelUnconfirmed: true,
        invocationId,
      });
      // Cancelled with a survivor stays a refusal for anything but the survivor
      expect((await c.api.send('POST', `/v1/runs/${runId}/nodes/end/retry`)).status).toBe(409);

      worker.proc.kill('SIGCONT');
      stopped = false;
      expect((await c.api.send('POST', `/v1/runs/${runId}/nodes/slow/retry`)).status).toBe(202);
      const done = await c.api.waitForRun(runId, (v) => v.run.status === 'Completed', 40_000, 'reopened run completed');
      expect(nodeOf(done, 'slow')).toMatchObject({ status: 'Succeeded', attempt: 2 });
      const after = await events(runId);
      const resumed = after.find((e) => e.kind === 'run.resumed');
      expect(resumed?.detail).toEqual({ reopened: true, by: 'retry', from: 'Cancelled' });
      const kinds = after.map((e) => e.kind);
      expect(kinds.indexOf('run.cancelled')).toBeLessThan(kinds.indexOf('run.resumed'));
      expect(kinds.at(-1)).toBe('run.completed');
    } finally {
      if (stopped) worker.proc.kill('SIGCONT');
    }
  }, 90_000);
});
