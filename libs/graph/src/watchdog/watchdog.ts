/**
 * The stuck-run watchdog's decision: does a live run owe a tick its stored `wake_at` will
 * never give it? Pure — the dispatcher passes the run's snapshot, its stored wake time and
 * `now`; it heals each finding by making the run due now.
 *
 * A Queued/Running lane node whose job is missing from Redis is the in-flight check's to heal
 * (it re-enqueues the same invocation); it is not judged here.
 */
import { TERMINAL_RUN_STATUSES } from '../model';
import type { RunSnapshot } from '../planner/types';

export const STUCK_INVARIANTS = [
  /** a Queued/Running node's attempt deadline passed `graceMs` ago and no tick timed it out */
  'runningPastDeadline',
  /** the run was due (its wake time, an ended backoff, an unapplied intent or outcome) `graceMs` ago and was not ticked */
  'dueNotTicked',
] as const;
export type StuckInvariant = (typeof STUCK_INVARIANTS)[number];

export interface StuckFinding {
  runId: string;
  invariant: StuckInvariant;
  nodeKey: string | null;
  /** when the run was owed its tick, epoch ms */
  dueAt: number;
}

/**
 * The invariants `snapshot` breaks at `now`, given its stored `wakeAt` (epoch ms, null = none):
 * at most one finding per node plus one for the run. Nothing for a finished run, nor for an
 * obligation younger than `graceMs` (the sweep and the tick loop get there first).
 */
export function stuckFindings(snapshot: RunSnapshot, wakeAt: number | null, now: number, graceMs: number): StuckFinding[] {
  const run = snapshot.run;
  if (TERMINAL_RUN_STATUSES.has(run.status)) return [];
  const late = (t: number) => t <= now - graceMs;
  // an obligation the stored wake covers (at or before it, or due already) is the sweep's;
  // one it postpones into the future or misses altogether is ours
  const missed = (t: number) => late(t) && (wakeAt === null || (wakeAt > t && wakeAt > now));
  const out: StuckFinding[] = [];
  for (const row of snapshot.nodes) {
    const live = row.status === 'Queued' || row.status === 'Running';
    if (live && row.deadlineAt !== null && missed(row.deadlineAt)) {
      out.push({ runId: run.id, invariant: 'runningPastDeadline', nodeKey: row.nodeKey, dueAt: row.deadlineAt });
    } else if (row.status === 'Pending' && row.notBefore !== null && missed(row.notBefore)) {
      out.push({ runId: run.id, invariant: 'dueNotTicked', nodeKey: row.nodeKey, dueAt: row.notBefore });
    }
  }
  if (wakeAt !== null && late(wakeAt)) {
    out.push({ runId: run.id, invariant: 'dueNotTicked', nodeKey: null, dueAt: wakeAt });
  } else if (wakeAt === null && (snapshot.intents.length > 0 || snapshot.results.length > 0)) {
    // unapplied input with no wake at all: nothing will ever tick the run for it
    out.push({ runId: run.id, invariant: 'dueNotTicked', nodeKey: null, dueAt: now });
  }
  return out;
}
