/**
 * A Pause with an approval policy (`config.approval`, approval/policy.ts). Decisions are recorded
 * by the API in `node_runs.approvals` (the row locked, the run's version bumped), which settles
 * the gate itself through the `decide` intent when a decision completes the policy. What the
 * clock alone decides happens here, each tick: an escalation joining (which may complete the
 * policy with the decisions already cast) and the timeout's action. The row's `deadlineAt`
 * holds the next such time, so the run's `wake_at` brings the tick — no worker, no timer in memory.
 */
import type { GraphNode, Json } from '../model';
import { approvalPolicyOf, type ApprovalPolicy } from '../approval/approval-config';
import { approvalState, type ApprovalState } from '../approval/policy';
import { approvalSummary } from '../approval/summary';
import type { PlanState } from './plan-state';
import { settleSuccess } from './settle';
import type { NodeRunState } from './types';

/** The approval policy of a Pause node, or null (none, or a config the publish check would refuse). */
export function gatePolicy(node: GraphNode | undefined): ApprovalPolicy | null {
  if (!node || node.kind !== 'Pause') return null;
  const r = approvalPolicyOf(node.config);
  return r.ok ? r.policy : null;
}

/** The policy state of a parked Pause row at `now` (null without a policy). */
export function gateState(policy: ApprovalPolicy, row: NodeRunState, now: number): ApprovalState {
  return approvalState(policy, row.approvals ?? [], row.startedAt ?? now, now);
}

/** Parking a Pause: the first time its policy needs the clock (an escalation or the timeout), or null. */
export function gateDeadline(node: GraphNode, startedAt: number): number | null {
  const policy = gatePolicy(node);
  return policy ? approvalState(policy, [], startedAt, startedAt).nextAt : null;
}

/**
 * Settle every parked approval gate the clock completes (timeout, or an escalation the decisions
 * already meet), and keep the others' deadline on their next escalation or timeout.
 */
export function settleApprovalGates(st: PlanState): void {
  if (st.run.status === 'Cancelling') return;
  for (const node of st.snapshot.graph.nodes) {
    const row = st.row(node.key);
    if (!row || row.status !== 'WaitingForApproval' || row.decision !== null) continue;
    const policy = gatePolicy(node);
    if (!policy) continue;
    const state = gateState(policy, row, st.now);
    if (state.status === 'pending') {
      if (state.nextAt !== row.deadlineAt) st.update(node.key, { deadlineAt: state.nextAt });
      continue;
    }
    const decision = state.status === 'approved' ? 'Approve' : 'Reject';
    const output: Json = { decision, comment: null, payload: null, approval: approvalSummary(state, row.approvals ?? []) };
    st.update(node.key, { pendingDecisionKind: null, deadlineAt: null });
    st.emit('gate.decided', node.key, { decision, by: state.by });
    settleSuccess(st, node.key, output);
  }
}
