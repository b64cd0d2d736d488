/**
 * Wait nodes: the planner parks the row itself (`parkWait` in admit.ts). Reached, the row reads Running with no
 * invocation and no child, and its `deadlineAt` holds the wake time — so the wake is the
 * same `runs.wake_at` every deadline and backoff already sets (the sweep finds it, it lives
 * in Postgres and survives any restart), and nothing holds a worker or a timer in memory.
 * When a tick finds the wake time reached, the node succeeds with `{ fired: 'timer', at }`.
 * A Wait on a signal parks without a wake time and settles on the oldest unconsumed signal
 * of its channel, on admission or on any later tick (a POST of a signal wakes the run).
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

/**
 * Settle every parked Wait whose wake time has come or whose channel holds a signal, in
 * document order (not while the run is Cancelling: the drain cancels them).
 */
export function fireDueWaits(st: PlanState): void {
  if (st.run.status === 'Cancelling') return;
  for (const node of st.snapshot.graph.nodes) {
    const row = st.row(node.key);
    if (!row || !isParkedWait(row)) continue;
    if (typeof node.config['signal'] === 'string') consumeSignal(st, row, node.config['signal']);
    else if (row.deadlineAt !== null && row.deadlineAt <= st.now) fireTimer(st, row);
  }
}

/**
 * The oldest signal of `channel` not consumed yet (by an earlier tick or earlier in this
 * plan) settles the Wait: `{ fired: 'signal', channel, payload, at }`. The consumption
 * commits with the node's success, in the run's version-guarded apply, so a signal is
 * consumed once and a signal sent before the Wait was reached is waiting for it.
 * Returns whether one was consumed.
 */
export function consumeSignal(st: PlanState, row: NodeRunState, channel: string): boolean {
  const taken = new Set(st.consumedSignals.map((c) => c.signalId));
  const signal = (st.snapshot.signals ?? [])
    .filter((s) => s.channel === channel && !taken.has(s.id))
    .sort((a, b) => a.at - b.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))[0];
  if (!signal) return false;
  settleSuccess(st, row.nodeKey, { fired: 'signal', channel, payload: signal.payload, at: isoOf(signal.at) });
  // a success the planner refused (output too large, outputSchema) still used the signal up
  st.consumedSignals.push({ signalId: signal.id, nodeKey: row.nodeKey });
  return true;
}

/** Settle a parked Wait as fired by its timer. */
export function fireTimer(st: PlanState, row: NodeRunState): void {
  settleSuccess(st, row.nodeKey, { fired: 'timer', at: isoOf(row.deadlineAt ?? st.now) });
}
