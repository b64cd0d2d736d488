/**
 * Operator verbs on live runs (CONTRACT §5, §8): steer, pause/resume, step, breakpoints,
 * edge override, skip, retry, complete, input edit. Each is one guarded statement of
 * libs/db `store/operator.ts` (version bump + wake, and the verb's run-level event in the
 * same statement); node-level effects the planner owns travel as intents and the planner
 * writes their events when it applies them. After a write the wake channel is told.
 * A guard that did not match is answered from a re-read: 404, 409 or a 202 replay.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import {
  appendSteer,
  postSteerMessage,
  getNodeRun,
  getRunControls,
  getRunDetail,
  getRunHead,
  grantStep,
  overrideNodeInput,
  recordNodeIntent,
  setBreakpoints,
  setEdgeOverride,
  setRunPaused,
  type NodeIntentKind,
  type NodeRunDetailRow,
} from '@flowline/db';
import { isCancelSurvivor, verbRefusal, type NodeKind, type NodeStatus, type OperatorVerb, type RunStatus, type SteerEntry, type VerbState } from '@flowline/graph';
import { randomUUID } from 'node:crypto';
import type { Context } from 'hono';
import type { AppDeps, AppEnv } from '../context';
import { ApiError, NodeStateConflictError, NotFoundError, ValidationFailedError } from '../errors';
import { bodyMember, jsonText, sendJson } from '../body';
import { requireKey, requireUuid } from '../present';
import { publishWake } from '../wake';
import {
  AcceptedSchema,
  BreakpointsBody,
  BreakpointsSchema,
  CompleteBody,
  SkipBody,
  EdgeOverrideBody,
  EdgeOverrideSchema,
  EdgeParam,
  ErrorSchema,
  RunControlsSchema,
  IdParam,
  NodeInputBody,
  NodeInputSchema,
  NodeParam,
  StepAcceptedSchema,
  StepBody,
  SteerBody,
  jsonContent,
  jsonBody,
} from '../schemas';
import { v1Route } from '../v1-route';

/** 409: the cap of steering entries per node (MAX_STEERS_PER_NODE) is reached. */
export class SteerLimitReachedError extends ApiError {
  constructor(limit: number) {
    super(409, 'SteerLimitReached', `this node already holds ${limit} steering entries`);
  }
}

/** 409: an operationId already names a different act on this node. */
export class OperationIdReusedError extends ApiError {
  constructor() {
    super(409, 'OperationIdReused', 'operationId already recorded with another message');
  }
}

/** 409: the run is in a state the verb does not act on (finished, Cancelling, not paused). */
export class RunStateConflictError extends ApiError {
  constructor(code: 'RunStateConflict' | 'RunNotPaused', message: string) {
    super(409, code, message);
  }
}

const body = <T>(schema: T, required = true) => ({ body: jsonBody(schema, required) });
const conflict = (what: string) => ({ 409: jsonContent(ErrorSchema, what) });
const accepted = (what: string) => ({ 202: jsonContent(AcceptedSchema, what) });

const routes = {
  controls: v1Route.operator('get', '/v1/runs/{id}/controls', {
    operationId: 'getRunControls',
    summary: "Read a run's operator controls: paused, breakpoints, edge overrides, step",
    description: 'What operators set on the run: paused, breakpoints, edge overrides and an unconsumed step allowance.',
    request: { params: IdParam },
    responses: { 200: jsonContent(RunControlsSchema, 'the run’s operator controls') },
  }),
  steer: v1Route.operator('post', '/v1/runs/{id}/nodes/{key}/steer', {
    operationId: 'steerNode',
    summary: 'Steer a queued or running Agent or LlmCall',
    request: { params: NodeParam, ...body(SteerBody) },
    responses: { ...accepted('steering recorded (or replayed)'), ...conflict('SteerLimitReached, NodeStateConflict or OperationIdReused') },
  }),
  pause: v1Route.operator('post', '/v1/runs/{id}/pause', {
    operationId: 'pauseRun',
    summary: 'Pause admission of new work in a run',
    request: { params: IdParam },
    responses: { ...accepted('run paused (idempotent)'), ...conflict('RunStateConflict: run finished or cancelling') },
  }),
  resume: v1Route.operator('post', '/v1/runs/{id}/resume', {
    operationId: 'resumeRun',
    summary: 'Resume a paused run',
    request: { params: IdParam },
    responses: { ...accepted('run resumed (idempotent)') },
  }),
  step: v1Route.operator('post', '/v1/runs/{id}/step', {
    operationId: 'stepRun',
    summary: 'Let a paused run take one step',
    request: { params: IdParam, ...body(StepBody) },
    responses: { 202: jsonContent(StepAcceptedSchema, 'allowance standing (coalesced with an identical outstanding one)'), ...conflict('RunNotPaused') },
  }),
  breakpoints: v1Route.operator('put', '/v1/runs/{id}/breakpoints', {
    operationId: 'setBreakpoints',
    summary: "Replace a run's breakpoints",
    request: { params: IdParam, ...body(BreakpointsBody) },
    responses: { 200: jsonContent(BreakpointsSchema, 'breakpoints replaced') },
  }),
  override: v1Route.operator('put', '/v1/runs/{id}/edges/{edgeKey}/override', {
    operationId: 'overrideEdge',
    summary: "Force or clear an edge's verdict in a run",
    description:
      'Replaces the verdict of the edge once its source has settled: true opens it, false makes it dead ' +
      '(skips cascade), null removes the override (the condition decides again). While the source is still ' +
      'Pending, Queued, Running or waiting on a person the edge waits whatever the override says, and the ' +
      'override standing when the source settles is the one that acts: of several writes made meanwhile, the last wins.',
    request: { params: EdgeParam, ...body(EdgeOverrideBody) },
    responses: { 200: jsonContent(EdgeOverrideSchema, 'override standing'), ...conflict('RunStateConflict') },
  }),
  skip: v1Route.operator('post', '/v1/runs/{id}/nodes/{key}/skip', {
    operationId: 'skipNode',
    summary: 'Skip a pending node or a waiting gate',
    description:
      'Declares a Pending node, or a Pause/ChatInput waiting on a person, not taken: it reads Skipped with the envelope ' +
      '{status: "skipped", output: null}; its unconditional out-edges are Satisfied and its conditional ones are evaluated ' +
      'against that envelope, so its dependents proceed (a waiting gate\'s request is withdrawn). With {prune: true} its ' +
      'out-edges are dead instead: what only it feeds is skipped with it, and the run may end without reaching an End.',
    request: { params: NodeParam, ...body(SkipBody, false) },
    responses: { ...accepted('skip requested'), ...conflict('NodeStateConflict: not Pending nor a waiting gate') },
  }),
  retry: v1Route.operator('post', '/v1/runs/{id}/nodes/{key}/retry', {
    operationId: 'retryNode',
    summary: 'Retry a failed node (or a held DecisionModel)',
    description:
      'A Failed node (or a held decision) → Pending with maxAttempts more attempts. A run Failed by it reopens and the nodes ' +
      'its failure cancelled return to Pending. On a Cancelled run only a survivor of the cancel (a node whose worker never ' +
      'confirmed it) can be retried; once no survivor is left the run reopens and the nodes the cancel cancelled return to Pending.',
    request: { params: NodeParam },
    responses: { ...accepted('retry requested'), ...conflict('NodeStateConflict: not Failed nor a held decision') },
  }),
  complete: v1Route.operator('post', '/v1/runs/{id}/nodes/{key}/complete', {
    operationId: 'completeNode',
    summary: "Complete a node with an operator's output",
    request: { params: NodeParam, ...body(CompleteBody) },
    responses: { ...accepted('operator completion requested'), ...conflict('NodeStateConflict') },
  }),
  input: v1Route.operator('put', '/v1/runs/{id}/nodes/{key}/input', {
    operationId: 'setNodeInput',
    summary: "Replace a pending node's input",
    request: { params: NodeParam, ...body(NodeInputBody) },
    responses: { 200: jsonContent(NodeInputSchema, 'input replaced'), ...conflict('NodeStateConflict: not Pending') },
  }),
};

/** The state the verb table (libs/graph state-machine/verbs.ts) judges a verb on this node in. */
function verbState(runStatus: string, node: NodeRunDetailRow): VerbState {
  return {
    runStatus: runStatus as RunStatus,
    node: {
      status: node.status as NodeStatus,
      kind: node.kind as NodeKind,
      held: node.status === 'Succeeded' && node.pendingDecisionKind === 'Operator',
      cancelSurvivor: isCancelSurvivor(node),
    },
  };
}

function graphMembers(graph: unknown, member: 'nodes' | 'edges'): Array<Record<string, unknown>> {
  const list = (graph as Record<string, unknown> | null)?.[member];
  return Array.isArray(list) ? (list.filter((x) => x && typeof x === 'object') as Array<Record<string, unknown>>) : [];
}

async function requireNode(deps: AppDeps, tenant: string, runId: string, key: string) {
  requireKey(key, 'node');
  const run = await getRunHead(deps.pool, tenant, runId);
  if (!run) throw new NotFoundError('run');
  const node = await getNodeRun(deps.pool, runId, key);
  if (!node) throw new NotFoundError('node');
  return { run, node };
}

/** A skip's intent payload: `{"prune":true}` when the body asks to prune, else `{}` (declared not taken). */
function skipPayload(c: { get(key: 'body'): unknown }): string {
  const prune = bodyMember(c, 'prune');
  if (prune !== undefined && prune !== null && typeof prune !== 'boolean') {
    throw new ValidationFailedError('prune must be a boolean', [{ key: 'prune', message: 'must be a boolean' }]);
  }
  return prune === true ? '{"prune":true}' : '{}';
}

/** A required member of the losslessly parsed body (zod's `unknown` accepts absence). */
function requiredMember(c: { get(key: 'body'): unknown }, key: string): unknown {
  const v = bodyMember(c, key);
  if (v === undefined) throw new ValidationFailedError(`${key} is required`, [{ key, message: 'required' }]);
  return v;
}

/** Answers a steer whose guarded append matched nothing, from the row as it is now. */
function steerRefusal(node: NodeRunDetailRow, runStatus: string, opId: string, message: string, cap: number): 'replay' {
  const entries = (Array.isArray(node.steering) ? node.steering : []) as SteerEntry[];
  const same = entries.find((e) => e.operationId === opId);
  if (same) {
    if (same.message === message) return 'replay';
    throw new OperationIdReusedError();
  }
  const refused = verbRefusal('steer', verbState(runStatus, node));
  if (refused !== null) throw new NodeStateConflictError(refused);
  if (entries.length >= cap) throw new SteerLimitReachedError(cap);
  throw new NodeStateConflictError('the node changed while steering; read it again');
}

/** Registers the operator routes on `app`. */
export function registerOperatorRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  const { pool } = deps;
  const maxSteers = deps.limits.maxSteersPerNode;
  const wake = (runId: string) => publishWake(deps, runId);

  app.openapi(routes.controls, async (c) => {
    const runId = requireUuid(c.req.valid('param').id, 'run');
    const controls = await getRunControls(pool, c.get('tenant'), runId);
    if (!controls) throw new NotFoundError('run');
    const step = controls.stepAllowance ? { mode: controls.stepAllowance.mode, nodeKey: controls.stepAllowance.nodeKey ?? null } : null;
    return sendJson(200, { paused: controls.paused, breakpoints: controls.breakpoints, edgeOverrides: controls.edgeOverrides, step });
  });

  app.openapi(routes.steer, async (c) => {
    const p = c.req.valid('param');
    const runId = requireUuid(p.id, 'run');
    const tenant = c.get('tenant');
    const { operationId, message } = c.req.valid('json');
    // A taken steer (or its replay) is also posted into the run's conversation, once (its id
    // derives from the operation), so the chat shows what the person said to the running node.
    const accepted = async () => {
      await postSteerMessage(pool, tenant, runId, p.key, operationId, message);
      return sendJson(202, { accepted: true });
    };
    const first = await requireNode(deps, tenant, runId, p.key);
    if (steerRefusalOrNull(first.node, operationId, message)) return accepted();
    if (await appendSteer(pool, tenant, runId, p.key, { operationId, message, atUtc: Date.now() }, maxSteers, c.get('principal').id)) {
      deps.logger.info({ runId, nodeKey: p.key }, 'steering recorded');
      await wake(runId);
      return accepted();
    }
    const now = await requireNode(deps, tenant, runId, p.key);
    steerRefusal(now.node, now.run.status, operationId, message, maxSteers);
    return accepted();
  });

  for (const paused of [true, false]) {
    app.openapi(paused ? routes.pause : routes.resume, async (c) => {
      const runId = requireUuid(c.req.valid('param').id, 'run');
      const tenant = c.get('tenant');
      const seq = await setRunPaused(pool, tenant, runId, paused);
      if (seq === null) {
        const run = await getRunControls(pool, tenant, runId);
        if (!run) throw new NotFoundError('run');
        if (paused && !run.paused) {
          throw new RunStateConflictError('RunStateConflict', verbRefusal('pause', { runStatus: run.status as RunStatus }) ?? `run is ${run.status}`);
        }
        return sendJson(202, { accepted: true });
      }
      deps.logger.info({ runId, paused }, paused ? 'run paused' : 'run resumed');
      await wake(runId);
      return sendJson(202, { accepted: true });
    });
  }

  app.openapi(routes.step, async (c) => {
    const runId = requireUuid(c.req.valid('param').id, 'run');
    const tenant = c.get('tenant');
    const b = c.req.valid('json');
    const run = await getRunDetail(pool, tenant, runId);
    if (!run) throw new NotFoundError('run');
    if (b.nodeKey !== undefined && !graphMembers(run.graph, 'nodes').some((n) => n.key === b.nodeKey)) {
      throw new ValidationFailedError('nodeKey names no node of this run', [{ key: 'nodeKey', message: 'unknown node' }]);
    }
    const granted = await grantStep(pool, tenant, runId, { id: randomUUID(), mode: b.mode, nodeKey: b.nodeKey ?? null });
    if (!granted) {
      const now = await getRunDetail(pool, tenant, runId);
      if (!now) throw new NotFoundError('run');
      throw new RunStateConflictError('RunNotPaused', now.paused ? `run is ${now.status}` : 'run is not paused');
    }
    if (!granted.coalesced) await wake(runId);
    return sendJson(202, { accepted: true, stepId: granted.id, coalesced: granted.coalesced });
  });

  app.openapi(routes.breakpoints, async (c) => {
    const runId = requireUuid(c.req.valid('param').id, 'run');
    const tenant = c.get('tenant');
    const keys = c.req.valid('json').nodeKeys;
    const run = await getRunDetail(pool, tenant, runId);
    if (!run) throw new NotFoundError('run');
    const known = new Set(graphMembers(run.graph, 'nodes').map((n) => n.key));
    const bad = keys.flatMap((k, i) => (known.has(k) ? [] : [{ key: `nodeKeys.${i}`, message: `'${k}' is not a node of this run` }]));
    if (bad.length > 0) throw new ValidationFailedError('breakpoints must name nodes of this run', bad);
    const unique = [...new Set(keys)];
    if (!(await setBreakpoints(pool, tenant, runId, unique))) throw new NotFoundError('run');
    await wake(runId);
    return sendJson(200, { nodeKeys: unique });
  });

  app.openapi(routes.override, async (c) => {
    const p = c.req.valid('param');
    const runId = requireUuid(p.id, 'run');
    const tenant = c.get('tenant');
    const { verdict } = c.req.valid('json');
    requireKey(p.edgeKey, 'edge');
    const run = await getRunDetail(pool, tenant, runId);
    if (!run) throw new NotFoundError('run');
    const edge = graphMembers(run.graph, 'edges').find((e) => e.key === p.edgeKey);
    if (!edge) throw new NotFoundError('edge');
    const seq = await setEdgeOverride(pool, tenant, runId, { key: p.edgeKey, from: String(edge.from), to: String(edge.to) }, verdict);
    if (seq === null) {
      const now = await getRunDetail(pool, tenant, runId);
      if (!now) throw new NotFoundError('run');
      const controls = await getRunControls(pool, tenant, runId);
      if ((controls?.edgeOverrides[p.edgeKey] ?? null) !== verdict) throw new RunStateConflictError('RunStateConflict', verbRefusal('override', { runStatus: now.status as RunStatus }) ?? `run is ${now.status}`);
    } else {
      deps.logger.info({ runId, edgeKey: p.edgeKey, verdict }, 'edge override set');
      await wake(runId);
    }
    return sendJson(200, { edgeKey: p.edgeKey, verdict });
  });

  const nodeIntent = (kind: NodeIntentKind & OperatorVerb) =>
    async (c: Context<AppEnv>) => {
      const p = { id: c.req.param('id') ?? '', key: c.req.param('key') ?? '' };
      const runId = requireUuid(p.id, 'run');
      const tenant = c.get('tenant');
      const payload = kind === 'complete' ? jsonText({ output: requiredMember(c, 'output') }) : kind === 'skip' ? skipPayload(c) : '{}';
      await requireNode(deps, tenant, runId, p.key);
      const outcome = await recordNodeIntent(pool, tenant, runId, p.key, kind, payload, c.get('principal').id);
      if (outcome === 'recorded') {
        deps.logger.info({ runId, nodeKey: p.key, verb: kind }, 'operator intent recorded');
        await wake(runId);
      }
      if (outcome === 'pendingOther') throw new NodeStateConflictError(`another ${kind} of this node is pending`);
      if (outcome !== null) return sendJson(202, { accepted: true });
      const { run, node } = await requireNode(deps, tenant, runId, p.key);
      // a skip the operator already made is this one again
      if (kind === 'skip' && node.status === 'Skipped' && node.reason === 'skipped by operator') return sendJson(202, { accepted: true });
      throw new NodeStateConflictError(verbRefusal(kind, verbState(run.status, node)) ?? `run is ${run.status}`);
    };

  app.openapi(routes.skip, nodeIntent('skip'));
  app.openapi(routes.retry, nodeIntent('retry'));
  app.openapi(routes.complete, nodeIntent('complete'));

  app.openapi(routes.input, async (c) => {
    const p = c.req.valid('param');
    const runId = requireUuid(p.id, 'run');
    const tenant = c.get('tenant');
    const input = requiredMember(c, 'input');
    await requireNode(deps, tenant, runId, p.key);
    if (await overrideNodeInput(pool, tenant, runId, p.key, jsonText(input))) {
      deps.logger.info({ runId, nodeKey: p.key }, 'node input replaced');
      await wake(runId);
      return sendJson(200, { nodeKey: p.key, input });
    }
    const { run, node } = await requireNode(deps, tenant, runId, p.key);
    throw new NodeStateConflictError(verbRefusal('input', verbState(run.status, node)) ?? `run is ${run.status}`);
  });
}

/** True when the node already holds this exact steering entry (a replay); throws on a reused id. */
function steerRefusalOrNull(node: NodeRunDetailRow, opId: string, message: string): boolean {
  const entries = (Array.isArray(node.steering) ? node.steering : []) as SteerEntry[];
  const same = entries.find((e) => e.operationId === opId);
  if (!same) return false;
  if (same.message !== message) throw new OperationIdReusedError();
  return true;
}
