/**
 * Wait nodes: the planner parks the row itself. Reached, the row reads Running with no
 * invocation and no child, and its `deadlineAt` holds the wake time — so the wake is the
 * same `runs.wake_at` every deadline and backoff already sets (the sweep finds it, it lives
 * in Postgres and survives any restart), and nothing holds a worker or a timer in memory.
 * When a tick finds the wake time reached, the node succeeds with `{ fired: 'timer', at }`.
 * A run whose only work is parked Waits reads WaitingForApproval (`recompute.ts`), so it
 * holds no MAX_CONCURRENT_RUNS slot, like a run parked on a person.
 */
import { inputDocumentAsJson } from '../documents/inline-output';
import type { GraphNode, InputDocument } from '../model';
import type { NodeRunState } from './types';
import { isoOf } from '../wait/civil-time';
import { timerWakeAt } from '../wait/wait-time';
import type { PlanState } from './plan-state';
import { failNode, settleSuccess } from './settle';

/** A Wait row parked on its timer (not settled, not cancelled). */
export function isParkedWait(row: NodeRunState): boolean {
  return row.kind === 'Wait' && row.status === 'Running' && row.invocationId === null && row.childRunId === null;
}

/** Park a Wait node just admitted; a wake time already reached fires in this same tick. */
export function parkWait(st: PlanState, node: GraphNode, doc: InputDocument): void {
  const row = st.row(node.key)!;
  const attempt = row.attempt + 1; // read before update: it changes the row in place
  st.update(node.key, {
    status: 'Running',
    attempt,
    input: doc,
    invocationId: null,
    childRunId: null,
    queuedAt: st.now,
    startedAt: st.now,
    finishedAt: null,
    deadlineAt: null,
    notBefore: null,
    output: null,
    failureClass: 'None',
    reason: null,
  });
  const wake = timerWakeAt(node.config, inputDocumentAsJson(doc), st.now);
  if (wake === null) return failNode(st, node.key, 'ValidationFailed', 'Wait config names no timer');
  if ('error' in wake) return failNode(st, node.key, 'ValidationFailed', wake.error);
  st.update(node.key, { deadlineAt: wake.at });
  st.emit('node.started', node.key, { attempt, wakeAt: isoOf(wake.at) });
  if (wake.at <= st.now) fireTimer(st, st.row(node.key)!);
}

/** Settle every parked Wait whose wake time has come (not while the run is Cancelling: the drain cancels it). */
export function fireDueWaits(st: PlanState): void {
  if (st.run.status === 'Cancelling') return;
  for (const row of [...st.rows.values()]) {
    if (isParkedWait(row) && row.deadlineAt !== null && row.deadlineAt <= st.now) fireTimer(st, row);
  }
}

function fireTimer(st: PlanState, row: NodeRunState): void {
  settleSuccess(st, row.nodeKey, { fired: 'timer', at: isoOf(row.deadlineAt ?? st.now) });
}
