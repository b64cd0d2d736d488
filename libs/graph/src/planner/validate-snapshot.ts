/**
 * Structural sanity of a snapshot before planning: one row per graph node with the
 * node's kind, no stray rows, a run row. A snapshot failing this fails its run.
 */
import { NODE_CAUSES, NODE_STATUSES, RUN_STATUSES } from '../model';
import type { PlanContext, RunSnapshot } from './types';

/** A sentence naming what is wrong, or null when the snapshot is plannable. */
export function snapshotProblem(snapshot: RunSnapshot, ctx: PlanContext): string | null {
  if (!snapshot || typeof snapshot !== 'object') return 'no snapshot';
  const { run, graph, nodes } = snapshot;
  if (!run || typeof run !== 'object') return 'no run row';
  if (!(RUN_STATUSES as readonly string[]).includes(run.status)) return 'run has an unknown status';
  if (!graph || !Array.isArray(graph.nodes) || !Array.isArray(graph.edges)) return 'no graph';
  if (!Array.isArray(nodes)) return 'no node rows';
  for (const key of ['results', 'started', 'intents', 'children'] as const) {
    if (!Array.isArray(snapshot[key])) return `${key} is not a list`;
  }
  if (!ctx || typeof ctx.now !== 'number' || !ctx.options || typeof ctx.newId !== 'function') return 'no plan context';
  if (nodes.length > ctx.options.maxNodeRunsPerRun) return `${nodes.length} node rows exceed MAX_NODE_RUNS_PER_RUN`;
  const kinds = new Map<string, string>();
  for (const n of graph.nodes) {
    if (kinds.has(n.key)) return `graph declares node '${n.key}' twice`;
    kinds.set(n.key, n.kind);
  }
  const seen = new Set<string>();
  for (const row of nodes) {
    if (!row || typeof row.nodeKey !== 'string') return 'a node row has no key';
    if (seen.has(row.nodeKey)) return `two rows for node '${row.nodeKey}'`;
    seen.add(row.nodeKey);
    const kind = kinds.get(row.nodeKey);
    if (kind === undefined) return `row '${row.nodeKey}' names no node of the graph`;
    if (kind !== row.kind) return `row '${row.nodeKey}' is a ${row.kind}, the graph says ${kind}`;
    if (!(NODE_STATUSES as readonly string[]).includes(row.status)) return `row '${row.nodeKey}' has unknown status`;
    if (!(NODE_CAUSES as readonly string[]).includes(row.cause)) return `row '${row.nodeKey}' has unknown cause`;
    if (!Number.isInteger(row.attempt) || !Number.isInteger(row.attemptLimit)) return `row '${row.nodeKey}' has no attempt counters`;
    if (!Array.isArray(row.steering)) return `row '${row.nodeKey}' has no steering list`;
  }
  for (const key of kinds.keys()) if (!seen.has(key)) return `node '${key}' has no row`;
  for (const e of graph.edges) {
    if (!kinds.has(e.from) || !kinds.has(e.to)) return `edge '${e.key}' names an undeclared node`;
  }
  if (!run.edgeOverrides || typeof run.edgeOverrides !== 'object') return 'run has no edge overrides map';
  if (!Array.isArray(run.breakpoints)) return 'run has no breakpoints list';
  return null;
}
