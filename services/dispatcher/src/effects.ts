/**
 * Side effects after a tick's commit (outbox order, ARCHITECTURE principle 5): put
 * Queued work on its lane (idempotent by job id), publish cancellations and withdraw
 * cancelled jobs no worker has taken yet, wake child and parent runs, and ping the
 * change channel. A crash before any of these is healed
 * by the next tick's in-flight check or the due sweep.
 */
import { Job } from 'bullmq';
import type { RedisConnection } from '@flowline/queue';
import { commitFollowUps, withdrawnResult, type CancelWork } from '@flowline/graph';
import { changeKindOf, corked, jobIdFor, LANES, publishCancellations, publishChangePings, publishWakes } from '@flowline/queue';
import type { LaneQueues, LaneTelemetry, RunChangedPing } from '@flowline/queue';
import type { Logger } from 'pino';
import type { CommittedPlan } from './tick';
import { dispatchWork } from './dispatch-trace';
import type { PendingWork } from './pending-work';
import type { ReleaseWindow, TenantWork } from './release-window';

/** A content-free change ping `{ runId, seq, kind }` (libs/queue live.ts owns its shape and channel). */
type ChangePing = RunChangedPing;

export interface EffectsDeps {
  redis: RedisConnection;
  queues: LaneQueues;
  prefix: string;
  /** SHARD_COUNT: a wake goes to the channel of its run's shard */
  shardCount: number;
  pending: PendingWork;
  /** the dispatch window: queued work is held there and released to its lane as space frees */
  window: ReleaseWindow;
  owns(runId: string): boolean;
  /** forgets this replica's cached snapshot of a run another run's commit changed */
  dropCached(runId: string): void;
  /** the chat publish pass (publish.ts) */
  publish?(committed: CommittedPlan[]): Promise<void>;
  /** BullMQ telemetry (tracing on only): each dispatched item gets a span and carries its context to its job */
  telemetry?: LaneTelemetry;
  log: Logger;
}

export function createEffects(d: EffectsDeps) {
  /** Learns the items' invocations and hands them to the dispatch window (released at once when their lane has room). */
  async function enqueue(work: TenantWork[]): Promise<void> {
    if (work.length === 0) return;
    for (const { item: it } of work) d.pending.rememberInvocation(it.invocationId, { runId: it.runId, nodeKey: it.nodeKey, lane: it.lane });
    await d.window.submit(work);
  }

  /** Ticks a run here when this replica owns it, else asks its owner through the wake channel. */
  async function wake(runIds: string[]): Promise<void> {
    const remote: string[] = [];
    for (const id of runIds) {
      if (d.owns(id)) {
        d.dropCached(id);
        d.pending.markReady([id]);
      } else remote.push(id);
    }
    await publishWakes(d.redis, remote.map((runId) => ({ runId })), d.prefix, d.shardCount);
  }

  /**
   * Takes cancelled work that is still waiting on its lane off the lane. A removed job can
   * no longer start, which confirms the cancel: its run gets a Cancelled outcome at once
   * instead of waiting for a worker to take the job only to refuse it. A job a worker
   * holds is locked and stays (the cancel message reaches that worker).
   */
  async function withdraw(cancels: (CancelWork & { runId: string })[]): Promise<void> {
    await Promise.all(
      cancels.map(async (c) => {
        for (const lane of LANES) {
          const job = await Job.fromId(d.queues[lane], jobIdFor(c.invocationId));
          if (!job) continue;
          const state = await job.getState();
          if (state !== 'waiting' && state !== 'delayed' && state !== 'prioritized') return;
          if ((await d.queues[lane].remove(job.id!)) !== 1) return;
          if (d.owns(c.runId)) d.pending.addResult(c.runId, withdrawnResult(c.invocationId, c.nodeKey, Date.now()));
          return;
        }
      }),
    );
  }

  async function afterCommit(committed: CommittedPlan[]): Promise<void> {
    const dispatched = dispatchWork(committed, d.telemetry);
    const cancelled = committed.flatMap((c) => c.plan.cancel.map((w) => ({ ...w, runId: c.snapshot.run.id })));
    const cancels = cancelled.map((w) => ({ invocationId: w.invocationId, reason: w.reason }));
    const wakes: string[] = [];
    const again: string[] = [];
    const pings: ChangePing[] = [];
    const now = Date.now();
    for (const { snapshot, plan } of committed) {
      const runId = snapshot.run.id;
      const f = commitFollowUps(snapshot, plan, now);
      wakes.push(...f.wake);
      if (f.dueNow) again.push(runId);
      if (f.lastEvent) pings.push({ runId, seq: f.lastEvent.seq, kind: changeKindOf(f.lastEvent.kind) });
    }
    // a run due again at once ticks here (its cached snapshot is its own commit's)
    d.pending.markReady(again.filter((id) => d.owns(id)));
    wakes.push(...again.filter((id) => !d.owns(id)));
    // the hold, the wakes and the change pings leave in one write
    const results = await corked(d.redis, () =>
      Promise.allSettled([
        enqueue(dispatched.work).finally(dispatched.end),
        publishCancellations(d.redis, cancels, d.prefix),
        withdraw(cancelled),
        wake(wakes),
        publishChangePings(d.redis, pings, d.prefix),
        d.publish?.(committed),
      ]),
    );
    for (const r of results) {
      if (r.status === 'rejected') d.log.warn({ err: r.reason }, 'side effect failed; the in-flight check heals it');
    }
  }

  return { enqueue, wake, afterCommit, withdraw };
}
