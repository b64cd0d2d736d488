/**
 * The Map node: a Subworkflow run once per item of an array, a bounded number at a time.
 *
 * - Admission resolves `config.items` (a dot path into the node's input document) to an
 *   array of at most MAP_MAX_ITEMS, spends ONE attempt for the whole node, and starts the
 *   first children. Each child run's input is its item.
 * - The row keeps its progress (`MapState`): the next item to start, the children working now
 *   (with their item index) and the outputs gathered so far. So a tick reads only the children
 *   working now (at most `maxConcurrency`), never all the items' runs.
 * - Each tick gathers the children that ended, then starts items in order until
 *   min(config.maxConcurrency, MAP_MAX_CONCURRENCY) children work.
 * - A failed (or cancelled) child counts against the tolerance (`toleratedFailures`, or
 *   `toleratedFailurePercent` of the items; default none): one failure too many cancels the
 *   children still working and fails the node NodeFailed. A tolerated failure leaves null in
 *   its result slot and is listed in `errors`.
 * - When every item ended, the node succeeds with `{ results, succeeded, failed, errors }`,
 *   results in item order. Gathered results that outgrow MAX_OUTPUT_JSON_BYTES fail the node
 *   OutputTooLarge at once (the output could never be stored), which also bounds what each
 *   tick rewrites on the row.
 * - Run state: the node's own `writes` apply to that output (e.g. `output.results`), through
 *   the run's reducers, when it succeeds.
 */
import { resolvePath } from '../conditions';
import { utf8ByteLength } from '../documents/envelope';
import { inputDocumentAsJson } from '../documents/inline-output';
import { DEFAULT_CORE_OPTIONS, TERMINAL_RUN_STATUSES, type GraphNode, type InputDocument, type Json } from '../model';
import { chargeChild } from './budget-check';
import type { PlanState } from './plan-state';
import { cancelMapChildren } from './map-children';
import { settleFailure, settleSuccess } from './settle';
import type { MapState, NodeRunState } from './types';
import type { ChildNodePin } from '../aliases';

/** Failures a Map keeps in `errors` (the count is in `failed`). */
export const MAP_ERRORS_KEPT = 20;

/** The items `config.items` names in `doc`, or why they cannot be mapped over. */
export function mapItems(st: PlanState, node: GraphNode, doc: InputDocument): { ok: true; items: Json[] } | { ok: false; reason: string } {
  const path = String(node.config['items'] ?? '');
  const hit = resolvePath(inputDocumentAsJson(doc), path);
  if (!hit.found || hit.value === undefined) return { ok: false, reason: `items '${path}' resolves to nothing in the node's input document` };
  if (!Array.isArray(hit.value)) return { ok: false, reason: `items '${path}' is not an array` };
  const max = st.ctx.options.mapMaxItems ?? DEFAULT_CORE_OPTIONS.mapMaxItems!;
  if (hit.value.length > max) return { ok: false, reason: `items '${path}' holds ${hit.value.length} items, over MAP_MAX_ITEMS (${max})` };
  return { ok: true, items: hit.value as Json[] };
}

/** How many children of `node` may work at once. */
function concurrencyOf(st: PlanState, node: GraphNode): number {
  const own = typeof node.config['maxConcurrency'] === 'number' ? node.config['maxConcurrency'] : 8;
  return Math.max(1, Math.min(own, st.ctx.options.mapMaxConcurrency ?? DEFAULT_CORE_OPTIONS.mapMaxConcurrency!));
}

/** Failed items `node` tolerates out of `total`. */
function toleratedOf(node: GraphNode, total: number): number {
  const pct = node.config['toleratedFailurePercent'];
  if (typeof pct === 'number') return Math.floor((pct / 100) * total);
  const count = node.config['toleratedFailures'];
  return typeof count === 'number' ? count : 0;
}

/** The row just admitted (Running, attempt spent, `map` empty): start the first items, or succeed at once with none. */
export function beginMap(st: PlanState, node: GraphNode, items: Json[]): void {
  st.update(node.key, { map: { total: items.length, next: 0, live: [], results: [], failed: 0, errors: [] } });
  advanceMap(st, node, items);
}

/** Gather the ended children of every running Map row, then start more or settle it. */
export function applyMapChildren(st: PlanState): void {
  for (const row of [...st.rows.values()]) {
    if (row.kind !== 'Map' || row.status !== 'Running' || !row.map) continue;
    const node = st.index.nodeByKey.get(row.nodeKey);
    if (!node) continue;
    gather(st, row, node);
  }
}

function gather(st: PlanState, row: NodeRunState, node: GraphNode): void {
  const map = row.map!;
  const live: MapState['live'] = [];
  const results = [...map.results];
  let failed = map.failed;
  const errors = [...map.errors];
  let changed = false;
  for (const entry of map.live) {
    const child = st.snapshot.children.find((c) => c.childRunId === entry.childRunId);
    if (!child || !TERMINAL_RUN_STATUSES.has(child.status)) {
      live.push(entry);
      continue;
    }
    changed = true;
    chargeChild(st, child);
    if (child.status === 'Completed') {
      results[entry.index] = child.output;
      continue;
    }
    failed++;
    results[entry.index] = null;
    const reason = `child run ${child.childRunId} ${child.status === 'Failed' ? `failed (${child.failureClass})` : 'was cancelled'}: ${child.reason ?? ''}`;
    if (errors.length < MAP_ERRORS_KEPT) errors.push({ index: entry.index, reason });
  }
  if (!changed) return;
  st.update(row.nodeKey, { map: { ...map, live, results, failed, errors } });
  if (failed > toleratedOf(node, map.total)) {
    const first = errors[0];
    return failMap(st, row.nodeKey, 'NodeFailed', `${failed} of ${map.total} items failed, over the ${toleratedOf(node, map.total)} tolerated${first ? `; item ${first.index}: ${first.reason}` : ''}`);
  }
  const items = itemsOfRow(st, node, row);
  if (!items) return failMap(st, row.nodeKey, 'ValidationFailed', 'items can no longer be read from the node input document');
  advanceMap(st, node, items);
}

/** The items as admission read them: the row keeps the input document it was admitted with. */
function itemsOfRow(st: PlanState, node: GraphNode, row: NodeRunState): Json[] | null {
  if (!row.input) return null;
  const r = mapItems(st, node, row.input);
  return r.ok && r.items.length === row.map!.total ? r.items : null;
}

/** Start items in order while places are free; settle the node once every item ended. */
function advanceMap(st: PlanState, node: GraphNode, items: Json[]): void {
  const row = st.row(node.key)!;
  const map = row.map!;
  const bytes = utf8ByteLength(map.results);
  if (bytes > st.ctx.options.maxOutputJsonBytes) {
    return failMap(st, node.key, 'OutputTooLarge', `results gathered so far are ${bytes} UTF-8 bytes, over MAX_OUTPUT_JSON_BYTES (${st.ctx.options.maxOutputJsonBytes})`);
  }
  const cap = concurrencyOf(st, node);
  const live = [...map.live];
  const results = [...map.results];
  let next = map.next;
  const definitionId = String(node.config['definitionId'] ?? '');
  while (live.length < cap && next < map.total) {
    const childRunId = st.ctx.newId();
    st.startChildren.push({ nodeKey: node.key, childRunId, definitionId, input: items[next]!, ...childPinOf(node) });
    live.push({ childRunId, index: next });
    results[next] = null;
    next++;
  }
  if (next !== map.next) st.update(node.key, { map: { ...map, live, results, next } });
  if (live.length > 0 || next < map.total) return;
  const done = st.row(node.key)!.map!;
  settleSuccess(st, node.key, { results: done.results, succeeded: done.total - done.failed, failed: done.failed, errors: done.errors });
  // the envelope keeps the results; the row's progress is no longer needed
  if (st.row(node.key)?.status === 'Succeeded') st.update(node.key, { map: null });
}

/** Cancel the children still working and fail the node (a retry starts every item again). */
function failMap(st: PlanState, key: string, cls: 'NodeFailed' | 'OutputTooLarge' | 'ValidationFailed', reason: string): void {
  cancelMapChildren(st, key);
  st.update(key, { map: null });
  settleFailure(st, key, cls, reason);
}

/** A Subworkflow's or Map's version pin (`config.version` / `config.alias`) as a ChildStart member; none for a Loop. */
export function childPinOf(node: GraphNode): { pin?: ChildNodePin } {
  if (node.kind !== 'Subworkflow' && node.kind !== 'Map') return {};
  const { version, alias } = node.config;
  if (typeof version === 'number') return { pin: { version } };
  if (typeof alias === 'string') return { pin: { alias } };
  return {};
}
