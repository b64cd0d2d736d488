/**
 * A settling node's run-state writes (`GraphNode.writes`): resolved against its own output
 * envelope, judged by the state fold (reducer, rejectConflict, schema, MAX_RUN_STATE_BYTES)
 * before its status is written, and committed with it — a `state.updated {keys, bySeq}`
 * event right after its `node.completed` (`bySeq`: that event's seq) and a state write the
 * store keeps under the `state.updated` event's seq. Only a graph that keeps state gets here.
 */
import { resolvePath } from '../conditions';
import { deriveBranch } from '../documents/branch';
import { envelopeAsJson } from '../documents/inline-output';
import { DEFAULT_CORE_OPTIONS, type GraphEdge, type GraphNode, type Json, type JsonObject, type OutputEnvelope } from '../model';
import type { PlanState } from './plan-state';

/** Writes a node may commit: the values by state key and the state they make. */
export type JudgedWrites = { ok: true; values: JsonObject; keys: string[]; state: JsonObject } | { ok: false; reason: string };

/**
 * Resolves and judges `node`'s writes against `envelope`; null when it declares none. The seq
 * they will be committed at is the one after the node's `node.completed` event, which the
 * caller emits next.
 */
export function judgeWrites(st: PlanState, node: GraphNode, envelope: OutputEnvelope, childState?: JsonObject): JudgedWrites | null {
  if (!st.state) return null;
  const doc = envelopeAsJson(envelope);
  const values: JsonObject = {};
  for (const [key, path] of Object.entries(node.writes ?? {})) {
    const hit = resolvePath(doc, path);
    if (!hit.found || hit.value === undefined) return { ok: false, reason: `writes.${key}: path '${path}' resolves to nothing in the node's output envelope` };
    values[key] = hit.value as Json;
  }
  const out = childStateOut(node, childState ?? {});
  if (!out.ok) return out;
  Object.assign(values, out.values);
  if (Object.keys(values).length === 0) return null;
  const max = st.ctx.options.maxRunStateBytes ?? DEFAULT_CORE_OPTIONS.maxRunStateBytes!;
  const verdict = st.state.judge(node.key, st.nextSeq() + 1, values, max);
  return verdict.ok ? { ok: true, values, keys: verdict.keys, state: verdict.state } : verdict;
}

/**
 * A Subworkflow's `stateOut` (this run's state key → dot path into the child's final state),
 * resolved against the state its child run completed with. Nothing for other nodes.
 */
function childStateOut(node: GraphNode, childState: JsonObject): { ok: true; values: JsonObject } | { ok: false; reason: string } {
  const stateOut = node.kind === 'Subworkflow' ? node.config['stateOut'] : undefined;
  const values: JsonObject = {};
  if (typeof stateOut !== 'object' || stateOut === null || Array.isArray(stateOut)) return { ok: true, values };
  for (const [key, path] of Object.entries(stateOut)) {
    const hit = typeof path === 'string' ? resolvePath(childState, path) : { found: false as const };
    if (!hit.found || hit.value === undefined) return { ok: false, reason: `stateOut.${key}: path '${String(path)}' resolves to nothing in the child run's final state` };
    values[key] = hit.value as Json;
  }
  return { ok: true, values };
}

/** Commits writes `judgeWrites` accepted, right after the node's `node.completed` at `completedSeq`. */
export function commitWrites(st: PlanState, nodeKey: string, writes: Extract<JudgedWrites, { ok: true }>, completedSeq: number): void {
  const seq = st.nextSeq();
  st.state!.commit(nodeKey, seq, writes.values);
  st.stateWrites.push({ seq, nodeKey, writes: writes.values });
  st.emit('state.updated', nodeKey, { keys: writes.keys, bySeq: completedSeq });
}

/** Top-level state keys the conditions of `outEdges` read (`state.<key>…`), in edge order. */
function stateKeysRead(outEdges: readonly GraphEdge[]): string[] {
  const keys: string[] = [];
  for (const e of outEdges) {
    const path = e.condition?.path;
    if (!path?.startsWith('state.')) continue;
    const key = path.split('.')[1]!;
    if (!keys.includes(key)) keys.push(key);
  }
  return keys;
}

/**
 * A node whose out-edges route on `state.…` carries the state keys they read, as of its
 * commit (`state`), in its envelope: its routing is then decided by what it settled with,
 * never by later writes of other branches. Its branch is derived again with them.
 */
export function withRoutingState(st: PlanState, outEdges: readonly GraphEdge[], envelope: OutputEnvelope, state: JsonObject): void {
  if (!st.state) return;
  const keys = stateKeysRead(outEdges);
  if (keys.length === 0) return;
  const picked: JsonObject = {};
  for (const k of keys) if (Object.prototype.hasOwnProperty.call(state, k)) picked[k] = state[k]!;
  envelope.state = picked;
  if (envelope.status !== 'skipped') envelope.branch = deriveBranch(outEdges, envelope);
}
