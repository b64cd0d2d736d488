/**
 * Runs whose tick the store keeps refusing (a document Postgres cannot keep, a value out of
 * range, a trigger): each failed apply is counted per run, and once a run has failed
 * APPLY_FAILURE_LIMIT applies in a row it is quarantined instead of being retried by every
 * sweep forever. The quarantine is a plan of the pure core (`quarantine`, libs/graph): the
 * run reads Failed `Internal` with a reason naming the refusal, its live work is cancelled
 * and every unapplied intent and report — the poisoned one included — is consumed. Should
 * the store refuse that too, `forceQuarantine` ends the run by a statement that writes no
 * node row and no document. Logged at error level once per quarantine (each failed try
 * before it at warn) and counted in the dispatcher's totals.
 */
import { quarantine, quarantineReason, type PlanContext, type PlanResult } from '@flowline/graph';
import type { LoadedSnapshot } from '@flowline/db';
import { serializeError, type Logger } from '@flowline/runtime';
import type { DispatchStore } from './store';
import type { PendingWork } from './pending-work';
import type { SnapshotCache } from './snapshot-cache';

/** Consecutive failed applies per run; a run's count ends with an applied plan. */
export class ApplyFailures {
  private readonly counts = new Map<string, number>();

  constructor(readonly limit: number) {}

  /** Counts one more failed apply of the run; returns its count. */
  record(runId: string): number {
    const n = (this.counts.get(runId) ?? 0) + 1;
    this.counts.set(runId, n);
    return n;
  }

  /** True once the run failed `limit` applies in a row. */
  exhausted(runId: string): boolean {
    return (this.counts.get(runId) ?? 0) >= this.limit;
  }

  clear(runId: string): void {
    this.counts.delete(runId);
  }

  /** Forgets every run the predicate rejects (shards lost). */
  retain(keep: (runId: string) => boolean): void {
    for (const id of [...this.counts.keys()]) if (!keep(id)) this.counts.delete(id);
  }
}

/** What a refusal is called in a reason: its SQLSTATE (or error name) and message, never a document. */
export function describeRefusal(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  const name = typeof code === 'string' ? code : error instanceof Error ? error.name : 'error';
  const message = error instanceof Error ? error.message : String(error);
  return `${name}: ${message.slice(0, 200)}`;
}

export interface QuarantineDeps {
  store: DispatchStore;
  pending: PendingWork;
  cache: SnapshotCache;
  failures: ApplyFailures;
  log: Logger;
}

/** A run to quarantine: the snapshot its failing plan was made from (reports attached). */
export interface QuarantineItem {
  snapshot: LoadedSnapshot;
  error: unknown;
}

/**
 * Counts each refused apply against its run (the cache forgets the run: its next tick reads
 * it again) and returns the runs whose count reached the limit, with the snapshot their
 * refused plan was made from, to quarantine.
 */
export function recordApplyFailures(
  d: Pick<QuarantineDeps, 'cache' | 'failures' | 'log'>,
  failed: readonly { runId: string; error: unknown }[],
  planned: readonly { snapshot: LoadedSnapshot }[],
): QuarantineItem[] {
  const exhausted: QuarantineItem[] = [];
  for (const f of failed) {
    d.cache.drop(f.runId);
    const failures = d.failures.record(f.runId);
    d.log.warn({ err: describeRefusal(f.error), runId: f.runId, failures, limit: d.failures.limit }, 'plan could not be applied; the sweep retries it');
    const p = planned.find((c) => c.snapshot.run.id === f.runId);
    if (p && d.failures.exhausted(f.runId)) exhausted.push({ snapshot: p.snapshot, error: f.error });
  }
  return exhausted;
}

/**
 * Quarantines `items`; returns the committed quarantine plans (for the tick's side effects:
 * cancels, pings) and how many runs were ended.
 */
export async function quarantineRuns(
  d: QuarantineDeps,
  items: QuarantineItem[],
  ctx: PlanContext,
): Promise<{ committed: { snapshot: LoadedSnapshot; plan: PlanResult }[]; quarantined: number }> {
  const planned = items.map(({ snapshot, error }) => {
    const reason = quarantineReason(d.failures.limit, describeRefusal(error));
    let plan: PlanResult | null = null;
    let planError: unknown = null;
    try {
      plan = quarantine(snapshot, ctx, reason);
    } catch (err) {
      planError = err;
    }
    return { snapshot, reason, error, plan, planError };
  });
  const committed: { snapshot: LoadedSnapshot; plan: PlanResult }[] = [];
  for (const p of planned) if (p.plan) committed.push({ snapshot: p.snapshot, plan: p.plan });
  const outcome = await d.store.applyPlans(committed);
  const applied = new Set(outcome.applied);
  const refused = new Map<string, unknown>(outcome.failed.map((f) => [f.runId, f.error]));
  for (const p of planned) if (!p.plan) refused.set(p.snapshot.run.id, p.planError);
  let quarantined = 0;
  for (const p of planned) {
    const runId = p.snapshot.run.id;
    if (applied.has(runId)) {
      d.failures.clear(runId);
      d.pending.consume(runId, p.plan!.consumedInvocationIds, p.snapshot);
      d.cache.drop(runId);
      if (p.plan!.run) {
        quarantined++;
        // the raw error, logged as its facts (class, SQLSTATE): the reason quotes Postgres' message, which may quote content
        d.log.error({ runId, err: p.error }, 'run quarantined');
      } else d.log.warn({ runId, err: p.error }, 'reports of an ended run dropped: the store kept refusing them');
    } else if (refused.has(runId)) {
      const ended = await d.store.forceQuarantine(runId, p.reason);
      d.failures.clear(runId);
      d.pending.forgetRun(runId);
      d.cache.drop(runId);
      if (ended) quarantined++;
      const quarantineErr = serializeError(refused.get(runId));
      d.log.error({ runId, err: p.error, quarantineErr, ended }, 'run quarantined by the last-resort statement (its quarantine plan was refused too)');
    }
  }
  // a conflicted quarantine: the run changed meanwhile; its next tick decides again
  for (const id of outcome.conflicted) d.cache.drop(id);
  if (outcome.conflicted.length) d.pending.markReady(outcome.conflicted);
  return { committed: committed.filter((c) => applied.has(c.snapshot.run.id)), quarantined };
}
