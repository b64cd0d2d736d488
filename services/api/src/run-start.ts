/**
 * What a run start hands the store, the same for `POST /v1/definitions/{id}/runs` and a chat
 * send: where and how the run is placed (shard count, trace, priority, the tenant's Pending
 * bound), and its seed from the checked graph (input, node rows, concurrency key value).
 */
import type { RunSeed } from '@flowline/db';
import { concurrencyKeyOf, DEFAULT_RUN_PRIORITY, type Graph } from '@flowline/graph';
import { activeTraceParent } from '@flowline/runtime';
import type { AppDeps } from './context';
import { checkRunInput, effectiveRunInput } from './graph-rules';

/** The placement of a run the tenant starts now at `priority` (the default when not given). */
export function startPlacement(deps: AppDeps, tenant: string, priority: number | undefined) {
  return {
    shardCount: deps.limits.shardCount,
    // the request span's context: the dispatcher's spans of this run's nodes continue its trace
    traceParent: activeTraceParent(),
    priority: priority ?? DEFAULT_RUN_PRIORITY,
    maxPendingRuns: deps.limits.maxPendingRuns?.(tenant) ?? 0,
  };
}

/** The seed of a run of `graph` with `input`: the input checked against the graph and the size limit. */
export function runSeed(deps: AppDeps, graph: Graph, input: unknown): RunSeed {
  return {
    inputJson: checkRunInput(graph, input, deps.limits.maxRunInputBytes),
    nodes: graph.nodes.map((n) => ({ key: n.key, kind: n.kind, attemptLimit: n.maxAttempts })),
    concurrency: concurrencyKeyOf(graph, effectiveRunInput(graph, input)),
  };
}
