/**
 * The Hono app: middleware order is load-bearing —
 * keep-alive guard (an unread body is drained or the connection closed) → metrics → the
 * request's span (tracing on, tracing.ts) → auth
 * (/v1 and /admin/queues; 401) → the audit entry of a mutating request (audit/middleware.ts:
 * opened here so every later refusal is recorded too) → the route's scope check (403, route-scopes.ts) → admission of what
 * is in flight (429 for the tenant, 503 for the replica, edge/admission.ts: local and cheap, so a
 * refused burst costs no Redis round trip) → the tenant's rate limit (429, edge/rate-limit.ts) → 413
 * body limit → lossless JSON parse → zod route validators.
 * Every error leaves through the one `onError` mapping (errors.ts); a refusal to retry later
 * carries `Retry-After`, and a request that found no free database connection in time is one
 * of them (503 `Overloaded`), never a 500.
 */
import { OpenAPIHono } from '@hono/zod-openapi';
import { swaggerUI } from '@hono/swagger-ui';
import type { Issue } from '@flowline/graph';
import { registerOidcRoutes } from './routes/oidc';
import { registerWorkerRoutes } from './routes/workers';
import { registerAgentStepRoutes } from './routes/agent-steps';
import { USER_SESSION_COOKIE, UserSessions } from './principals/user-sessions';
import { getCookie } from 'hono/cookie';
import type { Context } from 'hono';
import { assertEveryRouteScoped, authMiddleware, documentScopes, installScopeChecks } from './auth';
import { principalResolverFor } from './principals/resolver';
import { installKeyConstraints } from './principals/key-constraints';
import { registerApiKeyRoutes } from './routes/api-keys';
import { limitBody, parseBody } from './body';
import type { AppDeps, AppEnv } from './context';
import { ApiError, RetryLaterError, ValidationFailedError, errorResponse, overloadedByPool } from './errors';
import { DEFAULT_EDGE_OPTIONS } from './edge/config';
import { keepAliveGuard } from './edge/keep-alive';
import { documentRateLimits, rateLimit } from './edge/rate-limit';
import { AdmissionLedger, admission, documentAdmission } from './edge/admission';
import { createMetrics } from './metrics';
import { traceRequests } from './tracing';
import { registerConversationRoutes } from './routes/conversations';
import { registerFileRoutes } from './routes/files';
import { registerMcpServerRoutes } from './routes/mcp-servers';
import { registerAgentRoutes } from './routes/agents';
import { registerDefinitionRoutes } from './routes/definitions';
import { registerGateRoutes } from './routes/gates';
import { registerSignalRoutes } from './routes/signals';
import { registerWaitpointRoutes } from './routes/waitpoints';
import { registerApprovalLinkRoutes } from './routes/approval-links';
import { registerInboundEventRoutes } from './routes/inbound-events';
import { registerWebhookRoutes } from './routes/webhooks';
import { registerScheduleRoutes } from './routes/schedules';
import { registerOperatorRoutes } from './routes/operator';
import { registerOpsRoutes, registerToolRoutes } from './routes/ops';
import { registerBlockerRoutes } from './routes/blockers';
import { registerForkRoutes } from './routes/fork';
import { registerMigrateRoutes } from './routes/migrate';
import { registerDefinitionDiffRoutes } from './routes/definition-diff';
import { registerDefinitionAliasRoutes } from './routes/definition-aliases';
import { registerBulkRoutes } from './routes/bulk';
import { registerRunRoutes } from './routes/runs';
import { registerStreamRoute } from './routes/stream';
import { registerWhoamiRoute } from './routes/whoami';
import { registerConsole } from './console';
import { registerAdminQueues } from './routes/admin-queues';
import { registerAuditRoutes } from './routes/audit';
import { auditRequests } from './audit/middleware';
import { AuditChainer, DEFAULT_AUDIT_OPTIONS } from './audit/chainer';
import { assertEveryMutationAudited } from './audit/table-check';

/**
 * The OpenAPI document's header. `servers` is relative: the document describes the server
 * that serves it, wherever it is reached (a client generator resolves it against the URL
 * it read the document from).
 */
export const OPENAPI_DOCUMENT_CONFIG = {
  openapi: '3.1.0',
  info: {
    title: 'Flowline API',
    version: '1',
    description:
      'Durable workflow graphs: definitions, runs, operator verbs, conversations and the ops probes. ' +
      'Keyed routes take `Authorization: Bearer <key>`; errors answer `{ error: { code, message, details? } }`. ' +
      'The queue UI (Bull Board) at `/admin/queues` and its browser sign-in `/admin/session` — a key with the `admin` scope — are outside /v1 and not described here.',
  },
  servers: [{ url: '/', description: 'the server that serves this document' }],
};

/** Builds the API app; `app.request(...)` runs it in-process, `@hono/node-server` serves it. */
export function createApp(deps: AppDeps): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) {
        const details: Issue[] = result.error.issues.map((i) => ({
          key: i.path.length > 0 ? i.path.map(String).join('.') : null,
          message: i.message,
        }));
        throw new ValidationFailedError(`invalid ${result.target}`, details);
      }
    },
  });
  const metrics = deps.metrics ?? createMetrics();
  const withMetrics: AppDeps = { ...deps, metrics };

  const edge = deps.edge ?? DEFAULT_EDGE_OPTIONS;
  // a saturated pool refuses many requests at once: one warning per 10 s says so, the metric counts each
  let poolWarnedAt = -Infinity;
  app.onError((thrown, c) => {
    const err = overloadedByPool(thrown, edge.admission.retryAfterSeconds);
    if (err !== thrown) {
      metrics.refused('DATABASE_ACQUIRE_TIMEOUT_MS');
      if (Date.now() - poolWarnedAt >= 10_000) {
        poolWarnedAt = Date.now();
        deps.logger.warn({ route: c.req.routePath }, 'no database connection came free within DATABASE_ACQUIRE_TIMEOUT_MS; answering 503 Overloaded');
      }
    }
    const { status, body } = errorResponse(err);
    // the route's pattern, not its path (path segments are the client's text); the error as
    // its facts only (class, SQLSTATE, stack frames: libs/runtime serializeError)
    if (status >= 500 && !(err instanceof ApiError)) {
      deps.logger.error({ err, method: c.req.method, route: c.req.routePath, tenant: c.get('tenant') }, 'request failed');
    }
    if (err instanceof RetryLaterError) c.header('retry-after', String(err.retryAfterSeconds));
    return c.json(body, status as 500);
  });
  app.notFound((c) => c.json({ error: { code: 'NotFound', message: 'no such route' } }, 404));

  // first: every answer, refusals included, leaves the connection reusable (edge/keep-alive.ts)
  app.use('*', keepAliveGuard(edge));
  app.use('*', metrics.middleware);
  app.use('*', traceRequests());
  const principals = principalResolverFor(deps);
  const sessions = deps.oidc ? new UserSessions(deps.redis, deps.queuePrefix) : null;
  app.use('/v1/*', authMiddleware(principals, sessions));
  // after auth (the key names tenant and principal), before every refusal a key can meet (403 on)
  const auditOptions = deps.audit?.options ?? DEFAULT_AUDIT_OPTIONS;
  const audit = { pool: deps.pool, logger: deps.logger, chainer: deps.audit?.chainer ?? new AuditChainer(deps.pool, auditOptions, deps.logger) };
  for (const path of ['/v1/*', '/hooks/*', '/w/*']) app.use(path, auditRequests(audit));
  installScopeChecks(app);
  // after the scope check (a key without the scope reads 403 Forbidden, not KeyConstraint)
  installKeyConstraints(app, deps.pool);
  app.use('/v1/*', admission(new AdmissionLedger(edge.admission), edge.admission, (r) => metrics.refused(r.option)));
  if (edge.rateLimit) app.use('/v1/*', rateLimit(deps.redis, deps.queuePrefix, edge.rateLimit, deps.logger));
  app.use('/v1/*', limitBody());
  app.use('/v1/*', parseBody());
  // waitpoint callbacks and approval links: keyless (the URL's signature is the credential), bodies bounded and parsed alike
  app.use('/w/*', limitBody());
  app.use('/w/*', parseBody());

  registerOpsRoutes(app, deps, metrics.registry);
  registerToolRoutes(app, deps);
  registerDefinitionRoutes(app, deps);
  registerDefinitionDiffRoutes(app, deps);
  registerDefinitionAliasRoutes(app, deps);
  registerBulkRoutes(app, withMetrics);
  registerRunRoutes(app, withMetrics);
  registerBlockerRoutes(app, deps);
  registerForkRoutes(app, withMetrics);
  registerMigrateRoutes(app, deps);
  registerGateRoutes(app, deps);
  registerSignalRoutes(app, deps);
  registerWaitpointRoutes(app, deps);
  registerApprovalLinkRoutes(app, deps);
  registerInboundEventRoutes(app, deps);
  registerWebhookRoutes(app, deps);
  registerScheduleRoutes(app, deps);
  registerOperatorRoutes(app, deps);
  registerStreamRoute(app, deps);
  registerConversationRoutes(app, deps);
  registerFileRoutes(app, deps);
  registerMcpServerRoutes(app, deps);
  registerAgentRoutes(app, deps);
  registerWhoamiRoute(app, deps);
  registerWorkerRoutes(app, deps);
  registerAgentStepRoutes(app, deps);
  registerAuditRoutes(app, { ...deps, audit: { chainer: audit.chainer, options: auditOptions } });
  registerApiKeyRoutes(app, deps, principals);
  registerOidcRoutes(app, deps, { options: deps.oidc ?? null, sessions: sessions ?? new UserSessions(deps.redis, deps.queuePrefix), principals, chainer: audit.chainer });
  // a mutating route without an audit action would change things unrecorded: refuse to build
  assertEveryMutationAudited(app);
  // a keyed route without a declared scope would answer any key: refuse to build
  assertEveryRouteScoped(app);
  documentScopes(app);
  if (edge.rateLimit) documentRateLimits(app);
  documentAdmission(app);

  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer' });
  app.openAPIRegistry.registerPath({
    method: 'get', path: '/openapi.json', tags: ['ops'], security: [],
    operationId: 'getOpenApiDocument', summary: 'This OpenAPI 3.1 document',
    responses: { 200: { description: 'this OpenAPI 3.1 document', content: { 'application/json': { schema: { type: 'object' } } } } },
  });
  app.openAPIRegistry.registerPath({
    method: 'get', path: '/docs', tags: ['ops'], security: [],
    operationId: 'getApiDocsUi', summary: 'The API docs UI (HTML) over this document',
    responses: { 200: { description: 'API docs UI', content: { 'text/html': { schema: { type: 'string' } } } } },
  });
  app.doc31('/openapi.json', OPENAPI_DOCUMENT_CONFIG);
  app.get('/docs', swaggerUI({ url: '/openapi.json' }));
  if (deps.consoleDir) {
    registerConsole(app, deps.consoleDir, {
      authRequired: deps.apiKeys !== null,
      ...(sessions ? { signedIn: async (c: Context<AppEnv>) => (await sessions.resolve(getCookie(c, USER_SESSION_COOKIE))) !== null } : {}),
    });
  }
  // the queue UI: bearer key with the admin scope, outside /v1 and this document
  registerAdminQueues(app, deps);
  return app;
}
