import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Job } from 'bullmq';
import { requestCancel } from '@flowline/db';
import { closeLaneQueues, createLaneQueues, jobIdFor, publishWake, type LaneQueues } from '@flowline/queue';
import { waitFor } from '@flowline/testing';
import { createHarness, runStatuses, TENANT, toolChain, type Harness } from './harness';

/*
 * No tool worker runs here: a Tool node's job stays waiting on its lane. Cancelling the
 * run must not wait for a worker (or for CANCEL_DRAIN_GRACE_MS, set far beyond the test's
 * timeouts): the dispatcher takes the waiting job off the lane, which confirms the cancel.
 */
describe('cancelling work no worker has taken', () => {
  let h: Harness;
  let queues: LaneQueues;

  beforeAll(async () => {
    h = await createHarness();
    queues = createLaneQueues(h.conn, h.redis.prefix);
    await h.startDispatcher('d1', { CANCEL_DRAIN_GRACE_MS: '600000' });
  });

  afterAll(async () => {
    await closeLaneQueues(queues);
    await h?.close();
  });

  async function queuedTool(runId: string): Promise<string> {
    let invocationId = '';
    await waitFor(
      async () => {
        const r = await h.db.pool.query<{ status: string; invocation_id: string | null }>(
          `select status, invocation_id from node_runs where run_id = $1 and node_key = 'tool'`,
          [runId],
        );
        invocationId = r.rows[0]?.invocation_id ?? '';
        return r.rows[0]?.status === 'Queued' && invocationId !== '';
      },
      { timeoutMs: 10_000, description: 'tool node queued' },
    );
    return invocationId;
  }

  async function expectCancelledWithoutSurvivors(runId: string): Promise<void> {
    await waitFor(async () => (await runStatuses(h.db, [runId])).get(runId) === 'Cancelled', {
      timeoutMs: 15_000,
      description: 'run cancelled',
    });
    const tool = await h.db.pool.query<{ status: string; failure_class: string }>(
      `select status, failure_class from node_runs where run_id = $1 and node_key = 'tool'`,
      [runId],
    );
    expect(tool.rows[0]).toEqual({ status: 'Cancelled', failure_class: 'Cancelled' });
    const ev = await h.db.pool.query<{ detail: { survivors?: unknown[] } }>(
      `select detail from events where run_id = $1 and kind = 'run.cancelled'`,
      [runId],
    );
    expect(ev.rows).toHaveLength(1);
    expect(ev.rows[0]!.detail.survivors).toEqual([]);
  }

  it('withdraws a waiting job from its lane and ends the run Cancelled at once, with no survivor', async () => {
    const [runId] = await h.createRuns(toolChain('echo'), [{}]);
    const invocationId = await queuedTool(runId!);
    // the job reaches its lane after the commit (released by the dispatch window)
    await waitFor(async () => (await (await Job.fromId(queues.tool, jobIdFor(invocationId)))?.getState()) === 'waiting', {
      timeoutMs: 10_000,
      description: 'job waiting on the lane',
    });

    expect(await requestCancel(h.db.pool, TENANT, runId!, 'operator')).toMatchObject({ outcome: 'cancelling' });
    await publishWake(h.conn, { runId: runId! }, h.redis.prefix);

    await expectCancelledWithoutSurvivors(runId!);
    expect(await Job.fromId(queues.tool, jobIdFor(invocationId))).toBeUndefined();
  });

  it('confirms the cancel of work whose job is gone from Redis instead of enqueueing it again', async () => {
    const [runId] = await h.createRuns(toolChain('echo'), [{}]);
    const invocationId = await queuedTool(runId!);
    // the transport lost the job (as after a FLUSHALL); only the in-flight check can notice
    await waitFor(async () => (await Job.fromId(queues.tool, jobIdFor(invocationId))) !== undefined, {
      timeoutMs: 10_000,
      description: 'job on the lane',
    });
    expect(await queues.tool.remove(jobIdFor(invocationId))).toBe(1);

    expect(await requestCancel(h.db.pool, TENANT, runId!, 'operator')).toMatchObject({ outcome: 'cancelling' });
    await expectCancelledWithoutSurvivors(runId!);
    expect(await Job.fromId(queues.tool, jobIdFor(invocationId))).toBeUndefined();
  });
});
