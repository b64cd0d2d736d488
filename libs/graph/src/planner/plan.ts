/**
 * `plan(snapshot, ctx)`: the pure, deterministic tick decision. In order:
 * start a Pending run (tenant slot permitting) → operator intents → WorkStarted →
 * WorkResults → child runs → deadlines → run budget → drain (Cancelling: waits for lane workers to
 * confirm, up to CANCEL_DRAIN_GRACE_MS) or the admission fixpoint → status recompute → wakeAt (a Pending run without a tenant slot: `ctx.slotRetryMs` later). It never throws: a snapshot it cannot read yields a
 * Failed run with a reason.
 */
import { TERMINAL_RUN_STATUSES } from '../model';
import { advance } from './advance';
import { budgetWakeAt, checkBudget, withUsage } from './budget-check';
import { applyIntents } from './intents';
import { PlanState } from './plan-state';
import { emptyPlan, isEmptyPlan } from './plan-result';
import { pendingExpiry } from './backlog';
import { recompute } from './recompute';
import { failRunIfAnyFailed } from './settle';
import { withdrawStaleWaitpoints } from './wait';
import { applyChildren, applyDeadlines, applyResults, applyStarted } from './results';
import type { PlanContext, PlanResult, RunSnapshot } from './types';
import { snapshotProblem } from './validate-snapshot';

export function plan(snapshot: RunSnapshot, ctx: PlanContext): PlanResult {
  try {
    const problem = snapshotProblem(snapshot, ctx);
    if (problem) return badSnapshot(snapshot, ctx, `bad snapshot: ${problem}`);
    return planChecked(snapshot, ctx);
  } catch (err) {
    return badSnapshot(snapshot, ctx, `planner error: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function planChecked(snapshot: RunSnapshot, ctx: PlanContext): PlanResult {
  const waiting = scheduledWait(snapshot, ctx);
  if (waiting) return waiting;
  const st = new PlanState(snapshot, ctx);
  // a delayed start whose time came is an ordinary Pending run from here: fair share decides below
  if (st.run.status === 'Scheduled') st.updateRun({ status: 'Pending' });
  const expiry = pendingExpiry(snapshot.run, ctx.pendingRunTtlMs, ctx.now);
  if (expiry.expired && !snapshot.intents.some((i) => i.kind === 'cancel')) {
    // never admitted within the TTL: it ends before admission (its intents stay unapplied; a cancel wins)
    st.updateRun({ status: 'Failed', failureClass: 'Expired', reason: expiry.reason, finishedAt: ctx.now });
    st.emit('run.failed', null, { class: 'Expired', reason: expiry.reason });
    for (const i of snapshot.intents) st.consumedIntentIds.push(i.id);
    for (const s of snapshot.started) st.consumedInvocationIds.push(s.invocationId);
    for (const r of snapshot.results) st.consumedInvocationIds.push(r.invocationId);
    return finish(st);
  }
  if (st.run.status === 'Pending' && admissible(snapshot) && !snapshot.intents.some((i) => i.kind === 'cancel')) {
    st.updateRun({ status: 'Running', startedAt: ctx.now });
    st.emit('run.started', null, {});
  }
  applyIntents(st);
  if (st.run.status !== 'Pending') {
    applyStarted(st);
    st.deferRunFailure = true;
    applyResults(st);
    applyChildren(st);
    applyDeadlines(st);
    st.deferRunFailure = false;
    if (st.run.status !== 'Cancelling' && !TERMINAL_RUN_STATUSES.has(st.run.status)) failRunIfAnyFailed(st);
  } else {
    for (const s of snapshot.started) st.consumedInvocationIds.push(s.invocationId);
    for (const r of snapshot.results) st.consumedInvocationIds.push(r.invocationId);
  }
  // usage landed above and the clock moved: a run past its budget admits nothing more
  checkBudget(st);
  if (st.run.status === 'Running' || st.run.status === 'WaitingForApproval') advance(st);
  recompute(st);
  return askForSlotAgain(snapshot, ctx, finish(st));
}

/**
 * A Scheduled run before its `notBefore`: nothing to do but sleep until then (the wake index
 * brings it back; an early wake, e.g. after a reschedule raced a sweep, costs one read). Its
 * intents stay unapplied: the only verb that reaches a Scheduled run, cancel, moves it out of
 * Scheduled first. Null when the run is not (or no longer) waiting.
 */
function scheduledWait(snapshot: RunSnapshot, ctx: PlanContext): PlanResult | null {
  const at = snapshot.run.notBefore ?? null;
  if (snapshot.run.status !== 'Scheduled' || at === null || at <= ctx.now) return null;
  return emptyPlan(at);
}

/** A Pending run may start: a tenant slot is free and, with a concurrency key, its key has a place. */
function admissible(snapshot: RunSnapshot): boolean {
  return snapshot.runSlotAvailable && snapshot.concurrencyKeyAvailable !== false;
}

/** A Pending run still without a tenant slot (or a concurrency key place) asks again after `ctx.slotRetryMs` (see PlanContext). */
function askForSlotAgain(snapshot: RunSnapshot, ctx: PlanContext, result: PlanResult): PlanResult {
  // a delayed start released this tick without a slot waits like any Pending run
  const released = snapshot.run.status === 'Scheduled' && result.run?.set.status === 'Pending';
  if (!(released || (snapshot.run.status === 'Pending' && isEmptyPlan(result))) || admissible(snapshot)) return result;
  const expiry = pendingExpiry(snapshot.run, ctx.pendingRunTtlMs, ctx.now);
  const expiresAt = expiry.expired ? null : expiry.at;
  const retryAt = ctx.slotRetryMs === undefined ? null : ctx.now + ctx.slotRetryMs;
  const wakeAt = retryAt === null ? expiresAt : expiresAt === null ? retryAt : Math.min(retryAt, expiresAt);
  return wakeAt === null ? result : { ...result, wakeAt };
}

function finish(st: PlanState): PlanResult {
  withdrawStaleWaitpoints(st);
  let wakeAt: number | null = null;
  for (const row of st.rows.values()) {
    // a parked approval gate's deadline is its policy's next escalation or timeout (approval-gate.ts)
    const gateAt = row.status === 'WaitingForApproval' && row.kind === 'Pause' ? row.deadlineAt : null;
    for (const t of [row.status === 'Pending' ? row.notBefore : null, row.status === 'Queued' || row.status === 'Running' ? row.deadlineAt : null, gateAt]) {
      if (t !== null && t > st.now && (wakeAt === null || t < wakeAt)) wakeAt = t;
    }
  }
  const budgetAt = budgetWakeAt(st);
  if (budgetAt !== null && budgetAt > st.now && (wakeAt === null || budgetAt < wakeAt)) wakeAt = budgetAt;
  return {
    run: st.runPatch(),
    nodes: st.nodePatches(),
    events: withUsage(st, st.events),
    enqueue: st.enqueue,
    cancel: st.cancel,
    startChildren: st.startChildren,
    cancelChildren: st.cancelChildren,
    consumedIntentIds: st.consumedIntentIds,
    consumedInvocationIds: st.consumedInvocationIds,
    wakeAt,
    ...(st.stateWrites.length > 0 ? { stateWrites: st.stateWrites } : {}),
    ...(st.consumedSignals.length > 0 ? { consumedSignals: st.consumedSignals } : {}),
    ...(st.createdWaitpoints.length > 0 ? { createdWaitpoints: st.createdWaitpoints } : {}),
    ...(st.resolvedWaitpoints.length > 0 ? { resolvedWaitpoints: st.resolvedWaitpoints } : {}),
  };
}

/** Fail the run (unless already terminal) and cancel its in-flight work; consume every input. */
function badSnapshot(snapshot: RunSnapshot, _ctx: PlanContext, reason: string): PlanResult {
  const run = (snapshot as Partial<RunSnapshot>).run;
  const nodes = Array.isArray(snapshot?.nodes) ? snapshot.nodes : [];
  const result: PlanResult = {
    ...emptyPlan(null),
    consumedIntentIds: (Array.isArray(snapshot?.intents) ? snapshot.intents : []).map((i) => i?.id).filter((x): x is string => typeof x === 'string'),
    consumedInvocationIds: [
      ...(Array.isArray(snapshot?.results) ? snapshot.results : []),
      ...(Array.isArray(snapshot?.started) ? snapshot.started : []),
    ]
      .map((r) => r?.invocationId)
      .filter((x): x is string => typeof x === 'string'),
  };
  if (!run || typeof run !== 'object' || TERMINAL_RUN_STATUSES.has(run.status)) return result;
  result.run = {
    expectVersion: run.version,
    set: { status: 'Failed', failureClass: 'ValidationFailed', reason, finishedAt: _ctx?.now ?? null },
  };
  result.events.push({ kind: 'run.failed', nodeKey: null, detail: { class: 'ValidationFailed', reason: reason.slice(0, 500) } });
  for (const row of nodes) {
    if (!row || typeof row !== 'object') continue;
    if ((row.status === 'Queued' || row.status === 'Running') && typeof row.invocationId === 'string') {
      result.cancel.push({ nodeKey: row.nodeKey, invocationId: row.invocationId, reason });
    }
    if (row.childRunId && row.status === 'Running') result.cancelChildren.push(row.childRunId);
    if (row.status === 'Running' && Array.isArray(row.map?.live)) for (const l of row.map.live) result.cancelChildren.push(l.childRunId);
  }
  return result;
}
