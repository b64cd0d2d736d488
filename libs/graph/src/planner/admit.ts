/**
 * Admitting an eligible Pending row: inline kinds execute at once, gates park,
 * work kinds are queued with a fresh invocation, Loop/Subworkflow start a child run.
 * First/quorum joins cancel the sources that can now only feed a settled decision.
 */
import { resolvePath } from '../conditions';
import { inputDocumentOf } from '../documents/input-document';
import { inlineOutput, inputDocumentAsJson } from '../documents/inline-output';
import { HUMAN_KINDS, INLINE_KINDS, LANE_OF_KIND, type GraphNode, type InputDocument, type Json, type JsonObject } from '../model';
import { validateJson } from '../schema';
import { renderConfigMember, templateLimitsOf, templateScope, type TemplateLimits } from '../template/render';
import type { Admission } from './admission';
import { completeRun } from './complete-run';
import { beginMap, childPinOf, mapItems } from './map';
import { satisfiedPredecessors } from './edge-verdict';
import type { PlanState } from './plan-state';
import { attemptWithinBudget } from './budget-check';
import { retryWithinBudget } from './retry-budget';
import { cancelNode, failNode, settleSuccess } from './settle';
import { workItemOf } from './work-item';
import { parkArms } from './wait';
import { gateDeadline, gatePolicy } from './approval-gate';

/** Deepest nesting of child runs (CONTRACT §2: depth ≤ 5). */
export const MAX_NESTING_DEPTH = 5;

export function admitNode(st: PlanState, node: GraphNode, adm: Extract<Admission, { kind: 'eligible' }>): void {
  const row = st.row(node.key);
  if (!row || row.status !== 'Pending') return;
  if (node.joinPolicy === 'First' || typeof node.joinPolicy === 'object') cancelLosers(st, node, adm);
  const doc = inputDocumentFor(st, node.key);
  if (node.inputSchema) {
    const v = validateJson(node.inputSchema, inputDocumentAsJson(doc));
    if (!v.valid) {
      st.update(node.key, { input: doc, attempt: Math.max(row.attempt, 1), startedAt: st.now });
      return failNode(st, node.key, 'ValidationFailed', `input does not match inputSchema: ${v.errors.join('; ')}`);
    }
  }
  if (INLINE_KINDS.has(node.kind)) return runInline(st, node, doc);
  if (HUMAN_KINDS.has(node.kind)) return parkGate(st, node, doc);
  if (node.kind === 'Wait') return parkWait(st, node, doc);
  if (node.kind === 'Loop' || node.kind === 'Subworkflow') return startChild(st, node, doc);
  if (node.kind === 'Map') return startMap(st, node, doc);
  return queueWork(st, node, doc);
}

/** The row's input document, with an operator's `PUT …/input` replacing its `input` member. */
export function inputDocumentFor(st: PlanState, key: string): InputDocument {
  const doc = inputDocumentOf(st.run.input, satisfiedPredecessors(st, key), st.rows, st.state?.values);
  const override = st.row(key)?.inputOverride;
  return override ? { ...doc, input: override.input as InputDocument['input'] } : doc;
}

function cancelLosers(st: PlanState, node: GraphNode, adm: Extract<Admission, { kind: 'eligible' }>): void {
  for (const edge of adm.pending) {
    const src = st.row(edge.from);
    if (!src || !['Pending', 'Queued', 'Running'].includes(src.status)) continue;
    const outs = st.index.outEdges.get(edge.from) ?? [];
    if (outs.every((e) => e.to === node.key)) cancelNode(st, edge.from, `cancelled: join '${node.key}' was already satisfied`, 'JoinSatisfied');
  }
}

function runInline(st: PlanState, node: GraphNode, doc: InputDocument): void {
  const row = st.row(node.key)!;
  const rendered = endTemplateResult(st, node, doc);
  const output = rendered !== null && 'value' in rendered ? { outcome: node.config['outcome'] ?? null, result: rendered.value } : (inlineOutput(node, doc, st.run.input) ?? {});
  const attempt = row.attempt + 1; // read before update: it changes the row in place
  st.update(node.key, {
    status: 'Running',
    attempt,
    input: doc,
    startedAt: st.now,
    failureClass: 'None',
    reason: null,
    notBefore: null,
  });
  st.emit('node.started', node.key, { attempt, inline: true });
  if (rendered !== null && 'error' in rendered) return failNode(st, node.key, 'ValidationFailed', rendered.error);
  settleSuccess(st, node.key, output);
  // an End with stopRun completes the run the moment it succeeds, whatever else still works
  if (node.kind === 'End' && node.config['stopRun'] === true && st.row(node.key)?.status === 'Succeeded') {
    completeRun(st, node.key, { stopRun: true });
  }
}

/**
 * An End's `outputTemplate` rendered over its input document: its value becomes
 * output.result; a failure (a missing value, a cap) fails the End ValidationFailed.
 * Null when the node has no template.
 */
function endTemplateResult(st: PlanState, node: GraphNode, doc: InputDocument): { value: Json } | { error: string } | null {
  if (node.kind !== 'End' || node.config['outputTemplate'] === undefined) return null;
  return renderConfigMember(node.key, 'outputTemplate', node.config['outputTemplate'], templateScope(doc), templateLimitsOf(st.ctx.options));
}

function parkGate(st: PlanState, node: GraphNode, doc: InputDocument): void {
  const row = st.row(node.key)!;
  const decisionKind = node.kind === 'ChatInput' ? 'Answer' : 'Approve';
  const attempt = row.attempt + 1; // read before update: it changes the row in place
  st.update(node.key, {
    status: 'WaitingForApproval',
    attempt,
    input: doc,
    startedAt: st.now,
    pendingDecisionKind: decisionKind,
    decision: null,
    // an approval policy's next escalation or timeout: the run's wake_at brings the tick (approval-gate.ts)
    deadlineAt: gateDeadline(node, st.now),
    approvals: null,
    failureClass: 'None',
    reason: null,
    notBefore: null,
  });
  st.emit('node.started', node.key, { attempt });
  st.emit('gate.requested', node.key, { decisionKind, ...(gatePolicy(node) ? { approval: true } : {}) });
}

function queueWork(st: PlanState, node: GraphNode, doc: InputDocument): void {
  const row = st.row(node.key)!;
  const lane = LANE_OF_KIND[node.kind];
  if (!lane) return failNode(st, node.key, 'ValidationFailed', `node kind '${node.kind}' has no executor`);
  if (!spendAttempt(st, node.key)) return;
  const invocationId = st.ctx.newId();
  const attempt = row.attempt + 1;
  const timeoutSeconds = node.timeoutSeconds ?? st.ctx.options.defaultNodeTimeoutSeconds;
  const deadlineAt = st.now + timeoutSeconds * 1000;
  st.update(node.key, {
    status: 'Queued',
    attempt,
    invocationId,
    input: doc,
    queuedAt: st.now,
    startedAt: null,
    finishedAt: null,
    deadlineAt,
    notBefore: null,
    // a held decision asked again keeps its held answer until the re-ask settles (intents.ts retry)
    output: row.held ? row.output : null,
    failureClass: 'None',
    reason: null,
    held: row.held,
    pendingDecisionKind: null,
  });
  // the job is built from the row as just written, like a rebuild after Redis lost it
  const item = workItemOf(st.run.id, node, st.row(node.key)!, deadlineAt, st.snapshot.graph.kind);
  if (item) st.enqueue.push(item);
  st.emit('node.queued', node.key, { attempt, invocationId, lane });
}

/**
 * Charge one attempt to the run. A first attempt is always admitted; a retry (the row has
 * run before) needs the run's retry budget, and when that is spent the row fails
 * AttemptsExhausted instead.
 */
function spendAttempt(st: PlanState, key: string): boolean {
  const row = st.row(key)!;
  const limit = st.ctx.options.maxTotalAttempts;
  if (row.attempt >= 1 && !retryWithinBudget(st.rows.values(), limit)) {
    failNode(st, key, 'AttemptsExhausted', `run retry budget of ${limit} (MAX_TOTAL_ATTEMPTS) spent`);
    return false;
  }
  if (!attemptWithinBudget(st)) return false;
  if (row.attempt >= row.attemptLimit) st.update(key, { attemptLimit: row.attempt + 1 });
  st.updateRun({ totalAttempts: st.run.totalAttempts + 1 });
  return true;
}

/**
 * A child run's input: a Subworkflow's `inputTemplate` rendered over the input document, else
 * `inputBinding` into it, else the satisfied predecessors' outputs.
 */
export function childInput(node: GraphNode, doc: InputDocument, limits: TemplateLimits): { ok: true; value: Json } | { ok: false; reason: string } {
  const template = node.kind === 'Subworkflow' ? node.config['inputTemplate'] : undefined;
  if (template !== undefined) {
    const r = renderConfigMember(node.key, 'inputTemplate', template as Json, templateScope(doc), limits);
    return 'value' in r ? { ok: true, value: r.value } : { ok: false, reason: r.error };
  }
  const binding = node.config['inputBinding'];
  if (typeof binding === 'string' && binding !== '') {
    const hit = resolvePath(inputDocumentAsJson(doc), binding);
    return hit.found ? { ok: true, value: hit.value as Json } : { ok: false, reason: `inputBinding '${binding}' resolves to nothing` };
  }
  const keys = Object.keys(doc.upstream);
  if (keys.length === 0) return { ok: true, value: null };
  if (keys.length === 1) return { ok: true, value: doc.upstream[keys[0]!]!.output };
  const map: { [k: string]: Json } = {};
  for (const k of keys) map[k] = doc.upstream[k]!.output;
  return { ok: true, value: map };
}

/** A Subworkflow's `stateIn` resolved against its input document: the child's state seed, or null without one. */
export function childStateSeed(node: GraphNode, doc: InputDocument): { ok: true; value: JsonObject | null } | { ok: false; reason: string } {
  const stateIn = node.kind === 'Subworkflow' ? node.config['stateIn'] : undefined;
  if (typeof stateIn !== 'object' || stateIn === null || Array.isArray(stateIn)) return { ok: true, value: null };
  const json = inputDocumentAsJson(doc);
  const seed: JsonObject = {};
  for (const [key, path] of Object.entries(stateIn)) {
    const hit = typeof path === 'string' ? resolvePath(json, path) : { found: false as const };
    if (!hit.found || hit.value === undefined) return { ok: false, reason: `stateIn.${key}: path '${String(path)}' resolves to nothing in the node's input document` };
    seed[key] = hit.value as Json;
  }
  return { ok: true, value: Object.keys(seed).length > 0 ? seed : null };
}

/** A child-backed node that cannot start fails ValidationFailed before any child exists. */
function failBeforeChild(st: PlanState, key: string, doc: InputDocument, reason: string): void {
  st.update(key, { input: doc, attempt: Math.max(st.row(key)!.attempt, 1), startedAt: st.now });
  failNode(st, key, 'ValidationFailed', reason);
}

/** Why `node` cannot start child runs (no definition named, nesting too deep), or null. */
function childRefusal(st: PlanState, node: GraphNode, defKey: string): string | null {
  const definitionId = node.config[defKey];
  if (typeof definitionId !== 'string' || definitionId === '') return `config.${defKey} names no definition`;
  if (st.run.depth >= MAX_NESTING_DEPTH) return `nesting depth ${MAX_NESTING_DEPTH} reached`;
  return null;
}

/**
 * The row of a node that works without a worker whose attempt `attempt` just started: a
 * child-backed node (`childRunId`: its one child, null for a Map) or a parked Wait (null).
 */
function runningWithoutWorker(st: PlanState, key: string, doc: InputDocument, attempt: number, childRunId: string | null): void {
  st.update(key, {
    status: 'Running',
    attempt,
    input: doc,
    childRunId,
    invocationId: null,
    queuedAt: st.now,
    startedAt: st.now,
    finishedAt: null,
    deadlineAt: null,
    notBefore: null,
    output: null,
    failureClass: 'None',
    reason: null,
  });
}

function startChild(st: PlanState, node: GraphNode, doc: InputDocument): void {
  const row = st.row(node.key)!;
  const defKey = node.kind === 'Loop' ? 'body' : 'definitionId';
  const fail = (reason: string) => failBeforeChild(st, node.key, doc, reason);
  const refusal = childRefusal(st, node, defKey);
  if (refusal !== null) return fail(refusal);
  const definitionId = node.config[defKey] as string;
  // a fork with failedOnly resumes a Loop at the iteration that failed, fed the last output
  const resume = node.kind === 'Loop' && row.loop?.resume === true && row.loop.iteration > 1 ? row.loop : null;
  const input: ReturnType<typeof childInput> = resume ? { ok: true, value: resume.last } : childInput(node, doc, templateLimitsOf(st.ctx.options));
  if (!input.ok) return fail(input.reason);
  const seed = childStateSeed(node, doc);
  if (!seed.ok) return fail(seed.reason);
  if (!spendAttempt(st, node.key)) return;
  const childRunId = st.ctx.newId();
  const attempt = row.attempt + 1;
  runningWithoutWorker(st, node.key, doc, attempt, childRunId);
  st.update(node.key, {
    loop: node.kind !== 'Loop' ? null : resume ? { iteration: resume.iteration, results: resume.results, last: resume.last } : { iteration: 1, results: [], last: null },
  });
  st.startChildren.push({ nodeKey: node.key, childRunId, definitionId, input: input.value, ...(seed.value ? { state: seed.value } : {}), ...childPinOf(node) });
  st.emit('node.started', node.key, { attempt, childRunId, ...(node.kind === 'Loop' ? { iteration: resume?.iteration ?? 1 } : {}) });
}

/** A Map: its items read, one attempt spent for the whole node, then its first children started (`map.ts`). */
function startMap(st: PlanState, node: GraphNode, doc: InputDocument): void {
  const refusal = childRefusal(st, node, 'definitionId');
  if (refusal !== null) return failBeforeChild(st, node.key, doc, refusal);
  const items = mapItems(st, node, doc);
  if (!items.ok) return failBeforeChild(st, node.key, doc, items.reason);
  if (!spendAttempt(st, node.key)) return;
  const attempt = st.row(node.key)!.attempt + 1;
  runningWithoutWorker(st, node.key, doc, attempt, null);
  st.emit('node.started', node.key, { attempt, items: items.items.length });
  beginMap(st, node, items.items);
}

/**
 * A Wait: the row reads Running with no invocation and no child, its earliest time in
 * `deadlineAt` and a waitpoint minted per token/event arm (`wait.ts`); an arm that already
 * holds (a time past, a signal already sent) fires in this same tick.
 */
function parkWait(st: PlanState, node: GraphNode, doc: InputDocument): void {
  const attempt = st.row(node.key)!.attempt + 1;
  runningWithoutWorker(st, node.key, doc, attempt, null);
  parkArms(st, node, attempt);
}
