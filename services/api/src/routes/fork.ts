/**
 * `POST /v1/runs/{id}/fork`: a NEW run from a node of a run. The route turns
 * the request into the pure decision (libs/graph `planFork`) and the store's one-transaction
 * fork (libs/db `forkRun`); it adds the input rules: an edited input of the Start node is the
 * new run's input (checked like a run start), of any other node it replaces the `input` member
 * of that node's input document (as `PUT …/nodes/{key}/input` does).
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { forkRun, type ForkSeed, type ForkSourceView, type ForkTargetView } from '@flowline/db';
import { delayedStartOf, planFork, type ForkRefusalCode, type Graph } from '@flowline/graph';
import type { AppDeps, AppEnv } from '../context';
import { bodyMember, jsonText, sendJson } from '../body';
import { ApiError, InputTooLargeError, NotFoundError, RequestIdReusedError, ValidationFailedError } from '../errors';
import { checkRunInput, storedBytes, targetPlanGraph } from '../graph-rules';
import { requireUuid } from '../present';
import { publishWake } from '../wake';
import { ErrorSchema, ForkAcceptedSchema, ForkRunBody, IdParam, jsonContent, IdempotencyKeyHeaders, jsonBody } from '../schemas';
import { v1Route } from '../v1-route';

const BAD_REQUEST_REFUSALS: ReadonlySet<string> = new Set(['ForkNodeUnknown', 'ForkVersionUnknown']);

/** A fork refused by the decision: 400 for a body naming no node of the run, 409 when run and version do not line up. */
export class ForkRefusedError extends ApiError {
  constructor(code: ForkRefusalCode | 'ForkVersionUnknown', message: string, details: unknown[]) {
    super(BAD_REQUEST_REFUSALS.has(code) ? 400 : 409, code, message, details);
  }
}


const forkRoute = v1Route.runs('post', '/v1/runs/{id}/fork', {
  operationId: 'forkRun',
  summary: 'Start a new run from a node of this run, reusing what succeeded upstream of it',
  description:
    'Starts a NEW run (any source status, a live one too) that reuses the source run\'s node runs upstream of ' +
    '`fromNodeKey`: every ancestor of the node in the target graph that the source settled Succeeded (a held ' +
    'DecisionModel excepted) or Skipped, with the same kind, and whose own predecessors are all reused. Reused rows ' +
    'are copied settled (`reusedFrom` on the node run) and never run again; the node itself and everything else runs. ' +
    '`input` edits the node\'s input (for the Start node: the run input); `definitionVersion` pins another saved ' +
    'version of the definition; `failedOnly` also keeps the node and its descendants where they succeeded (a Parallel ' +
    'fan-out\'s succeeded branches), so only what failed and what depends on it runs, and a forked Loop that failed ' +
    'after its first iteration resumes at the failed iteration with its succeeded ones kept (not with `input`). The new run carries `forkedFrom` and its `run.created` names it; the source gets ' +
    '`run.forked {newRunId, fromNodeKey}`. Idempotent on `requestId` / `Idempotency-Key`. Refusals: 400 ' +
    'ForkNodeUnknown, ForkVersionUnknown, ValidationFailed (failedOnly with input); 409 ForkNodeNotInVersion, ' +
    'ForkUpstreamMismatch (details keyed per node), ForkOfChildRun, RequestIdReused.',
  request: {
    params: IdParam,
    headers: IdempotencyKeyHeaders,
    body: jsonBody(ForkRunBody),
  },
  responses: {
    202: jsonContent(ForkAcceptedSchema, 'the new run (or the same run again for a replayed requestId)'),
    409: jsonContent(ErrorSchema, 'ForkNodeNotInVersion, ForkUpstreamMismatch, ForkOfChildRun or RequestIdReused'),
  },
});

/** The decision and input rules, run inside the fork's transaction on the locked source. */
function seedOf(deps: AppDeps, req: { fromNodeKey: string; failedOnly: boolean; input: unknown }, source: ForkSourceView, target: ForkTargetView): ForkSeed {
  const { fromNodeKey, input } = req;
  const { planGraph, planGraphJson } = targetPlanGraph(target, deps.limits.maxNodesPerDefinition, deps.tools.parserCatalog());
  const decision = planFork({
    source: source.planGraph,
    sourceNodes: source.nodes,
    sourceParentRunId: source.parentRunId,
    target: planGraph,
    fromNodeKey,
    failedOnly: req.failedOnly,
  });
  if (!decision.ok) throw new ForkRefusedError(decision.code, decision.message, decision.details);
  const graph: Graph = planGraph;
  const isStart = graph.nodes.find((n) => n.key === fromNodeKey)?.kind === 'Start';
  const max = deps.limits.maxRunInputBytes;
  let inputJson: string;
  let inputOverrideJson: string | null = null;
  if (isStart && input !== undefined) inputJson = checkRunInput(graph, input, max);
  else inputJson = target.version === source.definitionVersion ? jsonText(source.input) : checkRunInput(graph, source.input, max);
  if (!isStart && input !== undefined) {
    inputOverrideJson = jsonText(input);
    const bytes = storedBytes(inputOverrideJson);
    if (bytes > max) throw new InputTooLargeError(bytes, max);
  }
  return {
    inputJson,
    inputOverrideJson,
    planGraphJson,
    reused: decision.reused.map((r) => r.nodeKey),
    resumeLoop: decision.resumeLoop,
    nodes: graph.nodes.map((n) => ({ key: n.key, kind: n.kind, attemptLimit: n.maxAttempts })),
  };
}

/** Registers the fork route on `app`. */
export function registerForkRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  app.openapi(forkRoute, async (c) => {
    const sourceRunId = requireUuid(c.req.valid('param').id, 'run');
    const body = c.req.valid('json');
    const input = bodyMember(c, 'input');
    const failedOnly = body.failedOnly === true;
    if (failedOnly && input !== undefined) {
      throw new ValidationFailedError('failedOnly keeps the node\'s own result where it succeeded: fork without it to edit its input', [
        { key: 'input', message: 'not with failedOnly' },
      ]);
    }
    const delayed = delayedStartOf(body, Date.now(), deps.limits.maxStartDelayDays);
    if (!delayed.ok) throw new ValidationFailedError('invalid delayed start', delayed.issues);
    const tenant = c.get('tenant');
    const res = await forkRun(deps.pool, {
      notBefore: delayed.notBefore,
      tenantId: tenant,
      sourceRunId,
      fromNodeKey: body.fromNodeKey,
      definitionVersion: body.definitionVersion ?? null,
      requestId: body.requestId ?? c.req.valid('header')['idempotency-key'] ?? null,
      shardCount: deps.limits.shardCount,
      prepare: (source, target) => seedOf(deps, { fromNodeKey: body.fromNodeKey, failedOnly, input }, source, target),
    });
    if (res.kind === 'runNotFound') throw new NotFoundError('run');
    if (res.kind === 'versionNotFound') {
      throw new ForkRefusedError('ForkVersionUnknown', `definition version ${body.definitionVersion} not found`, [
        { key: 'definitionVersion', message: 'no saved version of the run\'s definition' },
      ]);
    }
    if (res.kind === 'requestIdReused') throw new RequestIdReusedError(res.runId);
    if (res.kind === 'created') {
      deps.logger.info({ runId: res.runId, sourceRunId, nodeKey: body.fromNodeKey, reused: res.reused.length }, 'run forked');
      deps.metrics?.runCreated(tenant);
      await publishWake(deps, res.runId, tenant);
      await publishWake(deps, sourceRunId, tenant);
    }
    return sendJson(
      202,
      { runId: res.runId, forkedFrom: { runId: sourceRunId, nodeKey: body.fromNodeKey } },
      { location: `/v1/runs/${res.runId}` },
    );
  });
}
