/**
 * Wait nodes: the planner parks the row itself (`parkWait` in admit.ts). Reached, the row reads Running with no
 * invocation and no child, and its `deadlineAt` holds the wake time — so the wake is the
 * same `runs.wake_at` every deadline and backoff already sets (the sweep finds it, it lives
 * in Postgres and survives any restart), and nothing holds a worker or a timer in memory.
 * When a tick finds the wake time reached, the node succeeds with `{ fired: 'timer', at }`.
 * A run whose only work is parked Waits reads WaitingForApproval (`recompute.ts`), so it
 * holds no MAX_CONCURRENT_RUNS slot, like a run parked on a person.
 */
import type { NodeRunState } from './types';
import { isoOf } from '../wait/civil-time';
import type { PlanState } from './plan-state';
import { settleSuccess } from './settle';

/** A Wait row parked on its timer (not settled, not cancelled). */
export function isParkedWait(row: NodeRunState): boolean {
  return row.kind === 'Wait' && row.status === 'Running' && row.invocationId === null && row.childRunId === null;
}

/** Settle every parked Wait whose wake time has come (not while the run is Cancelling: the drain cancels it). */
export function fireDueWaits(st: PlanState): void {
  if (st.run.status === 'Cancelling') return;
  for (const row of [...st.rows.values()]) {
    if (isParkedWait(row) && row.deadlineAt !== null && row.deadlineAt <= st.now) fireTimer(st, row);
  }
}

/** Settle a parked Wait as fired by its timer. */
export function fireTimer(st: PlanState, row: NodeRunState): void {
  settleSuccess(st, row.nodeKey, { fired: 'timer', at: isoOf(row.deadlineAt ?? st.now) });
}
