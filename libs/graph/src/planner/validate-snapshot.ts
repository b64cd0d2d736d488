/**
 * Structural sanity of a snapshot before planning: one row per graph node with the
 * node's kind, no stray rows, a run row. A snapshot failing this fails its run.
 */
import { NODE_CAUSES, NODE_STATUSES, RUN_STATUSES, type Graph } from '../model';
import type { PlanContext, RunSnapshot } from './types';

const RUN_STATUS_SET: ReadonlySet<string> = new Set(RUN_STATUSES);
const NODE_STATUS_SET: ReadonlySet<string> = new Set(NODE_STATUSES);
const NODE_CAUSE_SET: ReadonlySet<string> = new Set(NODE_CAUSES);

/**
 * What a graph alone says: each node's kind, or the node declared twice; and the first edge
 * naming an undeclared node (judged after the rows, as it always was: the reason names the
 * same fault first).
 */
type GraphCheck = { kinds: ReadonlyMap<string, string>; problem: null; edgeProblem: string | null } | { kinds: null; problem: string; edgeProblem: null };

/**
 * Per Graph object, like the planner's index (graph-index.ts): a run's pinned graph is
 * planned on every tick and never changes, so its own checks run once.
 */
const graphChecks = new WeakMap<Graph, GraphCheck>();

function checkGraph(graph: Graph): GraphCheck {
  const hit = graphChecks.get(graph);
  if (hit) return hit;
  const check = graphCheckOf(graph);
  graphChecks.set(graph, check);
  return check;
}

function graphCheckOf(graph: Graph): GraphCheck {
  const kinds = new Map<string, string>();
  for (const n of graph.nodes) {
    if (kinds.has(n.key)) return { kinds: null, problem: `graph declares node '${n.key}' twice`, edgeProblem: null };
    kinds.set(n.key, n.kind);
  }
  const stray = graph.edges.find((e) => !kinds.has(e.from) || !kinds.has(e.to));
  return { kinds, problem: null, edgeProblem: stray ? `edge '${stray.key}' names an undeclared node` : null };
}

/** A sentence naming what is wrong, or null when the snapshot is plannable. */
export function snapshotProblem(snapshot: RunSnapshot, ctx: PlanContext): string | null {
  if (!snapshot || typeof snapshot !== 'object') return 'no snapshot';
  const { run, graph, nodes } = snapshot;
  if (!run || typeof run !== 'object') return 'no run row';
  if (!RUN_STATUS_SET.has(run.status)) return 'run has an unknown status';
  if (!graph || !Array.isArray(graph.nodes) || !Array.isArray(graph.edges)) return 'no graph';
  if (!Array.isArray(nodes)) return 'no node rows';
  for (const key of ['results', 'started', 'intents', 'children'] as const) {
    if (!Array.isArray(snapshot[key])) return `${key} is not a list`;
  }
  if (!ctx || typeof ctx.now !== 'number' || !ctx.options || typeof ctx.newId !== 'function') return 'no plan context';
  if (nodes.length > ctx.options.maxNodeRunsPerRun) return `${nodes.length} node rows exceed MAX_NODE_RUNS_PER_RUN`;
  const graphCheck = checkGraph(graph);
  if (graphCheck.problem !== null) return graphCheck.problem;
  const { kinds } = graphCheck;
  const seen = new Set<string>();
  for (const row of nodes) {
    if (!row || typeof row.nodeKey !== 'string') return 'a node row has no key';
    if (seen.has(row.nodeKey)) return `two rows for node '${row.nodeKey}'`;
    seen.add(row.nodeKey);
    const kind = kinds.get(row.nodeKey);
    if (kind === undefined) return `row '${row.nodeKey}' names no node of the graph`;
    if (kind !== row.kind) return `row '${row.nodeKey}' is a ${row.kind}, the graph says ${kind}`;
    if (!NODE_STATUS_SET.has(row.status)) return `row '${row.nodeKey}' has unknown status`;
    if (!NODE_CAUSE_SET.has(row.cause)) return `row '${row.nodeKey}' has unknown cause`;
    if (!Number.isInteger(row.attempt) || !Number.isInteger(row.attemptLimit)) return `row '${row.nodeKey}' has no attempt counters`;
    if (!Array.isArray(row.steering)) return `row '${row.nodeKey}' has no steering list`;
  }
  // every row names a distinct node of the graph (above): as many rows as nodes means none is missing
  if (seen.size !== kinds.size) for (const key of kinds.keys()) if (!seen.has(key)) return `node '${key}' has no row`;
  if (graphCheck.edgeProblem !== null) return graphCheck.edgeProblem;
  if (!run.edgeOverrides || typeof run.edgeOverrides !== 'object') return 'run has no edge overrides map';
  if (!Array.isArray(run.breakpoints)) return 'run has no breakpoints list';
  return null;
}
