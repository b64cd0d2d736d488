/**
 * The Cancelling drain (CONTRACT §4, §5: the run reads Cancelling until drained), and what
 * a cancel that could not reach every worker leaves behind.
 *
 * While Cancelling, no row is admitted, and each live row is handled by what runs it:
 * - WaitingForApproval (a person, no worker): cancelled at once.
 * - Loop/Subworkflow: its child run is cancelled first; the row is cancelled once the
 *   snapshot shows the child ended (the child's own drain is bounded by the same grace).
 * - Queued/Running lane work (Tool, LlmCall, Agent, DecisionModel): sent its cancel ONCE and
 *   marked (failure class `Cancelled`, reason `run cancelled…`, `deadlineAt` = now +
 *   CANCEL_DRAIN_GRACE_MS); it stays live until an outcome for that invocation arrives — any
 *   outcome confirms (the worker aborted, finished, failed or was found dead) and the row
 *   reads Cancelled — or the grace deadline passes: then the row is a SURVIVOR, Failed with
 *   class Interrupted and a reason saying the work may still be running.
 *   Queued rows wait like Running ones: a row reads Queued until the start report lands, so
 *   its job may already run; a job no worker took yet is refused by whichever worker takes
 *   it (the lane worker remembers recent cancels) and that refusal is the confirmation. Only
 *   a job still unclaimed at the deadline (no free worker) becomes a survivor — truthfully,
 *   since it may still start.
 * The run reads Cancelled once nothing is live; `run.cancelled` lists the survivors
 * `[{ nodeKey, invocationId }]`. A retry (or complete) of every survivor reopens the run:
 * it reads Running again and the rows the cancel cancelled return to Pending.
 */
import { buildEnvelope } from '../documents/envelope';
import { TERMINAL_RUN_STATUSES } from '../model';
import type { PlanState } from './plan-state';
import { cancelMapChildren } from './map-children';
import { cancelNode } from './settle';
import type { NodeRunState, WorkOutcome } from './types';

/** Reason of rows cancelled by a run cancel (human text; their cause is `RunCancel`). */
const RUN_CANCEL_PREFIX = 'run cancelled';

/** Reason of a survivor (human text; its cause is `CancelUnconfirmed`). */
export const CANCEL_UNCONFIRMED_PREFIX = 'cancel not confirmed by the worker';

/** The reason the drain writes on the rows it cancels. */
export function runCancelReason(cancelReason: string | null): string {
  return cancelReason ? `${RUN_CANCEL_PREFIX}: ${cancelReason}` : RUN_CANCEL_PREFIX;
}

/** A Queued/Running lane row that was sent its cancel and waits for its worker's confirmation. */
export function awaitingCancel(row: NodeRunState): boolean {
  return (row.status === 'Queued' || row.status === 'Running') && row.failureClass === 'Cancelled' && row.invocationId !== null && row.childRunId === null;
}

/** A row a cancel could not reach (see module doc). */
export function isSurvivor(row: { status: string; cause: string }): boolean {
  return row.status === 'Failed' && row.cause === 'CancelUnconfirmed';
}

/** An outcome for a row awaiting its cancel: the worker confirmed, the row reads Cancelled. */
export function confirmCancel(st: PlanState, key: string, outcome: WorkOutcome): void {
  const row = st.row(key);
  if (!row) return;
  const reason = row.reason ?? runCancelReason(st.run.cancelReason);
  st.update(key, {
    status: 'Cancelled',
    failureClass: 'Cancelled',
    cause: 'RunCancel',
    reason,
    finishedAt: st.now,
    notBefore: null,
    deadlineAt: null,
  });
  st.emit('node.cancelled', key, {
    reason,
    confirmed: true,
    invocationId: row.invocationId,
    outcome: outcome.ok === 'park' ? 'parked' : outcome.ok ? 'succeeded' : outcome.failureClass,
  });
}

/** Cancel or wait on every live row; the run reads Cancelled when nothing is live. */
export function drain(st: PlanState): void {
  const reason = runCancelReason(st.run.cancelReason);
  let waiting = false;
  for (const row of [...st.rows.values()]) {
    if (row.status !== 'Queued' && row.status !== 'Running' && row.status !== 'WaitingForApproval') continue;
    if (row.status === 'Running' && row.kind === 'Map') {
      // its children are cancelled first: the row waits until every one it keeps working ended
      if (cancelMapChildren(st, row.nodeKey)) waiting = true;
      else cancelNode(st, row.nodeKey, reason, 'RunCancel');
      continue;
    }
    if (row.status === 'Running' && row.childRunId) {
      const child = st.snapshot.children.find((c) => c.childRunId === row.childRunId);
      // Children are cancelled first: the row waits until the snapshot shows its child ended.
      if (!(child && TERMINAL_RUN_STATUSES.has(child.status))) {
        if (!st.cancelChildren.includes(row.childRunId)) st.cancelChildren.push(row.childRunId);
        waiting = true;
        continue;
      }
      cancelNode(st, row.nodeKey, reason, 'RunCancel');
      continue;
    }
    // A gate (or an inline row a crash left Running) has no worker to confirm anything.
    // (Nothing is enqueued while Cancelling, so every invocation here was sent earlier.)
    if (row.status === 'WaitingForApproval' || row.invocationId === null) {
      cancelNode(st, row.nodeKey, reason, 'RunCancel');
      continue;
    }
    if (!awaitingCancel(row)) {
      st.cancel.push({ nodeKey: row.nodeKey, invocationId: row.invocationId, reason });
      st.update(row.nodeKey, { failureClass: 'Cancelled', reason, deadlineAt: st.now + st.ctx.options.cancelDrainGraceMs });
      waiting = true;
      continue;
    }
    if (row.deadlineAt !== null && row.deadlineAt > st.now) {
      waiting = true;
      continue;
    }
    survive(st, row);
  }
  if (waiting) return;
  // Survivors of earlier ticks of this drain too (a child run may have kept it going); a
  // reopened run had none left, so every survivor here is this cancel's.
  const survivors = [...st.rows.values()].filter(isSurvivor).map((r) => ({ nodeKey: r.nodeKey, invocationId: r.invocationId ?? '' }));
  const base = st.run.cancelReason ?? 'run cancelled';
  const runReason =
    survivors.length === 0
      ? base
      : `${base}; cancel not confirmed for ${survivors.map((s) => `'${s.nodeKey}'`).join(', ')} (the work may still be running)`;
  st.updateRun({ status: 'Cancelled', failureClass: 'Cancelled', reason: runReason, finishedAt: st.now });
  st.emit('run.cancelled', null, { reason: base, survivors });
}

/** The grace deadline passed without an outcome: the row reads Failed (Interrupted), retryable by the operator. */
function survive(st: PlanState, row: NodeRunState): void {
  const reason = `${CANCEL_UNCONFIRMED_PREFIX} by its grace deadline (CANCEL_DRAIN_GRACE_MS): the work may still be running`;
  const envelope = buildEnvelope(st.index.outEdges.get(row.nodeKey) ?? [], {
    status: 'failed',
    attempt: row.attempt,
    output: null,
    error: { class: 'Interrupted', reason },
  });
  st.update(row.nodeKey, {
    status: 'Failed',
    failureClass: 'Interrupted',
    cause: 'CancelUnconfirmed',
    reason,
    output: envelope,
    finishedAt: st.now,
    notBefore: null,
    deadlineAt: null,
  });
  st.emit('node.failed', row.nodeKey, {
    class: 'Interrupted',
    reason,
    attempt: row.attempt,
    invocationId: row.invocationId,
    cancelUnconfirmed: true,
  });
}
