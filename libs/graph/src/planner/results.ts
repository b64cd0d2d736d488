/**
 * What came back since the last tick: WorkStarted (Queued → Running), WorkResults
 * (settled only when the invocation id matches a Queued/Running row; otherwise ignored
 * and still consumed), deadlines, and child runs (Subworkflow output, Loop iterations).
 */
import { fireDueWaits, isParkedWait } from './wait';
import { settleApprovalGates } from './approval-gate';
import { evaluateCondition } from '../conditions';
import { buildEnvelope, utf8ByteLength } from '../documents/envelope';
import { CONDITION_OPS, TERMINAL_RUN_STATUSES, type EdgeCondition, type Json, type JsonObject, type OutputEnvelope } from '../model';
import { chargeAttempt, chargeChild } from './budget-check';
import { awaitingCancel, confirmCancel } from './drain';
import { applyMapChildren } from './map';
import type { PlanState } from './plan-state';
import { parkToolCall, settleFailure, settleSuccess } from './settle';
import type { ChildRunState, NodeRunState } from './types';

const inFlight = (row: NodeRunState | undefined): row is NodeRunState =>
  row !== undefined && (row.status === 'Queued' || row.status === 'Running');

export function applyStarted(st: PlanState): void {
  for (const s of st.snapshot.started) {
    st.consumedInvocationIds.push(s.invocationId);
    const row = st.row(s.nodeKey);
    if (!row || row.invocationId !== s.invocationId || row.status !== 'Queued') continue;
    st.update(s.nodeKey, { status: 'Running', startedAt: s.at });
    st.emit('node.started', s.nodeKey, { attempt: row.attempt, invocationId: s.invocationId });
  }
}

/**
 * Settles the results in arrival order; in a graph that keeps run state, in node key order
 * (a node's own results in arrival order), so writes landing in one tick commit in an order
 * that does not depend on which worker answered first.
 */
export function applyResults(st: PlanState): void {
  const results = st.state ? [...st.snapshot.results].sort((a, b) => (a.nodeKey < b.nodeKey ? -1 : a.nodeKey > b.nodeKey ? 1 : 0)) : st.snapshot.results;
  for (const r of results) {
    st.consumedInvocationIds.push(r.invocationId);
    const row = st.row(r.nodeKey);
    if (!inFlight(row) || row.invocationId !== r.invocationId) continue;
    // the model's tokens were spent whatever the planner makes of the answer (a cancel included);
    // a resumed Agent's output counts its whole transcript, its outcome what this invocation spent
    if (r.outcome.usage) chargeAttempt(st, row.kind, { usage: r.outcome.usage });
    else if (r.outcome.ok === true) chargeAttempt(st, row.kind, r.outcome.output);
    // A row sent its cancel by the drain: any outcome of that invocation confirms it.
    if (st.run.status === 'Cancelling' && awaitingCancel(row)) {
      confirmCancel(st, r.nodeKey, r.outcome);
      continue;
    }
    if (row.status === 'Queued') {
      st.update(r.nodeKey, { status: 'Running', startedAt: r.outcome.startedAt ?? r.outcome.finishedAt });
      st.emit('node.started', r.nodeKey, { attempt: row.attempt, invocationId: r.invocationId });
    }
    if (r.outcome.ok === 'park') parkToolCall(st, r.nodeKey, r.outcome.request);
    else if (r.outcome.ok) settleSuccess(st, r.nodeKey, r.outcome.output, r.outcome.finishedAt);
    else settleFailure(st, r.nodeKey, r.outcome.failureClass, r.outcome.reason);
  }
}

/**
 * Queued/Running work past its deadline fails Timeout and its invocation is cancelled. A row
 * awaiting its cancel confirmation carries the drain's grace deadline instead: the drain judges it.
 */
export function applyDeadlines(st: PlanState): void {
  fireDueWaits(st);
  settleApprovalGates(st);
  for (const row of st.rows.values()) {
    if (!inFlight(row) || row.deadlineAt === null || row.deadlineAt > st.now) continue;
    // a parked Wait's deadline is its wake time, not a timeout (fireDueWaits)
    if (isParkedWait(row)) continue;
    if (st.run.status === 'Cancelling' && awaitingCancel(row)) continue;
    if (row.invocationId) st.cancel.push({ nodeKey: row.nodeKey, invocationId: row.invocationId, reason: 'deadline passed' });
    settleFailure(st, row.nodeKey, 'Timeout', `attempt ${row.attempt} passed its deadline`);
  }
}

/** Settle Loop/Subworkflow rows whose current child run reached a terminal status. */
export function applyChildren(st: PlanState): void {
  // While Cancelling the drain owns child-backed rows: a child that ended cancels its node.
  if (st.run.status === 'Cancelling') return;
  applyMapChildren(st);
  for (const row of [...st.rows.values()]) {
    if (row.status !== 'Running' || !row.childRunId) continue;
    const child = st.snapshot.children.find((c) => c.childRunId === row.childRunId);
    if (!child) continue;
    if (TERMINAL_RUN_STATUSES.has(child.status)) chargeChild(st, child);
    if (child.status === 'Completed') {
      if (row.kind === 'Loop') iterate(st, row, child);
      else settleSuccess(st, row.nodeKey, child.output, st.now, child.state ?? undefined);
    } else if (child.status === 'Failed') {
      settleFailure(st, row.nodeKey, 'NodeFailed', `child run ${child.childRunId} failed (${child.failureClass}): ${child.reason ?? ''}`);
    } else if (child.status === 'Cancelled') {
      settleFailure(st, row.nodeKey, 'Cancelled', `child run ${child.childRunId} was cancelled: ${child.reason ?? ''}`);
    }
  }
}

function exitConditionOf(config: JsonObject): EdgeCondition | null {
  const c = config['exitCondition'];
  if (typeof c !== 'object' || c === null || Array.isArray(c)) return null;
  const path = c['path'];
  const opName = c['op'];
  const op = CONDITION_OPS.find((o) => typeof opName === 'string' && o.toLowerCase() === opName.toLowerCase());
  if (typeof path !== 'string' || !op) return null;
  const value = c['value'];
  return { path, op, value: typeof value === 'object' ? null : (value ?? null) };
}

function iterate(st: PlanState, row: NodeRunState, child: ChildRunState): void {
  const node = st.index.nodeByKey.get(row.nodeKey);
  if (!node) return;
  const loop = row.loop ?? { iteration: 1, results: [], last: null };
  const results = [...loop.results, child.output];
  const body: OutputEnvelope = { status: 'succeeded', attempt: loop.iteration, branch: null, output: child.output };
  const exit = exitConditionOf(node.config);
  const max = typeof node.config['maxIterations'] === 'number' ? node.config['maxIterations'] : 1;
  let exitReason: 'condition' | 'maxIterations' | null = null;
  if (exit && safeEval(exit, body)) exitReason = 'condition';
  else if (loop.iteration >= max) exitReason = 'maxIterations';
  if (exitReason) {
    const output = capResults(st, row, { iterations: loop.iteration, exitReason, last: child.output, results });
    st.update(row.nodeKey, { loop: { iteration: loop.iteration, results: [], last: child.output } });
    return settleSuccess(st, row.nodeKey, output);
  }
  const childRunId = st.ctx.newId();
  const iteration = loop.iteration + 1;
  st.update(row.nodeKey, { childRunId, loop: { iteration, results: trimResults(st, results), last: child.output } });
  const definitionId = typeof node.config['body'] === 'string' ? node.config['body'] : '';
  st.startChildren.push({ nodeKey: row.nodeKey, childRunId, definitionId, input: child.output });
  st.emit('node.started', row.nodeKey, { attempt: row.attempt, childRunId, iteration });
}

function safeEval(c: EdgeCondition, env: OutputEnvelope): boolean {
  try {
    return evaluateCondition(c, env);
  } catch {
    return false;
  }
}

/** Keep the newest results that fit MAX_OUTPUT_JSON_BYTES (with room for the rest of the envelope). */
function trimResults(st: PlanState, results: Json[]): Json[] {
  const budget = st.ctx.options.maxOutputJsonBytes;
  const kept = [...results];
  while (kept.length > 0 && utf8ByteLength(kept) > budget) kept.shift();
  return kept;
}

function capResults(st: PlanState, row: NodeRunState, out: JsonObject & { results: Json[] }): JsonObject {
  const outEdges = st.index.outEdges.get(row.nodeKey) ?? [];
  const results = [...out.results];
  const fits = () =>
    utf8ByteLength(buildEnvelope(outEdges, { status: 'succeeded', attempt: row.attempt, output: { ...out, results } })) <=
    st.ctx.options.maxOutputJsonBytes;
  while (results.length > 0 && !fits()) results.shift();
  return { ...out, results };
}
