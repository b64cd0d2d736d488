/**
 * Edge verdicts (CONTRACT §1.3): Satisfied, Dead, Pending, or Held (a held
 * DecisionModel's out-edge: neither Satisfied nor Dead until retried or overridden).
 */
import { firedEdgeKeys } from '../documents/branch';
import type { GraphEdge, GraphNode, OutputEnvelope } from '../model';
import type { NodeRunState } from './types';
import type { GraphIndex } from './graph-index';

export type EdgeVerdict = 'Satisfied' | 'Dead' | 'Pending' | 'Held';

/** Source statuses whose out-edges are Pending: nothing is decided about them yet. */
const LIVE_SOURCE: ReadonlySet<NodeRunState['status']> = new Set(['Pending', 'Queued', 'Running', 'WaitingForApproval']);

/** What routing needs to read: rows by key, overrides, and a per-source fired-edge cache. */
export interface RoutingView {
  index: GraphIndex;
  rows: ReadonlyMap<string, NodeRunState>;
  overrides: Readonly<Record<string, boolean>>;
  /** cache of fired out-edge keys per settled source; callers drop an entry when the row changes */
  firedCache?: Map<string, Set<string>>;
}

/**
 * True when a settled source routes on its envelope: succeeded, failed under onError
 * Continue, or skipped by an operator declaring it not taken (its dependents proceed: a
 * not-taken step satisfies a prerequisite, as a reference task graph's Skipped does).
 */
export function routesOnEnvelope(node: GraphNode | undefined, row: NodeRunState): boolean {
  if (row.status === 'Succeeded') return true;
  if (row.status === 'Skipped') return row.cause === 'NotTaken';
  return row.status === 'Failed' && node?.onError === 'Continue';
}

/** True while the source of `edge` is live: the edge is then Pending whatever else holds (see edgeVerdict). */
export function sourceIsLive(view: RoutingView, edge: GraphEdge): boolean {
  const row = view.rows.get(edge.from);
  return row !== undefined && LIVE_SOURCE.has(row.status);
}

/** Whether `edge` is overridden by the operator, and to what. */
export function overrideOf(view: RoutingView, edge: GraphEdge): boolean | undefined {
  const v = view.overrides[edge.key];
  return typeof v === 'boolean' ? v : undefined;
}

/**
 * The verdict of one edge. An operator override replaces the verdict of a SETTLED source
 * (its condition's answer, a held DecisionModel's hold, a dead source's death). While the
 * source is live (Pending, Queued, Running, WaitingForApproval) the edge is Pending whatever
 * the override says: the override standing when the source settles is the one that acts.
 * So overrides written one after another while the source runs take effect as the last one
 * says, however the dispatcher's ticks fall between them: were an override to act at once,
 * a tick landing between `false` and `null` would skip the target for good.
 */
export function edgeVerdict(view: RoutingView, edge: GraphEdge): EdgeVerdict {
  if (sourceIsLive(view, edge)) return 'Pending';
  const row = view.rows.get(edge.from);
  const forced = overrideOf(view, edge);
  if (forced !== undefined) return forced ? 'Satisfied' : 'Dead';
  if (!row) return 'Dead';
  if (!routesOnEnvelope(view.index.nodeByKey.get(edge.from), row)) return 'Dead';
  if (row.status === 'Succeeded' && row.held) {
    // The operator chose once any out-edge of the held node is overridden: the rest are dead.
    const outs = view.index.outEdges.get(edge.from) ?? [];
    return outs.some((e) => overrideOf(view, e) !== undefined) ? 'Dead' : 'Held';
  }
  return firedOf(view, edge.from, row).has(edge.key) ? 'Satisfied' : 'Dead';
}

function firedOf(view: RoutingView, sourceKey: string, row: NodeRunState): Set<string> {
  const cached = view.firedCache?.get(sourceKey);
  if (cached) return cached;
  const envelope: OutputEnvelope = row.output ?? {
    status: row.status === 'Succeeded' ? 'succeeded' : row.status === 'Skipped' ? 'skipped' : 'failed',
    attempt: row.attempt,
    branch: null,
    output: null,
  };
  const fired = firedEdgeKeys(view.index.outEdges.get(sourceKey) ?? [], envelope);
  view.firedCache?.set(sourceKey, fired);
  return fired;
}

/** The inbound edges of `nodeKey` with their verdicts, document order. */
export function inboundVerdicts(view: RoutingView, nodeKey: string): { edge: GraphEdge; verdict: EdgeVerdict }[] {
  return (view.index.inEdges.get(nodeKey) ?? []).map((edge) => ({ edge, verdict: edgeVerdict(view, edge) }));
}

/** Keys of the satisfied predecessors of `nodeKey`, deduplicated, in inbound-edge order. */
export function satisfiedPredecessors(view: RoutingView, nodeKey: string): string[] {
  const keys: string[] = [];
  for (const { edge, verdict } of inboundVerdicts(view, nodeKey)) {
    if (verdict === 'Satisfied' && !keys.includes(edge.from)) keys.push(edge.from);
  }
  return keys;
}
