/**
 * Inbound webhooks: `POST/GET/PUT/DELETE /v1/webhooks` (a tenant's hooks, secrets generated or
 * given, never read back), `POST /hooks/{tenant}/{slug}` (keyless: the signature is the
 * credential) and the delivery log with replay. A delivery is verified over its raw bytes before
 * anything parses it (webhooks/verify.ts), then becomes a run of the target definition or an
 * event of the intake; a repeat (the dedupe header's value seen before) starts nothing new.
 * Every delivery is logged with its verdict. Hooks are read from Postgres on every request, so
 * any replica answers any hook, restarted or not.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { createRoute, z } from '@hono/zod-openapi';
import { bodyLimit } from 'hono/body-limit';
import {
  deleteWebhook,
  getDelivery,
  getRunDetail,
  getWebhook,
  insertWebhook,
  listDeliveries,
  listWebhooks,
  publicWebhook,
  recordDelivery,
  updateWebhook,
  webhookBySlug,
  type DeliveryInput,
  type DeliveryVerdict,
  type WebhookAuth,
  type WebhookForDelivery,
  type WebhookInput,
  type WebhookRow,
  type WebhookSecret,
} from '@flowline/db';
import { ALIAS_NAME_PATTERN, parseJsonExact, stringifyJson, unstorableValues } from '@flowline/graph';
import type { AppDeps, AppEnv } from '../context';
import { auditAs } from '../audit/middleware';
import { ApiError, NotFoundError, PayloadTooLargeError, ValidationFailedError } from '../errors';
import { sendJson } from '../body';
import { intakeEvents } from '../event-fanout';
import { isStorableId, isUuid, requireUuid, runSummary } from '../present';
import { startTriggeredRun } from '../run-start';
import { waitForRunEnd } from '../run-wait';
import { ErrorSchema, IdParam, jsonBody, jsonContent } from '../schemas';
import { v1Route } from '../v1-route';
import { defaultDedupeHeader, STANDARD_WEBHOOKS_MAX_TOLERANCE_SEC, verifyDelivery } from '../webhooks/verify';

/** WEBHOOK_MAX_BODY_BYTES when the deployment passes none: no hook takes a larger body. */
export const DEFAULT_WEBHOOK_MAX_BODY_BYTES = 1_048_576;
/** A hook's own bound when it names none. */
const DEFAULT_HOOK_BODY_BYTES = 262_144;
/** Most deliveries one list answers. */
const MAX_DELIVERY_PAGE = 200;

const SLUG = /^[a-z0-9][a-z0-9_-]{0,63}$/;
// an HTTP header name (RFC 9110 token)
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;

const SecretBody = z.object({
  id: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/).openapi({ description: 'names the secret (rotation: add a new one, then give the old one a notAfter)' }),
  value: z.string().min(16).max(512).optional().openapi({
    description: "the secret itself (Standard Webhooks: whsec_ + base64); absent: generated on create, or kept as it is when the id is the hook's already",
  }),
  notAfter: z.string().datetime({ offset: true }).nullable().optional().openapi({ description: 'after this instant it no longer verifies' }),
});

const AuthBody = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('hmac'),
    preset: z.enum(['standardWebhooks', 'github', 'stripe', 'slack', 'custom']).default('standardWebhooks'),
    secrets: z.array(SecretBody).max(8).optional(),
    toleranceSec: z.number().int().min(1).max(86_400).optional().openapi({ description: 'timestamped presets (standardWebhooks ≤ 300, stripe, slack): how far off a timestamp may be' }),
    header: z.string().regex(HEADER_NAME).optional().openapi({ description: 'custom: the signature header (default x-signature)' }),
    algorithm: z.enum(['sha256', 'sha512', 'sha1']).optional(),
    encoding: z.enum(['hex', 'base64']).optional(),
    prefix: z.string().max(32).optional().openapi({ description: 'custom: text before the signature (e.g. sha256=)' }),
  }),
  z.object({ type: z.literal('bearer'), secrets: z.array(SecretBody).max(8).optional() }),
  z.object({ type: z.literal('none') }),
]);

const WebhookBody = z
  .object({
    slug: z.string().regex(SLUG).optional().openapi({ description: 'the URL segment, unique in the tenant: 1–64 of a-z 0-9 _ - (generated when absent)' }),
    target: z.union([z.object({ definitionId: z.string(), alias: z.string().regex(ALIAS_NAME_PATTERN).optional() }).strict(), z.object({ event: z.string().regex(/^[A-Za-z0-9_][A-Za-z0-9_.:/-]{0,127}$/) }).strict()]).openapi({
      description:
        '{definitionId, alias?}: each delivery starts a run (input: the JSON body, else {contentType, bodyBase64}) on the version the alias picks at that delivery (default `current`; an alias removed since refuses the delivery 400); {event}: each delivery is an event of that name (POST /v1/events)',
    }),
    auth: AuthBody,
    dedupeHeader: z.string().regex(HEADER_NAME).nullable().optional().openapi({
      description: 'a repeat of its value starts nothing new (default: webhook-id for standardWebhooks, x-github-delivery for github)',
    }),
    maxBodyBytes: z.number().int().min(1).optional().openapi({ description: 'larger bodies are refused 413 (default 262144, at most WEBHOOK_MAX_BODY_BYTES)' }),
    response: z
      .object({ mode: z.enum(['async', 'sync']).default('async'), timeoutMs: z.number().int().min(1).max(60_000).default(10_000) })
      .optional()
      .openapi({ description: 'sync (definition targets): wait up to timeoutMs for the run to end and answer its output; else 202 with Location' }),
  })
  .openapi('WebhookBody');

const WebhookSchema = z
  .object({
    id: z.string(),
    slug: z.string(),
    url: z.string().openapi({ description: 'POST here: /hooks/{tenant}/{slug}' }),
    target: z.unknown(),
    auth: z.unknown().openapi({ description: 'the verification, secrets listed by id and notAfter only' }),
    dedupeHeader: z.string().nullable(),
    maxBodyBytes: z.number().int(),
    response: z.unknown(),
    version: z.number().int(),
    createdAt: z.string(),
    updatedAt: z.string(),
    secret: z.string().optional().openapi({ description: 'the secret generated by this request, shown this once (never read back)' }),
  })
  .openapi('Webhook');

const DeliverySchema = z
  .object({
    id: z.string(),
    receivedAt: z.string(),
    verdict: z.enum(['verified', 'badSignature', 'stale', 'duplicate', 'tooLarge', 'noMatch', 'refused']),
    status: z.number().int(),
    reason: z.string().nullable(),
    dedupeKey: z.string().nullable(),
    contentType: z.string().nullable(),
    bodyBytes: z.number().int().nullable(),
    runId: z.string().nullable(),
    eventId: z.string().nullable(),
  })
  .openapi('WebhookDelivery');

const DeliveryParam = IdParam.extend({ deliveryId: z.string().openapi({ param: { name: 'deliveryId', in: 'path' }, format: 'uuid' }) });
const HookParam = z.object({
  tenant: z.string().openapi({ param: { name: 'tenant', in: 'path' } }),
  slug: z.string().openapi({ param: { name: 'slug', in: 'path' } }),
});

const createHook = v1Route.webhooks('post', '/v1/webhooks', {
  operationId: 'createWebhook',
  summary: 'Create an inbound webhook',
  description: 'Answers the hook with its URL and, when this request generated one, its `secret` (shown once). 409 WebhookSlugTaken.',
  request: { body: jsonBody(WebhookBody) },
  responses: { 201: jsonContent(WebhookSchema, 'the hook'), 409: jsonContent(ErrorSchema, 'WebhookSlugTaken') },
});
const listHooks = v1Route.webhooks('get', '/v1/webhooks', {
  operationId: 'listWebhooks',
  summary: "The tenant's webhooks",
  responses: { 200: jsonContent(z.object({ items: z.array(WebhookSchema) }), 'by slug') },
});
const getHook = v1Route.webhooks('get', '/v1/webhooks/{id}', {
  operationId: 'getWebhook',
  summary: 'One webhook (secrets by id only)',
  request: { params: IdParam },
  responses: { 200: jsonContent(WebhookSchema, 'the hook') },
});
const putHook = v1Route.webhooks('put', '/v1/webhooks/{id}', {
  operationId: 'updateWebhook',
  summary: 'Replace a webhook (rotate secrets: add one, give the old one a notAfter)',
  description: 'A secret listed by an id the hook has, without a value, keeps its value; a new id without a value is generated and answered once in `secret`.',
  request: { params: IdParam, body: jsonBody(WebhookBody) },
  responses: { 200: jsonContent(WebhookSchema, 'the hook, version + 1'), 409: jsonContent(ErrorSchema, 'WebhookSlugTaken') },
});
const deleteHook = v1Route.webhooks('delete', '/v1/webhooks/{id}', {
  operationId: 'deleteWebhook',
  summary: 'Delete a webhook and its delivery log',
  request: { params: IdParam },
  responses: { 204: { description: 'deleted' } },
});
const listHookDeliveries = v1Route.webhooks('get', '/v1/webhooks/{id}/deliveries', {
  operationId: 'listWebhookDeliveries',
  summary: "A webhook's deliveries with their verdicts, newest first",
  request: { params: IdParam, query: z.object({ limit: z.coerce.number().int().min(1).optional() }) },
  responses: { 200: jsonContent(z.object({ items: z.array(DeliverySchema) }), 'newest first') },
});
const replayHookDelivery = v1Route.webhooks('post', '/v1/webhooks/{id}/deliveries/{deliveryId}/replay', {
  operationId: 'replayWebhookDelivery',
  summary: 'Deliver a kept body again (a delivery whose signature verified)',
  description:
    'Runs the target again with the body as received, under the delivery’s own dedupe key: a delivery that started a run answers that run. ' +
    '409 WebhookDeliveryNotReplayable for a delivery whose body was not kept (bad signature, stale, too large).',
  request: { params: DeliveryParam },
  responses: { 200: jsonContent(DeliverySchema, 'the new delivery record'), 409: jsonContent(ErrorSchema, 'WebhookDeliveryNotReplayable') },
});
const deliverRoute = createRoute({
  method: 'post',
  path: '/hooks/{tenant}/{slug}',
  tags: ['webhooks'],
  security: [],
  operationId: 'deliverWebhook',
  summary: 'Deliver to an inbound webhook (no key: its signature is the credential)',
  description:
    'Verified over the raw bytes (any content type). 202 {deliveryId, runId | eventId}; 200 for a duplicate (the same run) or a sync hook whose run ended; ' +
    '401 WebhookSignatureInvalid (also a timestamp past the tolerance); 413 for a body over the hook’s maxBodyBytes; 404 for no such hook.',
  request: { params: HookParam },
  responses: {
    200: jsonContent(z.object({ deliveryId: z.string(), duplicate: z.boolean() }).passthrough(), 'a duplicate, or a sync run that ended'),
    202: jsonContent(z.object({ deliveryId: z.string() }).passthrough(), 'accepted'),
    401: jsonContent(ErrorSchema, 'WebhookSignatureInvalid'),
    404: jsonContent(ErrorSchema, 'no such hook'),
    409: jsonContent(ErrorSchema, 'WebhookTargetRefused: the run start was refused'),
    413: jsonContent(ErrorSchema, 'PayloadTooLarge'),
    400: jsonContent(ErrorSchema, 'WebhookTargetRefused: the body breaks the Start schema (the start’s own code in the message)'),
    422: jsonContent(ErrorSchema, 'WebhookTargetRefused: the target definition is gone'),
    503: jsonContent(ErrorSchema, "WebhookTargetRefused: the tenant's backlog is full (Retry-After)"),
  },
});

class WebhookSlugTakenError extends ApiError {
  constructor(slug: string) {
    super(409, 'WebhookSlugTaken', `a webhook with slug ${slug} already exists`);
  }
}

/** The secret a hook's scheme expects when none is given: Standard Webhooks' `whsec_` + base64, else a random token. */
function generatedSecret(auth: z.infer<typeof AuthBody>): string {
  const bytes = randomBytes(24).toString('base64');
  return auth.type === 'hmac' && auth.preset === 'standardWebhooks' ? `whsec_${bytes}` : bytes.replace(/[+/=]/g, '');
}

/** The stored form of a hook body: secrets resolved (kept, given or generated), bounds checked. */
function hookInput(body: z.infer<typeof WebhookBody>, existing: readonly WebhookSecret[], maxBodyCap: number): { input: WebhookInput; generated: string | null } {
  const target = body.target;
  if ('definitionId' in target && !isUuid(target.definitionId)) {
    throw new ValidationFailedError('target.definitionId must be a definition id', [{ key: 'target.definitionId', message: 'not a uuid' }]);
  }
  const max = body.maxBodyBytes ?? Math.min(DEFAULT_HOOK_BODY_BYTES, maxBodyCap);
  if (max > maxBodyCap) throw new ValidationFailedError('maxBodyBytes is over the deployment bound', [{ key: 'maxBodyBytes', message: `at most ${maxBodyCap} (WEBHOOK_MAX_BODY_BYTES)` }]);
  const auth = body.auth;
  if (auth.type === 'hmac' && auth.preset === 'standardWebhooks' && (auth.toleranceSec ?? 0) > STANDARD_WEBHOOKS_MAX_TOLERANCE_SEC) {
    throw new ValidationFailedError('toleranceSec is too long for Standard Webhooks', [{ key: 'auth.toleranceSec', message: `at most ${STANDARD_WEBHOOKS_MAX_TOLERANCE_SEC}` }]);
  }
  let generated: string | null = null;
  const secrets: WebhookSecret[] = [];
  if (auth.type !== 'none') {
    const given = auth.secrets ?? [{ id: 'primary' }];
    if (given.length === 0) throw new ValidationFailedError('a hook with a secret needs at least one', [{ key: 'auth.secrets', message: 'empty' }]);
    const ids = new Set<string>();
    for (const [i, s] of given.entries()) {
      if (ids.has(s.id)) throw new ValidationFailedError('secret ids repeat', [{ key: `auth.secrets.${i}.id`, message: `'${s.id}' again` }]);
      ids.add(s.id);
      let value = s.value ?? existing.find((e) => e.id === s.id)?.value;
      if (value === undefined) {
        value = generatedSecret(auth);
        generated ??= value;
      }
      if (auth.type === 'hmac' && auth.preset === 'standardWebhooks' && !/^whsec_[A-Za-z0-9+/]+=*$/.test(value)) {
        throw new ValidationFailedError('a Standard Webhooks secret is whsec_ + base64', [{ key: `auth.secrets.${i}.value`, message: 'not whsec_…' }]);
      }
      secrets.push({ id: s.id, value, notAfter: s.notAfter ?? null });
    }
  }
  const { secrets: _given, ...authRest } = auth as typeof auth & { secrets?: unknown };
  const storedAuth = authRest as WebhookAuth;
  return {
    input: {
      slug: body.slug ?? randomBytes(9).toString('base64url').toLowerCase().replace(/[^a-z0-9]/g, 'x'),
      target: 'definitionId' in target ? { definitionId: target.definitionId.toLowerCase(), ...(target.alias !== undefined ? { alias: target.alias } : {}) } : { event: target.event },
      auth: storedAuth,
      secrets,
      dedupeHeader: body.dedupeHeader === undefined ? defaultDedupeHeader(storedAuth) : body.dedupeHeader === null ? null : body.dedupeHeader.toLowerCase(),
      maxBodyBytes: max,
      response: { mode: body.response?.mode ?? 'async', timeoutMs: body.response?.timeoutMs ?? 10_000 },
    },
    generated,
  };
}

/** The hook as answered: its URL, its secrets by id. */
function present(deps: AppDeps, requestUrl: string, p: WebhookRow, generated: string | null = null) {
  const base = (deps.waitpoints?.publicUrl ?? new URL(requestUrl).origin).replace(/\/+$/, '');
  return {
    id: p.id,
    slug: p.slug,
    url: `${base}/hooks/${encodeURIComponent(p.tenantId)}/${p.slug}`,
    target: p.target,
    auth: { ...p.auth, ...(p.auth.type === 'none' ? {} : { secrets: p.secrets }) },
    dedupeHeader: p.dedupeHeader,
    maxBodyBytes: p.maxBodyBytes,
    response: p.response,
    version: p.version,
    createdAt: p.createdAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
    ...(generated !== null ? { secret: generated } : {}),
  };
}

/** The run input of a body: its JSON when it is JSON Postgres can store, else its bytes with their type. */
function runInputOf(body: Buffer, contentType: string | null): unknown {
  if (contentType !== null && /json/i.test(contentType)) {
    try {
      const parsed = parseJsonExact(body.toString('utf8'));
      if (unstorableValues(parsed).length === 0) return parsed;
    } catch {
      // not JSON after all: delivered as bytes
    }
  }
  return { contentType, bodyBase64: body.toString('base64') };
}

/** What a verified delivery did: its verdict, the HTTP answer, and what it started. */
interface Outcome {
  verdict: DeliveryVerdict;
  status: number;
  reason: string | null;
  runId: string | null;
  eventId: string | null;
  answer: Record<string, unknown>;
}

/** Runs the hook's target with a verified body. */
async function dispatch(deps: AppDeps, h: WebhookForDelivery, body: Buffer, contentType: string | null, deliveryId: string, dedupeKey: string | null, signal?: AbortSignal): Promise<Outcome> {
  const key = dedupeKey ?? deliveryId;
  if ('event' in h.target) {
    const eventId = `hook:${h.id}:${key}`;
    const input = runInputOf(body, contentType);
    const out = await intakeEvents(deps, h.tenantId, [{ id: eventId, name: h.target.event, dataJson: stringifyJson(input) }]);
    if (out.kept.length === 0) return { verdict: 'duplicate', status: 200, reason: 'the event was delivered before', runId: null, eventId, answer: { eventId, duplicate: true } };
    const fanout = out.fanouts.get(eventId);
    const started = fanout?.matches.filter((m) => m.runId !== null).length ?? 0;
    if (started === 0 && out.wokenRunIds.length === 0 && (fanout === undefined || fanout.finished)) {
      return { verdict: 'noMatch', status: 202, reason: `no definition's trigger took '${h.target.event}' and no Wait waited on it`, runId: null, eventId, answer: { eventId, duplicate: false } };
    }
    return { verdict: 'verified', status: 202, reason: null, runId: null, eventId, answer: { eventId, duplicate: false } };
  }
  try {
    const res = await startTriggeredRun(deps, h.tenantId, h.target.definitionId, runInputOf(body, contentType), `hook:${h.id}:${key}`, h.target.alias);
    if (res.kind === 'backlogFull') {
      return { verdict: 'refused', status: 503, reason: `the tenant's backlog is full (${res.pending} Pending runs); deliver again later`, runId: null, eventId: null, answer: {} };
    }
    if (res.kind === 'definitionNotFound') return { verdict: 'refused', status: 422, reason: 'the target definition is gone', runId: null, eventId: null, answer: {} };
    if (res.kind !== 'created' && res.kind !== 'replayed') return { verdict: 'refused', status: 409, reason: `run start answered ${res.kind}`, runId: null, eventId: null, answer: {} };
    const duplicate = res.kind === 'replayed';
    const base: Outcome = { verdict: duplicate ? 'duplicate' : 'verified', status: duplicate ? 200 : 202, reason: null, runId: res.runId, eventId: null, answer: { runId: res.runId, duplicate } };
    if (h.response.mode === 'sync' && (await waitForRunEnd(deps, h.tenantId, res.runId, h.response.timeoutMs, signal))) {
      const run = await getRunDetail(deps.pool, h.tenantId, res.runId);
      if (run) return { ...base, status: 200, answer: { ...base.answer, run: runSummary(run), output: run.output } };
    }
    return base;
  } catch (err) {
    if (err instanceof ApiError && err.status < 500) return { verdict: 'refused', status: err.status, reason: `${err.code}: ${err.message}`, runId: null, eventId: null, answer: {} };
    throw err;
  }
}

/** Registers the webhook routes on `app`. */
export function registerWebhookRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  const cap = deps.limits.webhookMaxBodyBytes ?? DEFAULT_WEBHOOK_MAX_BODY_BYTES;

  app.openapi(createHook, async (c) => {
    const { input, generated } = hookInput(c.req.valid('json'), [], cap);
    const h = await insertWebhook(deps.pool, c.get('tenant'), input);
    if (!h) throw new WebhookSlugTakenError(input.slug);
    deps.logger.info({ webhookId: h.id, slug: h.slug }, 'webhook created');
    return sendJson(201, present(deps, c.req.url, publicWebhook(h), generated), { location: `/v1/webhooks/${h.id}` });
  });

  app.openapi(listHooks, async (c) => {
    const items = await listWebhooks(deps.pool, c.get('tenant'));
    return sendJson(200, { items: items.map((h) => present(deps, c.req.url, h)) });
  });

  app.openapi(getHook, async (c) => {
    const h = await getWebhook(deps.pool, c.get('tenant'), requireUuid(c.req.valid('param').id, 'webhook'));
    if (!h) throw new NotFoundError('webhook');
    return sendJson(200, present(deps, c.req.url, publicWebhook(h)));
  });

  app.openapi(putHook, async (c) => {
    const id = requireUuid(c.req.valid('param').id, 'webhook');
    const current = await getWebhook(deps.pool, c.get('tenant'), id);
    if (!current) throw new NotFoundError('webhook');
    const body = c.req.valid('json');
    const { input, generated } = hookInput({ ...body, slug: body.slug ?? current.slug }, current.secretValues, cap);
    const h = await updateWebhook(deps.pool, c.get('tenant'), id, input);
    if (h === 'slugTaken') throw new WebhookSlugTakenError(input.slug);
    if (!h) throw new NotFoundError('webhook');
    return sendJson(200, present(deps, c.req.url, publicWebhook(h), generated));
  });

  app.openapi(deleteHook, async (c) => {
    if (!(await deleteWebhook(deps.pool, c.get('tenant'), requireUuid(c.req.valid('param').id, 'webhook')))) throw new NotFoundError('webhook');
    return c.body(null, 204);
  });

  app.openapi(listHookDeliveries, async (c) => {
    const id = requireUuid(c.req.valid('param').id, 'webhook');
    if (!(await getWebhook(deps.pool, c.get('tenant'), id))) throw new NotFoundError('webhook');
    const limit = Math.min(MAX_DELIVERY_PAGE, c.req.valid('query').limit ?? 50);
    const items = await listDeliveries(deps.pool, c.get('tenant'), id, limit);
    return sendJson(200, { items: items.map(({ webhookId: _hook, ...d }) => ({ ...d, receivedAt: d.receivedAt.toISOString() })) });
  });

  app.openapi(replayHookDelivery, async (c) => {
    const p = c.req.valid('param');
    const tenant = c.get('tenant');
    const h = await getWebhook(deps.pool, tenant, requireUuid(p.id, 'webhook'));
    if (!h) throw new NotFoundError('webhook');
    const original = await getDelivery(deps.pool, tenant, h.id, requireUuid(p.deliveryId, 'delivery'));
    if (!original) throw new NotFoundError('delivery');
    if (original.body === null) {
      throw new ApiError(409, 'WebhookDeliveryNotReplayable', `delivery ${original.id} kept no body (${original.verdict}): only a delivery whose signature verified can be replayed`);
    }
    const id = randomUUID();
    // the original's key: a delivery that started a run answers that run again
    const out = await dispatch(deps, h, original.body, original.contentType, original.id, original.dedupeKey);
    const record: DeliveryInput = { id, webhookId: h.id, ...outcomeRecord(out), dedupeKey: original.dedupeKey, contentType: original.contentType, body: original.body, reason: `replay of ${original.id}${out.reason ? `: ${out.reason}` : ''}` };
    await recordDelivery(deps.pool, tenant, record);
    return sendJson(200, { id, receivedAt: new Date().toISOString(), ...outcomeRecord(out), reason: record.reason, dedupeKey: original.dedupeKey, contentType: original.contentType, bodyBytes: original.body.length });
  });

  // deliveries: keyless, any content type, bounded before they are read
  app.use('/hooks/*', bodyLimit({ maxSize: cap, onError: () => { throw new PayloadTooLargeError(cap); } }));
  app.openapi(deliverRoute, async (c) => {
    const { tenant, slug } = c.req.valid('param');
    const h = SLUG.test(slug) && isStorableId(tenant) ? await webhookBySlug(deps.pool, tenant, slug) : null;
    if (!h) throw new NotFoundError('webhook');
    // the hook names whose request this is: its row joins the tenant's chain, refused or not
    auditAs(tenant, `webhook:${h.id}`, h.id);
    const deliveryId = randomUUID();
    const body = Buffer.from(await c.req.arrayBuffer());
    const contentType = c.req.header('content-type') ?? null;
    const dedupeKey = h.dedupeHeader === null ? null : (c.req.header(h.dedupeHeader)?.slice(0, 256) ?? null);
    const log = (d: Omit<DeliveryInput, 'id' | 'webhookId' | 'dedupeKey' | 'contentType'>) =>
      recordDelivery(deps.pool, tenant, { id: deliveryId, webhookId: h.id, dedupeKey, contentType, ...d });
    if (body.length > h.maxBodyBytes) {
      await log({ verdict: 'tooLarge', status: 413, reason: `${body.length} bytes; at most ${h.maxBodyBytes}`, body: null, runId: null, eventId: null });
      throw new PayloadTooLargeError(h.maxBodyBytes);
    }
    const check = verifyDelivery(h.auth, h.secretValues, body, c.req.raw.headers, Date.now());
    if (!check.ok) {
      await log({ verdict: check.verdict, status: 401, reason: check.reason, body: null, runId: null, eventId: null });
      deps.logger.info({ webhookId: h.id, deliveryId, verdict: check.verdict }, 'webhook delivery refused');
      throw new ApiError(401, 'WebhookSignatureInvalid', check.verdict === 'stale' ? `stale: ${check.reason}` : 'the signature does not verify');
    }
    const out = await dispatch(deps, h, body, contentType, deliveryId, dedupeKey, c.req.raw.signal);
    await log({ ...outcomeRecord(out), body });
    deps.logger.info({ webhookId: h.id, deliveryId, verdict: out.verdict, runId: out.runId ?? undefined }, 'webhook delivery');
    if (out.verdict === 'refused') {
      const headers = out.status === 503 ? { 'retry-after': String(deps.limits.backlogRetryAfterS ?? 5) } : undefined;
      return sendJson(out.status, { error: { code: 'WebhookTargetRefused', message: out.reason ?? 'refused' }, deliveryId }, headers);
    }
    return sendJson(out.status, { deliveryId, ...out.answer }, out.runId !== null ? { location: `/v1/runs/${out.runId}` } : undefined);
  });
}

function outcomeRecord(o: Outcome): Pick<DeliveryInput, 'verdict' | 'status' | 'reason' | 'runId' | 'eventId'> {
  return { verdict: o.verdict, status: o.status, reason: o.reason, runId: o.runId, eventId: o.eventId };
}
