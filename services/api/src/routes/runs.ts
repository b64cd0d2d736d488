/**
 * Run routes: start (idempotent), list, read, node read, events page, cancel (CONTRACT §5).
 */
import type { OpenAPIHono} from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import {
  createRun,
  readStartFacts,
  decodePageCursor,
  getNodeRun,
  getRunDetail,
  getRunHead,
  pendingToolCall as pendingToolCallOf,
  getRunState,
  listRunEvents,
  listWaitpoints,
  listRuns,
  requestCancel,
  type NodeRunDetailRow,
  rescheduleRun,
  type RunFilter,
} from '@flowline/db';
import {
  checkRunMetadata,
  checkRunSearch,
  DEFAULT_METADATA_LIMITS,
  delayedStartOf,
  fewestAttemptsOfGraph,
  parseBudget,
  unreachableBudgetMessage,
  approvalPolicyOf,
  approvalState,
  approvalSummary,
  type ApprovalVote,
  type JsonObject,
  type RunSearchInput,
} from '@flowline/graph';
import type { AppDeps, AppEnv } from '../context';
import { BacklogFullError, BudgetInvalidError, MetadataInvalidError, NotFoundError, RequestIdReusedError, ValidationFailedError } from '../errors';
import { bodyMember, sendJson } from '../body';
import { checkStartable } from '../graph-rules';
import { withStartCatalog } from '../mcp-catalog';
import { runSeed, startPlacement, startVersionChoice } from '../run-start';
import { DEFAULT_MAX_RUN_WAIT_S, parseWait, waitForRunEnd } from '../run-wait';
import { isStorableId, isUuid, nodeRunDetail, nodeRunSummary, pageLimit, requireCursor, requireKey, requireUuid, runSummary } from '../present';
import { publishWake } from '../wake';
import { RunBusyError } from './conversations';
import { RunStateConflictError } from './operator';
import {
  AcceptedSchema,
  CancelBody,
  ErrorSchema,
  EventPageSchema,
  EventsQuery,
  IdParam,
  NodeParam,
  NodeRunDetailSchema,
  RunDetailSchema,
  RunIdSchema,
  RunResultSchema,
  RunListQuery,
  RunListSchema,
  RunStateQuery,
  RunStateSchema,
  StartRunBody,
  RescheduleBody,
  RescheduledSchema,
  jsonContent,
  IdempotencyKeyHeaders,
  backlogFullResponse,
  jsonBody,
} from '../schemas';
import { v1Route } from '../v1-route';
import { auditPresumeStatus } from '../audit/middleware';
import { approvalLinkUrl, callbackUrl, type WaitpointLinks } from '../waitpoint-links';
import { waitpointLinksOf } from './waitpoints';

const startRun = v1Route.runs('post', '/v1/definitions/{id}/runs', {
  operationId: 'startRun',
  summary: 'Start a run of a definition (idempotent on requestId)',
  description:
    'With `?wait=30s` (also `1500ms`, `2m`, or plain seconds; at most MAX_RUN_WAIT_S) the answer waits for the run to end: ' +
    '200 with the run summary and its output when it ends within the wait, else the usual 202 with `Location` to poll. ' +
    'A replayed requestId waits on the run it names. ' +
    'With `startAt` (RFC 3339) or `delay` (ISO-8601 duration) the run is a delayed start: it reads Scheduled with `notBefore`, holds no run slot ' +
    'and costs nothing until then, may be cancelled or moved (POST /v1/runs/{id}/reschedule), and then starts as an ordinary Pending run.',
  request: {
    params: IdParam,
    query: z.object({
      wait: z.string().optional().openapi({ description: 'how long to wait for the run to end: 30s, 1500ms, 2m or seconds', example: '30s' }),
    }),
    headers: IdempotencyKeyHeaders,
    body: jsonBody(StartRunBody, false),
  },
  responses: {
    200: jsonContent(RunResultSchema, 'with ?wait: the run ended within the wait'),
    202: jsonContent(RunIdSchema, 'accepted (or the same run again for a replayed requestId); with ?wait: still running when the wait ran out'),
    409: jsonContent(ErrorSchema, 'RequestIdReused, or RunBusy (with a conversationId whose bound run is live)'),
    429: backlogFullResponse('starting'),
  },
});
const listRunsRoute = v1Route.runs('get', '/v1/runs', {
  operationId: 'listRuns',
  summary: 'List and search runs, newest first',
  description:
    'Filters (ANDed): status (repeated or comma-separated), definitionId, definitionVersion, failureClass, metadata=key:value (repeated: ' +
    'every pair on the run), createdAfter/createdBefore, finishedAfter/finishedBefore (RFC 3339, …After inclusive, …Before exclusive), ' +
    'conversationId, q (free text: a run id, an id prefix, or text; see the parameter). Keyset paging on (createdAt, id) whatever the filter. ' +
    'A bad value answers 400 ValidationFailed keyed by its name.',
  request: { query: RunListQuery },
  responses: { 200: jsonContent(RunListSchema, 'newest first') },
});
const getRunRoute = v1Route.runs('get', '/v1/runs/{id}', {
  operationId: 'getRun',
  summary: 'Get a run: summary, node runs, output and pinned graph',
  request: { params: IdParam },
  responses: { 200: jsonContent(RunDetailSchema, 'run, node runs, output, pinned graph') },
});
const getNodeRoute = v1Route.runs('get', '/v1/runs/{id}/nodes/{key}', {
  operationId: 'getNodeRun',
  summary: 'Get one node run with its input, output and steering (and an Agent parked on a tool call: the call)',
  request: { params: NodeParam },
  responses: { 200: jsonContent(NodeRunDetailSchema, 'node run with documents') },
});
const eventsRoute = v1Route.runs('get', '/v1/runs/{id}/events', {
  operationId: 'listRunEvents',
  summary: "Read a run's events after a seq",
  request: { params: IdParam, query: EventsQuery },
  responses: { 200: jsonContent(EventPageSchema, 'events after afterSeq (exclusive)') },
});
const stateRoute = v1Route.runs('get', '/v1/runs/{id}/state', {
  operationId: 'getRunState',
  summary: "Read a run's state, now or as of any event",
  description:
    "The run state (graph member `state`, nodes' `writes`) folded from its log: `{state, seq}`, `seq` being the " +
    'event it is the state as of. `atSeq` answers the state as of that event (its history, one state per ' +
    '`state.updated`); past the last event it is refused. A run whose graph keeps no state answers `{}`.',
  request: { params: IdParam, query: RunStateQuery },
  responses: { 200: jsonContent(RunStateSchema, 'the state as of seq') },
});
const rescheduleRoute = v1Route.runs('post', '/v1/runs/{id}/reschedule', {
  operationId: 'rescheduleRun',
  summary: 'Move a delayed start (a Scheduled run) to another time',
  description: 'Give `startAt` or `delay`. A time already past releases the run at once. 409 RunStateConflict when the run is no longer Scheduled.',
  request: { params: IdParam, body: jsonBody(RescheduleBody) },
  responses: {
    200: jsonContent(RescheduledSchema, 'the new notBefore'),
    409: jsonContent(ErrorSchema, 'RunStateConflict: the run is not Scheduled'),
  },
});
const cancelRoute = v1Route.runs('post', '/v1/runs/{id}/cancel', {
  operationId: 'cancelRun',
  summary: 'Cancel a run (idempotent)',
  description:
    'Idempotent (202 again, and a no-op on a finished run). The run reads Cancelling while its work drains: ' +
    'children are cancelled before the parent; each Queued/Running worker node is sent its cancel and stays live ' +
    'until its worker reports an outcome, or until CANCEL_DRAIN_GRACE_MS passes. The run then reads Cancelled; ' +
    'nodes whose worker never confirmed read Failed (Interrupted, "cancel not confirmed by the worker… may still be running") ' +
    'and are listed in the run.cancelled event detail `survivors: [{nodeKey, invocationId}]`. Retrying (or completing) ' +
    'every survivor reopens the run.',
  request: { params: IdParam, body: jsonBody(CancelBody, false) },
  responses: { 202: jsonContent(AcceptedSchema, 'cancel requested (no-op on a finished run)') },
});

/** Registers the run routes on `app`. */
export function registerRunRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  const { pool } = deps;
  const links = waitpointLinksOf(deps);

  app.openapi(startRun, async (c) => {
    const definitionId = requireUuid(c.req.valid('param').id, 'definition');
    const waitMs = parseWait(c.req.valid('query').wait, deps.limits.maxRunWaitS ?? DEFAULT_MAX_RUN_WAIT_S);
    const body = c.req.valid('json');
    const requestId = body.requestId ?? c.req.valid('header')['idempotency-key'] ?? null;
    const input = bodyMember(c, 'input');
    const metadata = checkRunMetadata(bodyMember(c, 'metadata'), deps.limits.metadata ?? DEFAULT_METADATA_LIMITS);
    if (!metadata.ok) throw new MetadataInvalidError(metadata.issues);
    const budget = parseBudget(body.budget);
    if (!budget.ok) throw new BudgetInvalidError(budget.errors.map((message) => ({ key: message.split(' ')[0]!, message })));
    const delayed = delayedStartOf(body, Date.now(), deps.limits.maxStartDelayDays);
    if (!delayed.ok) throw new ValidationFailedError('invalid delayed start', delayed.issues);
    // without ?wait a created run is answered 202 with its id: its audit row can say so as it is written
    if (waitMs === null) auditPresumeStatus(202);
    // the version facts, the definition row and the creation's precheck in one round trip
    const facts = await readStartFacts(pool, c.get('tenant'), definitionId, requestId, body.conversationId ?? null);
    const choice = await startVersionChoice(deps, c.get('tenant'), definitionId, body, facts.version);
    if (choice === null) throw new NotFoundError('definition');
    const res = await withStartCatalog(pool, deps.mcp, c.get('tenant'), (mcp) => createRun(pool, {
      precheck: facts.precheck,
      definition: facts.definition,
      pinned: choice.pinned,
      versionAlias: choice.versionAlias,
      budget: budget.budget,
      notBefore: delayed.notBefore,
      tenantId: c.get('tenant'),
      createdBy: c.get('principal').id,
      definitionId,
      requestId,
      conversationId: body.conversationId ?? null,
      metadata: metadata.metadata,
      ...startPlacement(deps, c.get('tenant'), body.priority),
      prepare: (def) => {
        const graph = checkStartable(def, deps.limits.maxNodesPerDefinition, deps.tools.parserCatalog(), mcp);
        // a request budget no completing run of this graph fits in is refused, not started to fail half way
        const max = budget.budget?.maxAttempts;
        const fewest = max === undefined ? null : fewestAttemptsOfGraph(graph);
        if (max !== undefined && fewest !== null && fewest > max) {
          throw new BudgetInvalidError([{ key: 'budget.maxAttempts', message: unreachableBudgetMessage(max, fewest) }]);
        }
        return runSeed(deps, graph, input);
      },
    }));
    if (res.kind === 'definitionNotFound') throw new NotFoundError('definition');
    if (res.kind === 'requestIdReused') throw new RequestIdReusedError(res.runId);
    if (res.kind === 'runBusy') throw new RunBusyError(res.runId);
    if (res.kind === 'backlogFull') throw new BacklogFullError(res.pending, deps.limits.backlogRetryAfterS ?? 5);
    if (res.kind === 'created') {
      deps.logger.info({ runId: res.runId, definitionId }, 'run created');
      deps.metrics?.runCreated(c.get('tenant'));
      await publishWake(deps, res.runId, c.get('tenant'));
    }
    // the run exists: a wait holds no admission slot of the tenant while it sleeps
    if (waitMs !== null) c.get('releaseAdmission')?.();
    if (waitMs !== null && (await waitForRunEnd(deps, c.get('tenant'), res.runId, waitMs, c.req.raw.signal))) {
      const run = await getRunDetail(pool, c.get('tenant'), res.runId);
      if (run) return sendJson(200, { runId: run.id, run: runSummary(run), output: run.output }, { location: `/v1/runs/${run.id}` });
    }
    return sendJson(202, { runId: res.runId }, { location: `/v1/runs/${res.runId}` });
  });

  app.openapi(listRunsRoute, async (c) => {
    const q = c.req.valid('query');
    const { limit, cursor, ...members } = q;
    const none = () => sendJson(200, { items: [], nextCursor: null });
    // a malformed definition id, or a conversation id no conversation can have, matches no run
    if (members.definitionId !== undefined && !isUuid(members.definitionId)) return none();
    if (members.conversationId !== undefined && (members.conversationId.length > 128 || !isStorableId(members.conversationId))) return none();
    const checked = checkRunSearch(members as RunSearchInput, deps.limits.metadata ?? DEFAULT_METADATA_LIMITS);
    if (!checked.ok) throw new ValidationFailedError('invalid run search', checked.issues);
    const filter: RunFilter = checked.search;
    const page = await listRuns(pool, c.get('tenant'), filter, pageLimit(limit), requireCursor(cursor, decodePageCursor));
    return sendJson(200, { items: page.items.map(runSummary), nextCursor: page.nextCursor });
  });

  app.openapi(getRunRoute, async (c) => {
    const id = requireUuid(c.req.valid('param').id, 'run');
    const run = await getRunDetail(pool, c.get('tenant'), id);
    if (!run) throw new NotFoundError('run');
    const nodes = [...run.nodes];
    const order = documentOrder(run.graph);
    nodes.sort((a, b) => (order.get(a.nodeKey) ?? Infinity) - (order.get(b.nodeKey) ?? Infinity));
    return sendJson(200, { run: runSummary(run), nodeRuns: nodes.map(nodeRunSummary), output: run.output, graph: run.graph });
  });

  app.openapi(getNodeRoute, async (c) => {
    const p = c.req.valid('param');
    const id = requireUuid(p.id, 'run');
    const run = await getRunHead(pool, c.get('tenant'), id);
    if (!run) throw new NotFoundError('run');
    const node = await getNodeRun(pool, id, requireKey(p.key, 'node'));
    if (!node) throw new NotFoundError('node');
    // an Agent parked on a person shows the tool call it asks about (its transcript's request)
    const asking = node.status === 'WaitingForApproval' && node.pendingDecisionKind === 'ToolCall';
    const pendingToolCall = asking ? await pendingToolCallOf(pool, c.get('tenant'), id, node.nodeKey) : undefined;
    return sendJson(200, {
      ...nodeRunDetail(node),
      ...(await parkedWaitpoints(deps, c.req.url, c.get('tenant'), id, node)),
      ...(await gateApproval(deps, c.req.url, c.get('tenant'), id, node)),
      ...(asking ? { pendingToolCall: pendingToolCall ?? null } : {}),
    });
  });

  app.openapi(eventsRoute, async (c) => {
    const id = requireUuid(c.req.valid('param').id, 'run');
    const q = c.req.valid('query');
    const cap = deps.limits.eventReplayLimit;
    const limit = Math.min(cap, Math.max(1, q.limit ?? cap));
    const run = await getRunHead(pool, c.get('tenant'), id);
    if (!run) throw new NotFoundError('run');
    const page = await listRunEvents(pool, id, q.afterSeq ?? 0, limit);
    return sendJson(200, {
      events: page.events.map((e) => ({ seq: e.seq, kind: e.kind, nodeKey: e.nodeKey, at: e.at.toISOString(), detail: eventDetail(links, c.req.url, e.kind, e.detail) })),
      limit,
      truncated: page.truncated,
    });
  });

  app.openapi(stateRoute, async (c) => {
    const id = requireUuid(c.req.valid('param').id, 'run');
    const { atSeq } = c.req.valid('query');
    const got = await getRunState(pool, c.get('tenant'), id, atSeq);
    if (!got) throw new NotFoundError('run');
    if (atSeq !== undefined && atSeq > got.seq) throw new ValidationFailedError(`atSeq ${atSeq} is past the run's last event (${got.seq})`);
    return sendJson(200, got);
  });

  app.openapi(rescheduleRoute, async (c) => {
    const id = requireUuid(c.req.valid('param').id, 'run');
    const delayed = delayedStartOf(c.req.valid('json'), Date.now(), deps.limits.maxStartDelayDays);
    if (!delayed.ok) throw new ValidationFailedError('invalid delayed start', delayed.issues);
    if (delayed.notBefore === null) throw new ValidationFailedError('give startAt or delay', [{ key: 'startAt', message: 'give startAt or delay' }]);
    const moved = await rescheduleRun(pool, c.get('tenant'), id, delayed.notBefore);
    if (!moved) {
      const run = await getRunHead(pool, c.get('tenant'), id);
      if (!run) throw new NotFoundError('run');
      throw new RunStateConflictError('RunStateConflict', `run is ${run.status}: only a Scheduled run can be rescheduled`);
    }
    deps.logger.info({ runId: id, notBefore: moved.notBefore.toISOString() }, 'run rescheduled');
    await publishWake(deps, id, c.get('tenant'));
    return sendJson(200, { runId: id, notBefore: moved.notBefore.toISOString() });
  });

  app.openapi(cancelRoute, async (c) => {
    const id = requireUuid(c.req.valid('param').id, 'run');
    const reason = c.req.valid('json').reason ?? null;
    const res = await requestCancel(pool, c.get('tenant'), id, reason, c.get('principal').id);
    if (!res) throw new NotFoundError('run');
    if (res.outcome === 'cancelling') {
      deps.logger.info({ runId: id }, 'run cancel requested');
      await publishWake(deps, id, c.get('tenant'));
    }
    return sendJson(202, { accepted: true });
  });
}

/** node key → index in the pinned document's `nodes` array. */
function documentOrder(doc: unknown): Map<string, number> {
  const out = new Map<string, number>();
  const nodes = (doc as { nodes?: unknown } | null)?.nodes;
  if (Array.isArray(nodes)) {
    nodes.forEach((n, i) => {
      const key = (n as { key?: unknown } | null)?.key;
      if (typeof key === 'string' && !out.has(key)) out.set(key, i);
    });
  }
  return out;
}

/**
 * A parked Wait's waiting tokens with their callback URLs (the node's answer carries them while it
 * waits); nothing for any other node.
 */
async function parkedWaitpoints(deps: AppDeps, requestUrl: string, tenant: string, runId: string, node: { nodeKey: string; kind: string; status: string }) {
  if (node.kind !== 'Wait' || node.status !== 'Running') return {};
  const nodeKey = node.nodeKey;
  const page = await listWaitpoints(deps.pool, { tenantId: tenant, runId, status: 'waiting', limit: 200 });
  const links = waitpointLinksOf(deps);
  const mine = page.items.filter((w) => w.nodeKey === nodeKey && !w.settled);
  return { waitpoints: mine.map((w) => ({ id: w.id, index: w.index, status: w.status, expiresAt: w.expiresAt, callbackUrl: callbackUrl(links, requestUrl, w.id) })) };
}

/**
 * A Pause with an approval policy shows its standing: quorum progress, who decided through which
 * path and when, and the next escalation or timeout (`approval`).
 */
async function gateApproval(deps: AppDeps, requestUrl: string, tenant: string, runId: string, node: NodeRunDetailRow) {
  if (node.kind !== 'Pause') return {};
  const run = await getRunDetail(deps.pool, tenant, runId);
  const graphNode = (run?.graph as { nodes?: Array<{ key?: unknown; config?: unknown }> } | null)?.nodes?.find((n) => n.key === node.nodeKey);
  const policy = approvalPolicyOf((graphNode?.config ?? {}) as JsonObject);
  if (!policy.ok || !policy.policy) return {};
  const votes = (node.approvals ?? []) as ApprovalVote[];
  const openedAt = node.startedAt ? node.startedAt.getTime() : Date.now();
  // each principal a quorum names gets its own signed link (approval-links.ts)
  const named = [...policy.policy.quorums, ...policy.policy.escalate.map((e) => e.addQuorum)].flatMap((q) => ('principals' in q ? q.principals : []));
  const links = waitpointLinksOf(deps);
  return {
    approval: {
      ...approvalSummary(approvalState(policy.policy, votes, openedAt, Date.now()), votes),
      links: Object.fromEntries([...new Set(named)].map((p) => [p, approvalLinkUrl(links, requestUrl, runId, node.nodeKey, p)])),
    },
  };
}

/** An event's detail as answered: a `waitpoint.created` event also carries its token's signed callback URL. */
function eventDetail(links: WaitpointLinks, requestUrl: string, kind: string, detail: unknown): unknown {
  if (kind !== 'waitpoint.created' || detail === null || typeof detail !== 'object') return detail;
  const id = (detail as { waitpointId?: unknown }).waitpointId;
  return typeof id === 'string' ? { ...detail, callbackUrl: callbackUrl(links, requestUrl, id) } : detail;
}
