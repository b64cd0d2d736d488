/**
 * The input document an executor is handed (CONTRACT §3):
 * `{ run: { input }, upstream: { <key>: envelope }, input: single | map | null }`.
 */
import type { Graph, InputDocument, Json, JsonObject, OutputEnvelope } from '../model';
import { satisfiedPredecessors } from '../planner/edge-verdict';
import { indexGraph } from '../planner/graph-index';
import type { NodeRunState } from '../planner/types';

/**
 * Build `nodeKey`'s input document from the rows: `upstream` holds every satisfied
 * predecessor's envelope; `input` is the single one's envelope, the upstream map when
 * there are several, null when none. `edgeOverrides` (the run's) decide satisfaction
 * as they do for admission.
 */
export function buildInputDocument(
  graph: Graph,
  nodeKey: string,
  runInput: Json | undefined,
  nodes: ReadonlyMap<string, NodeRunState> | readonly NodeRunState[],
  edgeOverrides: Readonly<Record<string, boolean>> = {},
): InputDocument {
  const rows: ReadonlyMap<string, NodeRunState> = isRowMap(nodes) ? nodes : new Map(nodes.map((r) => [r.nodeKey, r]));
  const preds = satisfiedPredecessors({ index: indexGraph(graph), rows, overrides: edgeOverrides }, nodeKey);
  return inputDocumentOf(runInput, preds, rows);
}

/**
 * The input document over already-judged satisfied predecessors (`preds`, deduplicated, in
 * order); with `state` (a graph that keeps run state), the document carries it as `state`.
 */
export function inputDocumentOf(
  runInput: Json | undefined,
  preds: readonly string[],
  rows: ReadonlyMap<string, NodeRunState>,
  state?: JsonObject,
): InputDocument {
  const upstream: Record<string, OutputEnvelope> = {};
  for (const key of preds) {
    const row = rows.get(key);
    upstream[key] = row?.output ?? { status: 'succeeded', attempt: row?.attempt ?? 0, branch: null, output: null };
  }
  const first = preds[0];
  const input = preds.length === 0 || first === undefined ? null : preds.length === 1 ? upstream[first]! : upstream;
  const doc: InputDocument = { run: { input: runInput ?? null }, upstream, input };
  if (state !== undefined) doc.state = state;
  return doc;
}

function isRowMap(
  nodes: ReadonlyMap<string, NodeRunState> | readonly NodeRunState[],
): nodes is ReadonlyMap<string, NodeRunState> {
  return !Array.isArray(nodes);
}
