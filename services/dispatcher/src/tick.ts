/**
 * One tick over a batch of runs: load → attach reports → plan (pure) → apply in one
 * transaction → side effects after commit. No business decision lives here; the
 * planner decides, this glue only moves data and keeps the in-memory inbox honest
 * (reports are dropped only once their run's plan committed).
 */
import { randomUUID } from 'node:crypto';
import type { CoreOptions, ModelPrices, PlanContext, PlanResult, RunSnapshot } from '@flowline/graph';
import { inflightInvocations, plan } from '@flowline/graph';
import type { LoadedSnapshot } from '@flowline/db';
import type { Clock, Logger } from '@flowline/runtime';
import type { DispatchStore } from './store';
import type { PendingWork } from './pending-work';
import { committedState, type SnapshotCache } from './snapshot-cache';
import { claimKeyPlaces } from './concurrency-claim';
import { quarantineRuns, recordApplyFailures, type ApplyFailures } from './quarantine';

export interface CommittedPlan {
  /** with the run's stored `traceparent` when it was loaded (dispatch-trace.ts) */
  snapshot: RunSnapshot & { traceParent?: string | null };
  plan: PlanResult;
}

export interface TickDeps {
  store: DispatchStore;
  pending: PendingWork;
  options: CoreOptions;
  owns(runId: string): boolean;
  /** how long a Pending run without a tenant slot waits before it asks again (the plan's `slotRetryMs`) */
  slotRetryMs: number;
  /** MODEL_PRICES: the planner prices model usage with it (run budgets' maxCostUsd) */
  prices?: ModelPrices;
  /** PENDING_RUN_TTL_MS (0: runs never expire) */
  pendingRunTtlMs?: number;
  /**
   * The planner's clock (`PlanContext.now`: deadlines, backoff, wake times). Lease expiry is
   * judged by the database clock, never this one.
   */
  clock: Clock;
  afterCommit(committed: CommittedPlan[]): Promise<void>;
  /** the owner's snapshots of its runs: a cached run is planned without a read */
  cache: SnapshotCache;
  /** failed applies per run (APPLY_FAILURE_LIMIT): a run past the limit is quarantined */
  failures: ApplyFailures;
  log: Logger;
}

export interface TickStats {
  loaded: number;
  applied: number;
  conflicted: number;
  skipped: number;
  failed: number;
  /** runs planned from the cache (no read) */
  cached: number;
  /** apply statements sent (each its own transaction) */
  statements: number;
  /** runs ended Failed `Internal` because the store kept refusing their ticks */
  quarantined: number;
}

interface Planned {
  /** the snapshot as planned (reports attached) */
  snapshot: LoadedSnapshot;
  plan: PlanResult;
  /** the snapshot as loaded or cached, before reports were attached */
  loaded: LoadedSnapshot;
}

/** Ticks `runIds` (already taken from the ready set). */
export async function tickRuns(d: TickDeps, runIds: string[]): Promise<TickStats> {
  const stats: TickStats = { loaded: 0, applied: 0, conflicted: 0, skipped: 0, failed: 0, cached: 0, statements: 0, quarantined: 0 };
  const owned = runIds.filter((id) => d.owns(id));
  if (owned.length === 0) return stats;
  const snapshots = await snapshotsOf(d, owned, stats);
  const ctx: PlanContext = { now: d.clock.now(), options: d.options, newId: randomUUID, slotRetryMs: d.slotRetryMs, prices: d.prices ?? {}, pendingRunTtlMs: d.pendingRunTtlMs ?? 0 };
  const toApply: Planned[] = snapshots.map((raw) => {
    const snapshot = d.pending.attach(raw) as LoadedSnapshot;
    rememberInflight(d.pending, snapshot);
    return { snapshot, plan: plan(snapshot, ctx), loaded: raw };
  });
  if (toApply.length === 0) return stats;

  let outcome;
  try {
    outcome = await d.store.applyPlans(toApply);
  } catch (err) {
    // the commit's fate is unknown: these runs are read again
    for (const c of toApply) d.cache.drop(c.snapshot.run.id);
    throw err;
  }
  stats.statements = outcome.applied.length + outcome.conflicted.length + outcome.failed.length > 0 ? 1 : 0;
  stats.applied = outcome.applied.length;
  stats.conflicted = outcome.conflicted.length;
  stats.skipped += outcome.skipped.length;
  stats.failed = outcome.failed.length;
  for (const id of outcome.applied) d.failures.clear(id);
  const exhausted = recordApplyFailures(d, outcome.failed, toApply);
  // A conflicted run changed under us (API intent, peer): its reports stay and it ticks again.
  for (const id of outcome.conflicted) d.cache.drop(id);
  if (outcome.conflicted.length) d.pending.markReady(outcome.conflicted);
  const effects = settleCommitted(d, toApply, new Set(outcome.applied), new Set(outcome.skipped));
  if (exhausted.length > 0) {
    const q = await quarantineRuns(d, exhausted, ctx);
    stats.quarantined = q.quarantined;
    effects.push(...q.committed);
  }
  await d.afterCommit(effects);
  return stats;
}

/**
 * The owned runs' snapshots: the cached ones as they are, the rest read from the store (a run
 * the store no longer has is forgotten), whose keyed Pending runs then claim their key places.
 */
async function snapshotsOf(d: TickDeps, owned: string[], stats: TickStats): Promise<LoadedSnapshot[]> {
  const snapshots: LoadedSnapshot[] = [];
  const toLoad: string[] = [];
  for (const id of owned) {
    const hit = d.cache.get(id);
    if (hit) snapshots.push(hit);
    else toLoad.push(id);
  }
  stats.cached = snapshots.length;
  if (toLoad.length === 0) return snapshots;
  const loaded = await d.store.loadSnapshots(toLoad);
  stats.loaded = loaded.length;
  const found = new Set(loaded.map((s) => s.run.id));
  for (const id of toLoad) if (!found.has(id)) d.pending.forgetRun(id);
  // a run read from the store teaches its tenant, for the tick order of its next ready mark
  for (const s of loaded) d.pending.rememberTenant(s.run.id, s.run.tenantId);
  snapshots.push(...loaded);
  await claimKeyPlaces(d.store, loaded);
  return snapshots;
}

/**
 * The plans that committed (applied, or skipped as nothing to write): their reports are
 * consumed and the cache holds the state they left. Returns the applied ones, whose side
 * effects follow.
 */
function settleCommitted(d: TickDeps, toApply: Planned[], applied: Set<string>, skipped: Set<string>): CommittedPlan[] {
  const committed = toApply.filter((c) => applied.has(c.snapshot.run.id) || skipped.has(c.snapshot.run.id));
  for (const c of committed) d.pending.consume(c.snapshot.run.id, c.plan.consumedInvocationIds, c.snapshot);
  for (const c of committed) {
    const id = c.snapshot.run.id;
    d.cache.set(id, committedState(c.loaded, c.snapshot, c.plan, applied.has(id)));
  }
  return committed.filter((c) => applied.has(c.snapshot.run.id));
}

/** Learns which invocations belong to which run, so worker reports and job probes map job ids to runs. */
function rememberInflight(pending: PendingWork, s: RunSnapshot): void {
  for (const w of inflightInvocations(s)) pending.rememberInvocation(w.invocationId, { runId: s.run.id, nodeKey: w.nodeKey });
}
