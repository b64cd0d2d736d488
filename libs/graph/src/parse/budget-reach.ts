/**
 * Can a run of this graph complete within its own attempt budget? A run completes only
 * when an End succeeds, and an End succeeds only after a chain of settled predecessors back
 * to Start, each of which spent at least one attempt if it is work (a lane or child node).
 * So the fewest attempts any completing run spends is at least the cheapest Start → End path,
 * counting one per work node on it. A `budget.maxAttempts` below that refuses every run, and
 * validation says so instead of letting each run fail half way.
 */
import type { RunBudget } from '../budget/budget-spec';
import { CHILD_KINDS, LANE_OF_KIND, type Graph, type GraphNode } from '../model';
import type { RuleEdge } from './rules';
import type { Issues } from './util';

const spendsAttempt = (n: GraphNode): boolean => LANE_OF_KIND[n.kind] !== undefined || CHILD_KINDS.has(n.kind);

/**
 * The fewest attempts on any path from Start to an End (work nodes on it), or null when no
 * End is reachable. The graph is acyclic (a structural rule judged before this one), so a
 * relaxation in topological order finds it in one pass.
 */
export function fewestAttemptsToEnd(nodes: readonly GraphNode[], edges: readonly RuleEdge[]): number | null {
  const byKey = new Map(nodes.map((n) => [n.key, n] as const));
  const outs = new Map<string, string[]>();
  const indegree = new Map<string, number>(nodes.map((n) => [n.key, 0]));
  for (const { edge } of edges) {
    if (!byKey.has(edge.from) || !byKey.has(edge.to)) continue;
    outs.set(edge.from, [...(outs.get(edge.from) ?? []), edge.to]);
    indegree.set(edge.to, (indegree.get(edge.to) ?? 0) + 1);
  }
  const cost = new Map<string, number>();
  for (const n of nodes) if (n.kind === 'Start') cost.set(n.key, spendsAttempt(n) ? 1 : 0);
  const ready = nodes.filter((n) => indegree.get(n.key) === 0).map((n) => n.key);
  let best: number | null = null;
  while (ready.length > 0) {
    const key = ready.pop()!;
    const here = cost.get(key);
    if (here !== undefined && byKey.get(key)!.kind === 'End') best = best === null ? here : Math.min(best, here);
    for (const to of outs.get(key) ?? []) {
      if (here !== undefined) {
        const via = here + (spendsAttempt(byKey.get(to)!) ? 1 : 0);
        const prior = cost.get(to);
        if (prior === undefined || via < prior) cost.set(to, via);
      }
      const left = indegree.get(to)! - 1;
      indegree.set(to, left);
      if (left === 0) ready.push(to);
    }
  }
  return best;
}

/** {@link fewestAttemptsToEnd} of a parsed graph (a run start judges its request's `budget.maxAttempts` with it). */
export function fewestAttemptsOfGraph(graph: Graph): number | null {
  return fewestAttemptsToEnd(graph.nodes, graph.edges.map((edge) => ({ edge, conditional: edge.condition !== null })));
}

/** The message of a `budget.maxAttempts` no completing run fits in. */
export function unreachableBudgetMessage(max: number, fewest: number): string {
  return `budget.maxAttempts (${max}) is below the ${fewest} attempts the shortest way from Start to an End spends: no run of this graph could complete`;
}

/** Error (keyed null) when the graph's own `budget.maxAttempts` is below what any completing run spends. */
export function checkBudgetReach(nodes: readonly GraphNode[], edges: readonly RuleEdge[], budget: RunBudget | null, out: Issues): void {
  const max = budget?.maxAttempts;
  if (max === undefined) return;
  const fewest = fewestAttemptsToEnd(nodes, edges);
  if (fewest === null || fewest <= max) return;
  out.error(null, unreachableBudgetMessage(max, fewest));
}
