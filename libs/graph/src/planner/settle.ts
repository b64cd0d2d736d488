/**
 * Settling rows: success (envelope, size cap, outputSchema, held DecisionModel),
 * failure (retry with backoff, AttemptsExhausted, onError), skip, cancel, and the
 * run failure a FailRun node causes at once.
 */
import { buildEnvelope, checkOutputSize } from '../documents/envelope';
import { storableText, unstorableValues } from '../documents/storable';
import { RETRYABLE_FAILURE_CLASSES, TERMINAL_RUN_STATUSES, type FailureClass, type Json, type JsonObject, type NodeCause, type RetryBackoff } from '../model';
import { validateJson } from '../schema';
import type { PlanState } from './plan-state';
import type { ParkRequest } from './types';
import { retryWithinBudget } from './retry-budget';
import { cancelMapChildren } from './map-children';
import { commitWrites, judgeWrites, withRoutingState } from './state-writes';

/** Reason of rows cancelled because the run failed (human text; the row's cause is `RunFailure`). */
const RUN_FAILURE_CANCEL_PREFIX = 'run failed at node ';

const isObject = (v: Json): v is { [k: string]: Json } => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Settle `key` Succeeded with `output`, or fail it: OutputTooLarge over the size cap;
 * ValidationFailed when the envelope holds what the store cannot keep (U+0000 or a lone
 * surrogate in a string or member name, a number beyond `numeric` — a worker's document is
 * judged here, so no such output ever reaches a commit) or misses the node's outputSchema.
 */
export function settleSuccess(st: PlanState, key: string, output: Json, finishedAt = st.now, childState?: JsonObject): void {
  const row = st.row(key);
  const node = st.index.nodeByKey.get(key);
  if (!row || !node) return;
  const outEdges = st.index.outEdges.get(key) ?? [];
  const held = node.kind === 'DecisionModel' && isObject(output) && output['held'] === true;
  const envelope = buildEnvelope(outEdges, { status: 'succeeded', attempt: row.attempt, output });
  if (held) envelope.branch = null;
  const tooLarge = checkOutputSize(envelope, st.ctx.options.maxOutputJsonBytes);
  if (tooLarge) return settleFailure(st, key, tooLarge.class, tooLarge.reason);
  const unstorable = unstorableValues(envelope, '', 1)[0];
  if (unstorable) return settleFailure(st, key, 'ValidationFailed', `output cannot be stored: at ${unstorable.path}, ${unstorable.message}`);
  if (node.outputSchema) {
    const v = validateJson(node.outputSchema, output);
    if (!v.valid) return settleFailure(st, key, 'ValidationFailed', `output does not match outputSchema: ${v.errors.join('; ')}`);
  }
  // run state: the node's writes are judged now and committed with its status, or fail it
  const writes = st.state ? judgeWrites(st, node, envelope, childState) : null;
  if (writes && !writes.ok) return settleFailure(st, key, 'ValidationFailed', writes.reason);
  if (st.state) withRoutingState(st, outEdges, envelope, writes?.state ?? st.state.values);
  if (held) envelope.branch = null;
  st.update(key, {
    status: 'Succeeded',
    output: envelope,
    finishedAt,
    failureClass: 'None',
    reason: null,
    notBefore: null,
    deadlineAt: null,
    held,
    pendingDecisionKind: held ? 'Operator' : null,
  });
  const completedSeq = st.nextSeq();
  st.emit('node.completed', key, { attempt: row.attempt, branch: envelope.branch, held });
  if (writes) commitWrites(st, key, writes, completedSeq);
}

/**
 * An Agent parks on a tool call a person must approve: the row reads WaitingForApproval
 * (`pendingDecisionKind` 'ToolCall') on the same attempt, with no invocation and no deadline,
 * so it holds no worker and no timer; the run then holds no run slot while nothing else works
 * (recompute.ts). The previous decision is cleared, so the gate takes a new one; `decide`
 * queues the node again (intents.ts).
 */
export function parkToolCall(st: PlanState, key: string, request: ParkRequest): void {
  const row = st.row(key);
  if (!row || row.kind !== 'Agent') return settleFailure(st, key, 'NodeFailed', 'only an Agent parks on a tool call');
  st.update(key, {
    status: 'WaitingForApproval',
    pendingDecisionKind: 'ToolCall',
    decision: null,
    invocationId: null,
    deadlineAt: null,
    notBefore: null,
  });
  st.emit('gate.requested', key, {
    decisionKind: 'ToolCall',
    attempt: row.attempt,
    tool: request.tool,
    step: request.step,
    ...(request.arguments !== null ? { arguments: request.arguments } : {}),
  });
}

/** Backoff before attempt `failedAttempt + 1`: min(maxMs, initialMs × multiplier^(failedAttempt−1)). */
export function backoffMs(b: RetryBackoff, failedAttempt: number): number {
  const raw = b.initialMs * Math.pow(b.multiplier, Math.max(0, failedAttempt - 1));
  return Math.max(0, Math.min(b.maxMs, Number.isFinite(raw) ? raw : b.maxMs));
}

/**
 * Fail the current attempt of `key`. A retryable class within the node's attemptLimit
 * and the run's retry budget (maxTotalAttempts, retries beyond first attempts) goes back to Pending with a backoff; otherwise the row
 * reads Failed (a retryable class becomes AttemptsExhausted, the cause kept in reason),
 * and a FailRun node fails the run at once.
 */
export function settleFailure(st: PlanState, key: string, cls: FailureClass, message: string): void {
  // a worker's message may carry what the store cannot keep (NUL from a tool's error text)
  const reason = storableText(message);
  const row = st.row(key);
  const node = st.index.nodeByKey.get(key);
  if (!row || !node) return;
  const cause: FailureClass = cls === 'None' ? 'NodeFailed' : cls;
  const retryable = RETRYABLE_FAILURE_CLASSES.has(cause);
  const nodeBudget = row.attempt < row.attemptLimit;
  const runBudget = retryWithinBudget(st.rows.values(), st.ctx.options.maxTotalAttempts);
  if (retryable && nodeBudget && runBudget) {
    const notBefore = st.now + backoffMs(node.retryBackoff, row.attempt);
    st.update(key, {
      status: 'Pending',
      failureClass: cause,
      reason,
      invocationId: null,
      deadlineAt: null,
      notBefore,
      // a held decision asked again keeps its held answer between attempts
      output: row.held ? row.output : null,
      finishedAt: null,
    });
    st.emit(cause === 'Interrupted' ? 'node.interrupted' : 'node.failed', key, {
      class: cause,
      reason,
      attempt: row.attempt,
      retrying: true,
    });
    st.emit('node.retried', key, { class: cause, attempt: row.attempt, notBefore });
    return;
  }
  let finalClass: FailureClass = cause;
  let finalReason = reason;
  if (retryable) {
    finalClass = 'AttemptsExhausted';
    finalReason = nodeBudget
      ? `${cause}: ${reason} (run retry budget of ${st.ctx.options.maxTotalAttempts} (MAX_TOTAL_ATTEMPTS) spent)`
      : `${cause}: ${reason} (attempt ${row.attempt} of ${row.attemptLimit})`;
  }
  failNode(st, key, finalClass, finalReason, cause);
}

/** Write the terminal Failed row (no retry judgement) and fail the run unless onError is Continue. */
export function failNode(st: PlanState, key: string, cls: FailureClass, message: string, cause: FailureClass = cls): void {
  const reason = storableText(message);
  const row = st.row(key);
  const node = st.index.nodeByKey.get(key);
  if (!row || !node) return;
  if (row.held && row.output !== null && row.status !== 'Succeeded') return restoreHeld(st, key, cls, reason);
  const outEdges = st.index.outEdges.get(key) ?? [];
  const envelope = buildEnvelope(outEdges, {
    status: 'failed',
    attempt: row.attempt,
    output: null,
    error: { class: cls, reason },
  });
  if (st.state) withRoutingState(st, outEdges, envelope, st.state.values);
  st.update(key, {
    status: 'Failed',
    output: envelope,
    failureClass: cls,
    reason,
    finishedAt: st.now,
    notBefore: null,
    deadlineAt: null,
    pendingDecisionKind: null,
  });
  st.emit('node.failed', key, { class: cls, cause, reason, attempt: row.attempt });
  if (node.onError !== 'Continue' && !st.deferRunFailure) failRun(st, key);
}

/**
 * A held decision asked again whose re-ask failed for good: its call had succeeded before, and
 * the graph may already have acted on that, so it goes back to Succeeded, held, with the
 * answer it gave (still waiting on an operator: retry it again or override an edge); the
 * reason says why the re-ask failed. It never fails the node, nor the run.
 */
function restoreHeld(st: PlanState, key: string, cls: FailureClass, reason: string): void {
  const row = st.row(key)!;
  const why = storableText(`asking again failed (${cls}): ${reason}`);
  st.update(key, {
    status: 'Succeeded',
    output: row.output,
    held: true,
    pendingDecisionKind: 'Operator',
    failureClass: 'None',
    reason: why,
    finishedAt: st.now,
    notBefore: null,
    deadlineAt: null,
  });
  st.emit('node.completed', key, { attempt: row.attempt, branch: null, held: true, reaskFailed: { class: cls, reason: why } });
}

/** Fail the run for the lowest-keyed Failed row that is not onError Continue, if any. */
export function failRunIfAnyFailed(st: PlanState): boolean {
  let lowest: string | null = null;
  for (const r of st.rows.values()) {
    if (r.status !== 'Failed' || st.index.nodeByKey.get(r.nodeKey)?.onError === 'Continue') continue;
    if (lowest === null || r.nodeKey < lowest) lowest = r.nodeKey;
  }
  if (lowest === null) return false;
  failRun(st, lowest);
  return true;
}

/** The run fails at once with `key`'s class; every other live row is cancelled. */
export function failRun(st: PlanState, key: string): void {
  const row = st.row(key);
  if (!row) return;
  const reason = `node '${key}' failed (${row.failureClass}): ${row.reason ?? ''}`;
  if (st.run.status !== 'Failed') {
    st.updateRun({ status: 'Failed', failureClass: row.failureClass, reason, finishedAt: st.now });
    st.emit('run.failed', null, { nodeKey: key, class: row.failureClass });
  } else if (st.run.reason !== reason && st.run.failureClass !== 'BudgetExceeded') {
    st.updateRun({ failureClass: row.failureClass, reason });
  }
  cancelLiveWork(st, `${RUN_FAILURE_CANCEL_PREFIX}'${key}'`, 'RunFailure');
}

/** Cancel every Queued/Running/WaitingForApproval row (children cancelled with their node). */
export function cancelLiveWork(st: PlanState, reason: string, cause: NodeCause): void {
  for (const row of st.rows.values()) {
    if (row.status === 'Queued' || row.status === 'Running' || row.status === 'WaitingForApproval') {
      cancelNode(st, row.nodeKey, reason, cause);
    }
  }
}

/** Cancel one row for `cause`: its invocation (and child run) are cancelled; late results are ignored. */
export function cancelNode(st: PlanState, key: string, reason: string, cause: NodeCause): void {
  const row = st.row(key);
  if (!row) return;
  // Work queued (or a child started) in this same plan call was never sent: drop it instead of cancelling it.
  if ((row.status === 'Queued' || row.status === 'Running') && row.invocationId) {
    const queuedNow = st.enqueue.findIndex((w) => w.invocationId === row.invocationId);
    if (queuedNow >= 0) st.enqueue.splice(queuedNow, 1);
    else st.cancel.push({ nodeKey: key, invocationId: row.invocationId, reason });
  }
  if (row.status === 'Running' && row.kind === 'Map') cancelMapChildren(st, key);
  if (row.status === 'Running' && row.childRunId && !st.cancelChildren.includes(row.childRunId)) {
    const startedNow = st.startChildren.findIndex((c) => c.childRunId === row.childRunId);
    const child = st.snapshot.children.find((c) => c.childRunId === row.childRunId);
    if (startedNow >= 0) st.startChildren.splice(startedNow, 1);
    else if (!child || !TERMINAL_RUN_STATUSES.has(child.status)) st.cancelChildren.push(row.childRunId);
  }
  st.update(key, {
    status: 'Cancelled',
    failureClass: 'Cancelled',
    ...(row.kind === 'Map' ? { map: null } : {}),
    cause,
    reason,
    finishedAt: st.now,
    notBefore: null,
    deadlineAt: null,
    pendingDecisionKind: null,
  });
  st.emit('node.cancelled', key, { reason, cause });
}

/** Skip a Pending row with one cause. */
/**
 * An operator declares a Pending node, or a gate waiting on a person, not taken: it reads
 * Skipped (cause NotTaken) with the envelope `{status: "skipped", output: null}`, and its
 * out-edges route on that envelope like a settled node's (unconditional ones Satisfied,
 * conditional ones evaluated against it), so its dependents proceed. A waiting gate's open
 * request is withdrawn: nobody keeps being asked for a decision the operator made moot.
 */
export function skipNotTaken(st: PlanState, key: string): void {
  const row = st.row(key);
  if (!row || (row.status !== 'Pending' && row.status !== 'WaitingForApproval')) return;
  const withdrawn = row.status === 'WaitingForApproval' ? withdrawRequest(st, key) : null;
  const envelope = buildEnvelope(st.index.outEdges.get(key) ?? [], { status: 'skipped', attempt: row.attempt, output: null });
  st.update(key, {
    status: 'Skipped',
    cause: 'NotTaken',
    output: envelope,
    reason: 'skipped by operator',
    finishedAt: st.now,
    notBefore: null,
    deadlineAt: null,
  });
  st.emit('node.skipped', key, { reason: 'skipped by operator', by: 'operator', notTaken: true, ...(withdrawn ? { withdrawn } : {}) });
}

/**
 * Withdraw the open request of a gate waiting on a person (Pause/ChatInput): the row goes
 * back to Pending without its pending decision, so the caller can skip it. Returns the
 * decision kind that was asked for.
 */
export function withdrawRequest(st: PlanState, key: string): string | null {
  const row = st.row(key);
  if (!row || row.status !== 'WaitingForApproval') return null;
  const kind = row.pendingDecisionKind ?? 'Approve';
  st.update(key, { status: 'Pending', pendingDecisionKind: null });
  return kind;
}

export function skipNode(st: PlanState, key: string, reason: string, detail: Record<string, string> = {}): void {
  const row = st.row(key);
  if (!row || row.status !== 'Pending') return;
  st.update(key, {
    status: 'Skipped',
    output: { status: 'skipped', attempt: row.attempt, branch: null, output: null },
    reason,
    finishedAt: st.now,
    notBefore: null,
    deadlineAt: null,
  });
  st.emit('node.skipped', key, { reason, ...detail });
}
