/**
 * One tick over a batch of runs: load → attach reports → plan (pure) → apply in one
 * transaction → side effects after commit. No business decision lives here; the
 * planner decides, this glue only moves data and keeps the in-memory inbox honest
 * (reports are dropped only once their run's plan committed).
 */
import { randomUUID } from 'node:crypto';
import type { CoreOptions, PlanContext, PlanResult, RunSnapshot } from '@flowline/graph';
import { plan } from '@flowline/graph';
import { isEmptyPlan, type LoadedSnapshot } from '@flowline/db';
import type { Logger } from '@flowline/runtime';
import type { DispatchStore } from './store';
import type { PendingWork } from './pending-work';

export interface CommittedPlan {
  snapshot: RunSnapshot;
  plan: PlanResult;
}

export interface TickDeps {
  store: DispatchStore;
  pending: PendingWork;
  options: CoreOptions;
  owns(runId: string): boolean;
  /** how long a Pending run without a tenant slot waits before it asks again */
  slotRetryMs: number;
  afterCommit(committed: CommittedPlan[]): Promise<void>;
  log: Logger;
}

export interface TickStats {
  loaded: number;
  applied: number;
  conflicted: number;
  skipped: number;
  failed: number;
}

/** Ticks `runIds` (already taken from the ready set). */
export async function tickRuns(d: TickDeps, runIds: string[]): Promise<TickStats> {
  const stats: TickStats = { loaded: 0, applied: 0, conflicted: 0, skipped: 0, failed: 0 };
  const owned = runIds.filter((id) => d.owns(id));
  if (owned.length === 0) return stats;
  const snapshots = await d.store.loadSnapshots(owned);
  stats.loaded = snapshots.length;
  const found = new Set(snapshots.map((s) => s.run.id));
  for (const id of owned) if (!found.has(id)) d.pending.forgetRun(id);

  const ctx: PlanContext = { now: Date.now(), options: d.options, newId: randomUUID };
  const toApply: { snapshot: LoadedSnapshot; plan: PlanResult }[] = [];
  for (const raw of snapshots) {
    const snapshot = d.pending.attach(raw) as LoadedSnapshot;
    rememberInflight(d.pending, snapshot);
    let result = plan(snapshot, ctx);
    // A Pending run waiting for a tenant slot asks again after a pause: the plan alone would
    // clear its wake (nothing signals a freed slot), and leaving it due would let many
    // waiting runs crowd the sweep's batch ahead of deadlines and retries.
    if (snapshot.run.status === 'Pending' && !snapshot.runSlotAvailable && isEmptyPlan(result)) {
      result = { ...result, wakeAt: ctx.now + d.slotRetryMs };
    }
    toApply.push({ snapshot, plan: result });
  }
  if (toApply.length === 0) return stats;

  const outcome = await d.store.applyPlans(toApply);
  stats.applied = outcome.applied.length;
  stats.conflicted = outcome.conflicted.length;
  stats.skipped += outcome.skipped.length;
  stats.failed = outcome.failed.length;
  for (const f of outcome.failed) d.log.error({ err: f.error, runId: f.runId }, 'plan could not be applied; the sweep retries it');
  // A conflicted run changed under us (API intent, peer): its reports stay and it ticks again.
  if (outcome.conflicted.length) d.pending.markReady(outcome.conflicted);
  const done = new Set([...outcome.applied, ...outcome.skipped]);
  const committed = toApply.filter((c) => done.has(c.snapshot.run.id));
  for (const c of committed) d.pending.consume(c.snapshot.run.id, c.plan.consumedInvocationIds, c.snapshot);
  const applied = new Set(outcome.applied);
  await d.afterCommit(committed.filter((c) => applied.has(c.snapshot.run.id)));
  return stats;
}

/** Learns which invocations belong to which run, so QueueEvents map job ids to runs. */
function rememberInflight(pending: PendingWork, s: RunSnapshot): void {
  for (const n of s.nodes) {
    if (n.invocationId && (n.status === 'Queued' || n.status === 'Running')) {
      pending.rememberInvocation(n.invocationId, { runId: s.run.id, nodeKey: n.nodeKey });
    }
  }
}
