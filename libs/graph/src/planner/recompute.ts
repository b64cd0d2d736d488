/**
 * Run status from the rows (CONTRACT §4, §8 lifecycle); a Cancelling run is drained
 * instead (drain.ts).
 *
 * - A Failed row that is not onError Continue (lowest key, ordinal) ⇒ Failed with its class.
 * - Else while anything is live (Pending, Queued, Running, WaitingForApproval rows):
 *   WaitingForApproval when a row waits on a person or operator (a gate, a held
 *   DecisionModel, a child run waiting on a person), else Running.
 * - Else a succeeded End ⇒ Completed, output = the first End to succeed (earliest
 *   finishedAt, then document order), validated against the graph's outputSchema
 *   (a mismatch fails the run ValidationFailed); else Cancelled with a reason naming
 *   the unreached ends — failure class GateRejected when a Pause was rejected (the
 *   place to look, not a causal proof), None otherwise.
 */
import { TERMINAL_NODE_STATUSES, TERMINAL_RUN_STATUSES, type RunStatus } from '../model';
import { completeRun } from './complete-run';
import { edgeVerdict } from './edge-verdict';
import type { PlanState } from './plan-state';
import { drain } from './drain';
import { failRunIfAnyFailed } from './settle';

export function recompute(st: PlanState): void {
  if (st.run.status === 'Cancelling') return drain(st);
  if (st.run.status === 'Pending' || st.run.status === 'Completed' || st.run.status === 'Cancelled') return;
  if (failRunIfAnyFailed(st)) return;
  if (TERMINAL_RUN_STATUSES.has(st.run.status)) return;
  const live = [...st.rows.values()].some((r) => !TERMINAL_NODE_STATUSES.has(r.status));
  if (live) return setLiveStatus(st, waitsOnPerson(st) ? 'WaitingForApproval' : 'Running');
  const ends = st.snapshot.graph.nodes.filter((n) => n.kind === 'End');
  const winner = ends
    .map((n) => st.row(n.key))
    .filter((r) => r?.status === 'Succeeded')
    .sort((a, b) => (a!.finishedAt ?? 0) - (b!.finishedAt ?? 0) || st.index.order.get(a!.nodeKey)! - st.index.order.get(b!.nodeKey)!)[0];
  if (winner) return completeRun(st, winner.nodeKey);
  const unreached = ends.map((n) => `'${n.key}' (${st.row(n.key)?.status ?? 'missing'})`).join(', ');
  const rejected = [...st.rows.values()].find((r) => r.status === 'Succeeded' && r.decision?.decision === 'Reject');
  const reason = rejected
    ? `no End was reached after gate '${rejected.nodeKey}' was rejected: ${unreached}`
    : `no End was reached: ${unreached}`;
  const failureClass = rejected ? 'GateRejected' : 'None';
  st.updateRun({ status: 'Cancelled', failureClass, reason, finishedAt: st.now });
  st.emit('run.cancelled', null, { reason: 'no End was reached', class: failureClass });
}

function setLiveStatus(st: PlanState, status: RunStatus): void {
  if (st.run.status === status) return;
  const from = st.run.status;
  st.updateRun({ status });
  if (status === 'WaitingForApproval') st.emit('run.waiting', null, { from });
  else st.emit('run.resumed', null, { from });
}

function waitsOnPerson(st: PlanState): boolean {
  for (const row of st.rows.values()) {
    if (row.status === 'WaitingForApproval') return true;
    if (row.status === 'Succeeded' && row.held) {
      const outs = st.index.outEdges.get(row.nodeKey) ?? [];
      if (outs.some((e) => edgeVerdict(st, e) === 'Held' && st.row(e.to)?.status === 'Pending')) return true;
    }
    if (row.status === 'Running' && row.childRunId) {
      const child = st.snapshot.children.find((c) => c.childRunId === row.childRunId);
      if (child?.status === 'WaitingForApproval') return true;
    }
    if (row.status === 'Running' && row.map) {
      const live = new Set(row.map.live.map((l) => l.childRunId));
      if (st.snapshot.children.some((c) => live.has(c.childRunId) && c.status === 'WaitingForApproval')) return true;
    }
  }
  return false;
}
