/**
 * The shard owner's cache of its runs: the snapshot each run was left in by this replica's
 * last committed plan, so the next tick plans without a read round trip.
 *
 * Contract: an entry is a hint guarded by `runs.version`. Every write the tick sends is
 * guarded on the cached version (a foreign change — API intent, operator action, child run,
 * peer dispatcher — bumps it, so the write conflicts and the entry is dropped). A plan that
 * writes nothing is not guarded, so every foreign change must also drop the entry: each one
 * sets `wake_at = now()` and signals a wake, and the dispatcher drops the entry of a run
 * woken by anything but a worker's report (job-feed.ts), or found due by the sweep. Entries are kept only for
 * states a later tick can plan from alone: not Pending (tenant slots are counted at load),
 * not terminal, no child runs, no unapplied intents.
 */
import { applyPlanToSnapshot, committedCounters, TERMINAL_RUN_STATUSES, type PlanResult } from '@flowline/graph';
import type { LoadedSnapshot } from '@flowline/db';

/**
 * The snapshot a committed plan leaves in the store, or null when it cannot be known
 * without reading (see the module contract).
 * @param loaded the snapshot as loaded or cached, before the inbox's reports were attached
 * @param planned the snapshot the plan was made from (reports attached)
 * @param wrote true when the plan was committed by a statement, false when it was skipped
 */
export function committedState(loaded: LoadedSnapshot, planned: LoadedSnapshot, plan: PlanResult, wrote: boolean): LoadedSnapshot | null {
  if (loaded.children.length > 0 || plan.startChildren.length > 0 || plan.cancelChildren.length > 0) return null;
  if (plan.run && plan.run.expectVersion !== loaded.run.version) return null;
  const consumedIntents = new Set(plan.consumedIntentIds);
  // the store moves wake_at to now() while intents stay unapplied
  if (loaded.intents.some((i) => !consumedIntents.has(i.id))) return null;
  const next = applyPlanToSnapshot(planned, plan);
  if (next.run.status === 'Scheduled' || next.run.status === 'Pending' || TERMINAL_RUN_STATUSES.has(next.run.status)) return null;
  // A run with no node out with a worker can only be woken by something foreign (a decision, a
  // signal, an event, an operator) or by the sweep's timer, and each of those drops the entry
  // before it could be used: keeping it would only hold the whole snapshot in memory for as long
  // as the run stays parked, for days, for every parked run of the shard.
  if (!next.nodes.some((n) => n.status === 'Queued' || n.status === 'Running')) return null;
  return {
    ...next,
    run: { ...next.run, ...committedCounters(loaded.run, plan, wrote) },
    results: [],
    started: [],
    intents: [],
    runSlotAvailable: true,
    wakeAt: wrote ? plan.wakeAt : loaded.wakeAt,
    shard: loaded.shard,
    traceParent: loaded.traceParent,
  };
}

/** Cached snapshots by run id; the oldest entries go first when `maxRuns` is reached. */
export class SnapshotCache {
  private readonly entries = new Map<string, LoadedSnapshot>();
  hits = 0;
  misses = 0;

  constructor(private readonly maxRuns: number) {}

  get size(): number {
    return this.entries.size;
  }

  /** The cached snapshot of a run (counts a hit or a miss). */
  get(runId: string): LoadedSnapshot | undefined {
    const s = this.entries.get(runId);
    if (s) this.hits++;
    else this.misses++;
    return s;
  }

  /** Stores (or, with null, drops) the state a committed plan left. */
  set(runId: string, snapshot: LoadedSnapshot | null): void {
    this.entries.delete(runId);
    if (snapshot === null || this.maxRuns <= 0) return;
    this.entries.set(runId, snapshot);
    if (this.entries.size > this.maxRuns) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }

  /** True when the run is cached (counts nothing). */
  has(runId: string): boolean {
    return this.entries.has(runId);
  }

  drop(runId: string): void {
    this.entries.delete(runId);
  }

  /** Drops every run the predicate rejects (shards lost). */
  retain(keep: (runId: string) => boolean): void {
    for (const id of [...this.entries.keys()]) if (!keep(id)) this.entries.delete(id);
  }

  clear(): void {
    this.entries.clear();
  }
}
