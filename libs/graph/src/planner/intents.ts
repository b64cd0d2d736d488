/**
 * Operator intents, applied in order and each consumed exactly once (applied or not):
 * cancel, skip, retry, complete, steer, decide. Whether a verb applies to a row in the run's
 * state is the verb table's (state-machine/verbs.ts), the same table the API and the SQL
 * guards that recorded the intent follow; the state may have moved since, so it is judged again.
 */
import type { GraphNode, Json, NodeStatus } from '../model';
import { verbApplies, type OperatorVerb } from '../state-machine/verbs';
import { isSurvivor } from './drain';
import type { PlanState } from './plan-state';
import { settleSuccess, skipNode, skipNotTaken, withdrawRequest } from './settle';
import type { Intent, NodeRunState } from './types';
import { gatePolicy, gateState } from './approval-gate';
import { approvalSummary } from '../approval/summary';

export function applyIntents(st: PlanState): void {
  const steered = new Set<string>();
  for (const intent of st.snapshot.intents) {
    st.consumedIntentIds.push(intent.id);
    applyIntent(st, intent, steered);
  }
}

/** Does `verb` apply to row `key` in the run's state now? `asStatus` judges the row as if in that status. */
function applies(st: PlanState, verb: OperatorVerb, key: string, asStatus?: NodeStatus): boolean {
  const row = st.row(key)!;
  const node = st.index.nodeByKey.get(key)!;
  return verbApplies(verb, {
    runStatus: st.run.status,
    node: { status: asStatus ?? row.status, kind: node.kind, held: row.held, cancelSurvivor: isSurvivor(row) },
  });
}

function applyIntent(st: PlanState, intent: Intent, steered: Set<string>): void {
  if (intent.kind === 'cancel') {
    if (verbApplies('cancel', { runStatus: st.run.status })) {
      st.updateRun({ status: 'Cancelling', cancelReason: intent.reason ?? st.run.cancelReason });
    }
    return;
  }
  const row = st.row(intent.nodeKey);
  const node = st.index.nodeByKey.get(intent.nodeKey);
  if (!row || !node) return;
  switch (intent.kind) {
    case 'skip':
      if (!applies(st, 'skip', row.nodeKey)) return;
      if (intent.prune === true) {
        // the node and, through its dead out-edges, what only it feeds (a waiting gate's request withdrawn)
        if (row.status === 'WaitingForApproval') withdrawRequest(st, row.nodeKey);
        skipNode(st, row.nodeKey, 'skipped by operator', { by: 'operator', prune: 'true' });
      } else {
        skipNotTaken(st, row.nodeKey);
      }
      return;
    case 'retry':
      return retry(st, intent.nodeKey);
    case 'complete':
      return complete(st, intent.nodeKey, intent.output);
    case 'steer':
      return steer(st, intent.nodeKey, intent.operationId, steered);
    case 'decide':
      return decide(st, intent.nodeKey, intent.operationId);
  }
}

/**
 * Failed (or held DecisionModel) → Pending with `maxAttempts` more attempts; reopens a run it
 * failed. A held decision is asked again from its held answer: the row keeps that answer
 * (`output`, `held`) while it re-asks, its out-edges hold meanwhile (the row is live), and a
 * re-ask that fails for good puts it back, still held (settle.ts `restoreHeld`), rather than
 * failing a node whose call had succeeded.
 */
function retry(st: PlanState, key: string): void {
  const row = st.row(key)!;
  const node = st.index.nodeByKey.get(key)!;
  if (!applies(st, 'retry', key)) return;
  const cleared = row.failureClass;
  const reask = row.status === 'Succeeded' && row.held;
  st.update(key, {
    status: 'Pending',
    attemptLimit: row.attempt + node.maxAttempts,
    failureClass: 'None',
    reason: null,
    output: reask ? row.output : null,
    notBefore: null,
    deadlineAt: null,
    finishedAt: null,
    invocationId: null,
    childRunId: null,
    held: reask,
    pendingDecisionKind: null,
  });
  st.emit('node.retried', key, { by: 'operator', clearedClass: cleared, attempt: row.attempt, ...(reask ? { reask: true } : {}) });
  reopenIfUnfailed(st, 'retry');
}

/** Operator completion of a non-human Pending/Queued/Running/Failed row; reopens a run it failed. */
function complete(st: PlanState, key: string, output: Json): void {
  const row = st.row(key)!;
  if (!applies(st, 'complete', key)) return;
  if ((row.status === 'Queued' || row.status === 'Running') && row.invocationId) {
    st.cancel.push({ nodeKey: key, invocationId: row.invocationId, reason: 'completed by operator' });
  }
  if (row.status === 'Running' && row.childRunId) st.cancelChildren.push(row.childRunId);
  // a node cut short in flight ran from its attempt's start until now; a Failed or Pending row
  // did not run meanwhile, so its completion is the operator's act, started and finished now
  // (else its duration would count from an attempt that ended long before)
  const inFlight = row.status === 'Queued' || row.status === 'Running';
  st.update(key, { status: 'Running', attempt: Math.max(row.attempt, 1), startedAt: inFlight ? (row.startedAt ?? st.now) : st.now });
  st.emit('node.overridden', key, { by: 'operator', verb: 'complete', from: row.status });
  settleSuccess(st, key, output);
  reopenIfUnfailed(st, 'complete');
}

/**
 * A Failed run whose failing rows are all gone reopens: it reads Running again and the
 * rows cancelled because of the failure return to Pending (with at least one attempt left).
 * Likewise a Cancelled run whose cancel survivors were all retried or completed: the rows
 * its cancel cancelled return to Pending.
 */
function reopenIfUnfailed(st: PlanState, by: string): void {
  const from = st.run.status;
  if (from !== 'Failed' && from !== 'Cancelled') return;
  // a run past its budget stays past it: it is final
  if (st.run.failureClass === 'BudgetExceeded') return;
  const stillBlocking = [...st.rows.values()].some((r) =>
    from === 'Cancelled' ? isSurvivor(r) : r.status === 'Failed' && st.index.nodeByKey.get(r.nodeKey)?.onError !== 'Continue',
  );
  if (stillBlocking) return;
  const collateral = from === 'Cancelled' ? 'RunCancel' : 'RunFailure';
  st.updateRun({ status: 'Running', failureClass: 'None', reason: null, finishedAt: null, ...(from === 'Cancelled' ? { cancelReason: null } : {}) });
  st.emit('run.resumed', null, { reopened: true, by, from });
  for (const r of st.rows.values()) {
    if (r.status !== 'Cancelled' || r.cause !== collateral) continue;
    st.update(r.nodeKey, {
      status: 'Pending',
      attemptLimit: Math.max(r.attemptLimit, r.attempt + 1),
      failureClass: 'None',
      reason: null,
      output: null,
      invocationId: null,
      childRunId: null,
      finishedAt: null,
      deadlineAt: null,
      notBefore: null,
    });
    st.emit('node.retried', r.nodeKey, { by: 'reopen', attempt: r.attempt });
  }
}

/**
 * A steer on a Queued/Running LlmCall/Agent sends it back to Pending on the SAME attempt
 * (the row's attempt and the run's totalAttempts are stepped back by one, so the next
 * admission re-spends exactly that attempt); the old invocation is cancelled and the
 * entry marked applied. Any other row records the entry ignored.
 */
function steer(st: PlanState, key: string, operationId: string, steered: Set<string>): void {
  const row = st.row(key)!;
  const entry = row.steering.find((s) => s.operationId === operationId);
  if (!entry) return;
  const onThisAttempt = entry.attempt === row.attempt || steered.has(key);
  const detail = { operationId, message: entry.message, attempt: entry.attempt };
  const inFlight = row.status === 'Queued' || row.status === 'Running';
  // a second steer of this tick on the row the first one sent back to Pending: judged as the in-flight row it was
  const resteer = row.status === 'Pending' && steered.has(key);
  if (entry.applied || !onThisAttempt || !applies(st, 'steer', key, resteer ? 'Running' : undefined)) {
    st.emit('node.steer-ignored', key, detail);
    return;
  }
  const steering = row.steering.map((s) => (s.operationId === operationId ? { ...s, applied: true } : s));
  if (inFlight) {
    if (row.invocationId) st.cancel.push({ nodeKey: key, invocationId: row.invocationId, reason: 'steered' });
    st.update(key, {
      status: 'Pending',
      attempt: Math.max(0, row.attempt - 1),
      invocationId: null,
      deadlineAt: null,
      queuedAt: null,
      startedAt: null,
      steering,
    });
    st.updateRun({ totalAttempts: Math.max(0, st.run.totalAttempts - 1) });
    steered.add(key);
  } else {
    st.update(key, { steering });
  }
  st.emit('node.steered', key, detail);
}

/**
 * Settle a parked gate from its recorded decision. Every decision succeeds the node:
 * the answer is its output and routing on it is the edges' job, so a Reject is an
 * outcome, not a failure. (When a rejection leaves the run with no End reached, the
 * run reads Cancelled with failure class GateRejected — see recompute.)
 */
function decide(st: PlanState, key: string, operationId: string): void {
  const row = st.row(key)!;
  const node = st.index.nodeByKey.get(key)!;
  const d = row.decision;
  if (!applies(st, 'decide', key) || !d || d.operationId !== operationId || d.applied) return;
  if (node.kind === 'Agent') return resumeAgent(st, key, operationId);
  const validKind = node.kind === 'ChatInput' ? d.decision === 'Answer' : d.decision !== 'Answer';
  if (!validKind) return;
  let output: Json;
  if (node.kind === 'ChatInput') {
    const p = d.payload;
    const text = typeof p === 'object' && p !== null && !Array.isArray(p) ? (p['text'] ?? null) : null;
    output = { decision: 'Answer', text };
  } else {
    output = { decision: d.decision, comment: d.comment, payload: d.payload ?? null, ...approvalOutput(node, row, st.now) };
  }
  st.update(key, { decision: { ...d, applied: true }, pendingDecisionKind: null });
  st.emit('gate.decided', key, { decision: d.decision, operationId });
  settleSuccess(st, key, output);
}

/** A policy gate's output carries who decided and the quorums' standing (`approval`). */
function approvalOutput(node: GraphNode, row: NodeRunState, now: number): { approval?: Json } {
  const policy = gatePolicy(node);
  return policy ? { approval: approvalSummary(gateState(policy, row, now), row.approvals ?? []) } : {};
}

/**
 * A decision on the tool call an Agent parked on: the row goes back to Pending on the SAME
 * attempt (the row's attempt and the run's totalAttempts step back by one, as a steer does, so
 * the admission that queues it re-spends exactly that attempt) and its work item carries the
 * decision (work-item.ts): the worker resumes from its transcript and runs the tool with the
 * approved arguments, or hands the model the refusal.
 */
function resumeAgent(st: PlanState, key: string, operationId: string): void {
  const row = st.row(key)!;
  const d = row.decision!;
  if (row.pendingDecisionKind !== 'ToolCall' || (d.decision !== 'Approve' && d.decision !== 'Reject')) return;
  st.update(key, {
    status: 'Pending',
    attempt: Math.max(0, row.attempt - 1),
    decision: { ...d, applied: true },
    pendingDecisionKind: null,
    invocationId: null,
    deadlineAt: null,
    queuedAt: null,
    notBefore: null,
  });
  st.updateRun({ totalAttempts: Math.max(0, st.run.totalAttempts - 1) });
  st.emit('gate.decided', key, { decision: d.decision, operationId, decisionKind: 'ToolCall' });
}
