/**
 * What a run start hands the store, the same for `POST /v1/definitions/{id}/runs` and a chat
 * send: where and how the run is placed (shard count, trace, priority, the tenant's Pending
 * bound), and its seed from the checked graph (input, node rows, concurrency key value).
 */
import { createRun, type CreateRunResult, type RunSeed } from '@flowline/db';
import { concurrencyKeyOf, DEFAULT_RUN_PRIORITY, type Graph } from '@flowline/graph';
import { activeTraceParent } from '@flowline/runtime';
import type { AppDeps } from './context';
import { checkRunInput, checkStartable, effectiveRunInput } from './graph-rules';
import { withStartCatalog } from './mcp-catalog';
import { publishWake } from './wake';

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

/**
 * A run the deployment starts on its own (an event trigger): the checks of a REST start (the
 * definition enabled and startable, its MCP tools still listed, the input against the Start's
 * schema), the tenant's backlog bound, default priority; idempotent by `requestId`.
 * @throws ApiError — the start is refused (the same keyed errors a REST start answers)
 */
export async function startTriggeredRun(deps: AppDeps, tenant: string, definitionId: string, input: unknown, requestId: string): Promise<CreateRunResult> {
  const res = await withStartCatalog(deps.pool, deps.mcp, tenant, (mcp) =>
    createRun(deps.pool, {
      tenantId: tenant,
      definitionId,
      requestId,
      conversationId: null,
      ...startPlacement(deps, tenant, undefined),
      prepare: (def) => runSeed(deps, checkStartable(def, deps.limits.maxNodesPerDefinition, deps.tools.parserCatalog(), mcp), input),
    }),
  );
  if (res.kind === 'created') {
    deps.logger.info({ runId: res.runId, definitionId }, 'run created');
    deps.metrics?.runCreated(tenant);
    await publishWake(deps, res.runId, tenant);
  }
  return res;
}
