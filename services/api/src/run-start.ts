/**
 * What a run start hands the store, the same for `POST /v1/definitions/{id}/runs` and a chat
 * send: where and how the run is placed (shard count, trace, priority, the tenant's Pending
 * bound), and its seed from the checked graph (input, node rows, concurrency key value).
 */
import { createRun, getDefinitionVersion, sealPlanGraph, startVersionFacts, storedVersionGraph, type CreateRunResult, type PinnedVersion, type RunSeed, type StartVersionFacts } from '@flowline/db';
import { concurrencyKeyOf, CURRENT_ALIAS, DEFAULT_RUN_PRIORITY, resolveAlias, type Graph } from '@flowline/graph';
import { activeTraceParent } from '@flowline/runtime';
import type { AppDeps } from './context';
import { jsonText } from './body';
import { ValidationFailedError } from './errors';
import { checkRunInput, checkStartable, checkStoredGraph, effectiveRunInput } from './graph-rules';
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

/** The version a start runs and how it was chosen: `pinned` null runs the definition's latest version. */
export interface StartVersionChoice {
  pinned: PinnedVersion | null;
  /** the alias the start went through (`current` when it named neither version nor alias), null for an explicit version */
  versionAlias: string | null;
}

/**
 * Picks the version of a REST start: `version` as named, else `alias` (default `current`)
 * resolved over the definition's aliases with a fresh roll (libs/graph `resolveAlias`). A version
 * other than the latest runs from its saved document, parsed again and pinned like a schedule's.
 * Null when the definition does not exist (the start answers 404 as usual). `known`: the facts
 * when the caller read them already (libs/db `readStartFacts`; null there: no such definition).
 * @throws ValidationFailedError — both named, an unknown alias, or a version never saved
 */
export async function startVersionChoice(
  deps: AppDeps,
  tenant: string,
  definitionId: string,
  req: { version?: number | undefined; alias?: string | undefined },
  known?: StartVersionFacts | null,
): Promise<StartVersionChoice | null> {
  if (req.version !== undefined && req.alias !== undefined) {
    throw new ValidationFailedError('name a version or an alias, not both', [{ key: 'alias', message: 'not with version' }]);
  }
  const facts = known === undefined ? await startVersionFacts(deps.pool, tenant, definitionId) : known;
  if (facts === null) return null;
  const versionAlias = req.version !== undefined ? null : (req.alias ?? CURRENT_ALIAS);
  const version = versionAlias === null ? req.version! : resolveAlias(facts.aliases, versionAlias, facts.latest, [Math.random() * 100, Math.random() * 100]);
  if (version === null) throw new ValidationFailedError(`no alias '${versionAlias}'`, [{ key: 'alias', message: 'not an alias of this definition' }]);
  if (version === facts.latest) return { pinned: null, versionAlias };
  const [doc, stored] = [await getDefinitionVersion(deps.pool, tenant, definitionId, version), await storedVersionGraph(deps.pool, tenant, definitionId, version)];
  if (doc === null || stored === null) {
    // a retired version reads as the document (history) without a stored graph to pin
    const why = doc?.retiredAt ? `version ${version} is retired` : `the definition has no version ${version}`;
    throw new ValidationFailedError(`no version ${version}`, [{ key: versionAlias === null ? 'version' : 'alias', message: why }]);
  }
  const parsed = checkStoredGraph(doc.graph, deps.limits.maxNodesPerDefinition, deps.tools.parserCatalog());
  if (!parsed.ok) throw new ValidationFailedError(`version ${version} no longer checks`, parsed.errors);
  const planGraphText = sealPlanGraph(jsonText(parsed.graph), definitionId, version);
  return { pinned: { version, graphText: stored.graphText, planGraphText, graphHash: stored.graphHash }, versionAlias };
}

/**
 * A run the deployment starts on its own (an event trigger, a webhook): the version the alias
 * picks now (`current` when none is named), then the checks of a REST start (the
 * definition enabled and startable, its MCP tools still listed, the input against the Start's
 * schema), the tenant's backlog bound, default priority; idempotent by `requestId`.
 * @throws ApiError — the start is refused (the same keyed errors a REST start answers)
 */
export async function startTriggeredRun(deps: AppDeps, tenant: string, definitionId: string, input: unknown, requestId: string, alias?: string): Promise<CreateRunResult> {
  // the alias (default `current`) is resolved at each start, as for a REST start: moving it moves the trigger's next run
  const choice = await startVersionChoice(deps, tenant, definitionId, { alias });
  if (choice === null) return { kind: 'definitionNotFound' };
  const res = await withStartCatalog(deps.pool, deps.mcp, tenant, (mcp) =>
    createRun(deps.pool, {
      pinned: choice.pinned,
      versionAlias: choice.versionAlias,
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
