/**
 * Waitpoint tokens: a Wait's token arm mints one (libs/db `waitpoints`), completed by its signed
 * callback URL `POST /w/{tokenId}/{signature}` (no key: the signature is the credential) or by
 * `POST /v1/waitpoints/{id}/complete` with a key; listed, read and revoked under /v1.
 * A completion is a compare-and-set that bumps the run's version (race-free with the Wait's
 * timer); its body is checked against the token's schema first (422 keeps the wait open). A
 * repeat answers 200 `alreadyCompleted: true` and changes nothing; an expired token 410
 * `WaitpointExpired`, a revoked or withdrawn one 410 `WaitpointRevoked`, a bad signature 403.
 * A GET of a callback URL never completes anything: it answers 405 saying POST is required.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { createRoute } from '@hono/zod-openapi';
import {
  completeWaitpoint, decodeWaitpointCursor, getWaitpoint, listWaitpoints, revokeWaitpoint, type CompleteWaitpointOutcome, type Pool, type WaitpointRecord,
} from '@flowline/db';
import { validateJson, type Json } from '@flowline/graph';
import type { AppDeps, AppEnv } from '../context';
import { ApiError, NotFoundError, ValidationFailedError } from '../errors';
import { auditAs } from '../audit/middleware';
import { bodyMember, jsonText, sendJson } from '../body';
import { pageLimit, requireCursor, requireUuid } from '../present';
import { publishWake } from '../wake';
import {
  CallbackAnswerSchema, CallbackParam, ErrorSchema, IdParam, WaitpointCompleteBody, WaitpointCompletedSchema, WaitpointListQuery, WaitpointListSchema,
  WaitpointSchema, jsonBody, jsonContent,
} from '../schemas';
import { v1Route } from '../v1-route';
import { callbackUrl, verifyWaitpointSignature, waitpointSigningKey, type WaitpointLinks } from '../waitpoint-links';

/** MAX_SIGNAL_PAYLOAD_BYTES (also the bound of a completion body) when the deployment passes none. */
const DEFAULT_MAX_PAYLOAD_BYTES = 65_536;

/** 422: the completion body breaks the token's schema; the wait stays open. */
export class WaitpointPayloadInvalidError extends ApiError {
  constructor(errors: string[]) {
    super(422, 'WaitpointPayloadInvalid', "the payload does not match the waitpoint's schema; it is still waiting", errors.map((message) => ({ key: 'payload', message })));
  }
}

/** 410: the token can no longer be completed. */
export class WaitpointGoneError extends ApiError {
  constructor(code: 'WaitpointExpired' | 'WaitpointRevoked', message: string) {
    super(410, code, message);
  }
}

/** 403: the callback URL's signature is not the token's. */
export class WaitpointSignatureInvalidError extends ApiError {
  constructor() {
    super(403, 'WaitpointSignatureInvalid', 'the callback URL is not signed for this waitpoint');
  }
}

/** 409: DELETE of a token that no longer waits. */
export class WaitpointNotWaitingError extends ApiError {
  constructor(status: string) {
    super(409, 'WaitpointNotWaiting', `the waitpoint is ${status}: only a waiting one can be revoked`, [{ status }]);
  }
}

const listRoute = v1Route.waitpoints('get', '/v1/waitpoints', {
  operationId: 'listWaitpoints',
  summary: "List the tenant's waitpoint tokens, newest first",
  description: 'Optionally of one run (runId) and one status (waiting, completed, expired, revoked). Each carries its signed callback URL.',
  request: { query: WaitpointListQuery },
  responses: { 200: jsonContent(WaitpointListSchema, 'a page of waitpoints') },
});
const getRoute = v1Route.waitpoints('get', '/v1/waitpoints/{id}', {
  operationId: 'getWaitpoint',
  summary: 'Get one waitpoint token',
  request: { params: IdParam },
  responses: { 200: jsonContent(WaitpointSchema, 'the waitpoint') },
});
const completeRoute = v1Route.waitpoints('post', '/v1/waitpoints/{id}/complete', {
  operationId: 'completeWaitpoint',
  summary: "Complete a waitpoint token with a payload (its Wait's token arm fires)",
  description:
    "422 WaitpointPayloadInvalid: the payload breaks the token's schema (it keeps waiting); a repeat answers 200 alreadyCompleted without " +
    'changing anything; 410 WaitpointExpired / WaitpointRevoked (revoked, or withdrawn because another arm of its Wait won).',
  request: { params: IdParam, body: jsonBody(WaitpointCompleteBody) },
  responses: {
    200: jsonContent(WaitpointCompletedSchema, 'completed now, or already before'),
    410: jsonContent(ErrorSchema, 'WaitpointExpired or WaitpointRevoked'),
    422: jsonContent(ErrorSchema, "WaitpointPayloadInvalid: the payload breaks the token's schema"),
  },
});
const revokeRoute = v1Route.waitpoints('delete', '/v1/waitpoints/{id}', {
  operationId: 'revokeWaitpoint',
  summary: 'Revoke a waiting token: its callback answers 410 and its Wait arm fires with revoked: true',
  request: { params: IdParam },
  responses: {
    200: jsonContent(WaitpointSchema, 'the revoked waitpoint'),
    409: jsonContent(ErrorSchema, 'WaitpointNotWaiting: completed, expired or revoked already'),
  },
});
const callbackRoute = createRoute({
  method: 'post',
  path: '/w/{tokenId}/{signature}',
  tags: ['waitpoints'],
  security: [],
  operationId: 'callbackWaitpoint',
  summary: 'Complete a waitpoint token through its signed callback URL (no key)',
  description:
    "The whole JSON body is the payload, checked against the token's schema (422 WaitpointPayloadInvalid keeps it waiting). " +
    'A repeat answers 200 alreadyCompleted and changes nothing; 403 WaitpointSignatureInvalid; 410 WaitpointExpired / WaitpointRevoked. ' +
    'A GET of the URL answers 405 and completes nothing.',
  request: { params: CallbackParam },
  responses: {
    200: jsonContent(CallbackAnswerSchema, 'completed now, or already before'),
    403: jsonContent(ErrorSchema, 'WaitpointSignatureInvalid'),
    404: jsonContent(ErrorSchema, 'no such waitpoint'),
    410: jsonContent(ErrorSchema, 'WaitpointExpired or WaitpointRevoked'),
    413: jsonContent(ErrorSchema, 'PayloadTooLarge'),
    422: jsonContent(ErrorSchema, 'WaitpointPayloadInvalid'),
  },
});

/** The callback links of `deps`, or the default derived from its API keys. */
export function waitpointLinksOf(deps: AppDeps): WaitpointLinks {
  return deps.waitpoints ?? { key: waitpointSigningKey({ apiKeys: deps.apiKeys?.keys() ?? null }).key, publicUrl: null };
}

/** A waitpoint as the API answers it. */
export function presentWaitpoint(links: WaitpointLinks, requestUrl: string, w: WaitpointRecord) {
  return {
    id: w.id, runId: w.runId, nodeKey: w.nodeKey, index: w.index, status: w.status, singleUse: w.singleUse, schema: w.schema,
    payload: w.payload, createdAt: w.createdAt, expiresAt: w.expiresAt, completedAt: w.completedAt, callbackUrl: callbackUrl(links, requestUrl, w.id),
  };
}

/** The payload as JSON text, refused past MAX_SIGNAL_PAYLOAD_BYTES or when it breaks the schema (422). */
function checkedPayload(raw: unknown, w: WaitpointRecord, maxBytes: number): string {
  const payload = (raw === undefined ? null : raw) as Json;
  const text = jsonText(payload);
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > maxBytes) throw new ValidationFailedError('waitpoint payload too large', [{ key: 'payload', message: `${bytes} UTF-8 bytes; at most ${maxBytes} (MAX_SIGNAL_PAYLOAD_BYTES)` }]);
  if (w.schema) {
    const v = validateJson(w.schema, payload);
    if (!v.valid) throw new WaitpointPayloadInvalidError(v.errors);
  }
  return text;
}

/** Completes `w` (already read) with `raw`, mapping each outcome to its answer or error. */
async function complete(deps: AppDeps, pool: Pool, tenant: string | null, w: WaitpointRecord, raw: unknown, maxBytes: number): Promise<{ completed: boolean; record: WaitpointRecord }> {
  // a settled answer first: a repeat must not be judged against the schema again
  if (w.status === 'completed' && (w.singleUse || w.settled)) return { completed: false, record: w };
  const gone = goneError(w.status);
  if (gone) throw gone;
  const out: CompleteWaitpointOutcome = await completeWaitpoint(pool, tenant, w.id, checkedPayload(raw, w, maxBytes));
  if (out.kind === 'notFound') throw new NotFoundError('waitpoint');
  if (out.kind === 'completed') {
    deps.logger.info({ runId: w.runId, nodeKey: w.nodeKey, waitpointId: w.id }, 'waitpoint completed');
    await publishWake(deps, w.runId, w.tenantId);
    return { completed: true, record: out.record };
  }
  if (out.kind === 'alreadyCompleted') return { completed: false, record: out.record };
  if (out.kind === 'notToken') throw new NotFoundError('waitpoint');
  throw goneError(out.kind)!;
}

function goneError(status: string): WaitpointGoneError | null {
  if (status === 'expired') return new WaitpointGoneError('WaitpointExpired', 'the waitpoint expired');
  if (status === 'revoked') return new WaitpointGoneError('WaitpointRevoked', 'the waitpoint was revoked (or withdrawn: its Wait no longer waits on it)');
  return null;
}

/** Registers the waitpoint routes (the keyed /v1 ones and the signed callback) on `app`. */
export function registerWaitpointRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  const links = waitpointLinksOf(deps);
  const maxBytes = deps.limits.maxSignalPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
  const tokenOf = async (tenant: string, id: string) => {
    const w = await getWaitpoint(deps.pool, tenant, requireUuid(id, 'waitpoint'));
    if (!w || w.kind !== 'token') throw new NotFoundError('waitpoint');
    return w;
  };

  app.openapi(listRoute, async (c) => {
    const q = c.req.valid('query');
    if (q.runId !== undefined) requireUuid(q.runId, 'run');
    requireCursor(q.cursor, decodeWaitpointCursor);
    const page = await listWaitpoints(deps.pool, {
      tenantId: c.get('tenant'), limit: pageLimit(q.limit),
      ...(q.runId ? { runId: q.runId } : {}), ...(q.status ? { status: q.status } : {}), ...(q.cursor ? { cursor: q.cursor } : {}),
    });
    return sendJson(200, { items: page.items.map((w) => presentWaitpoint(links, c.req.url, w)), nextCursor: page.nextCursor });
  });

  app.openapi(getRoute, async (c) => sendJson(200, presentWaitpoint(links, c.req.url, await tokenOf(c.get('tenant'), c.req.valid('param').id))));

  app.openapi(completeRoute, async (c) => {
    const w = await tokenOf(c.get('tenant'), c.req.valid('param').id);
    const out = await complete(deps, deps.pool, c.get('tenant'), w, bodyMember(c, 'payload'), maxBytes);
    return sendJson(200, { completed: out.completed, alreadyCompleted: !out.completed, waitpoint: presentWaitpoint(links, c.req.url, out.record) });
  });

  app.openapi(revokeRoute, async (c) => {
    const w = await tokenOf(c.get('tenant'), c.req.valid('param').id);
    const out = await revokeWaitpoint(deps.pool, c.get('tenant'), w.id);
    if (out.kind === 'notFound') throw new NotFoundError('waitpoint');
    if (out.kind === 'notWaiting') throw new WaitpointNotWaitingError(out.record.status);
    deps.logger.info({ runId: w.runId, nodeKey: w.nodeKey, waitpointId: w.id }, 'waitpoint revoked');
    await publishWake(deps, w.runId, w.tenantId);
    return sendJson(200, presentWaitpoint(links, c.req.url, out.record));
  });

  app.openapi(callbackRoute, async (c) => {
    const { tokenId, signature } = c.req.valid('param');
    if (!verifyWaitpointSignature(links.key, tokenId, signature)) throw new WaitpointSignatureInvalidError();
    const w = await getWaitpoint(deps.pool, null, requireUuid(tokenId, 'waitpoint'));
    if (!w || w.kind !== 'token') throw new NotFoundError('waitpoint');
    // the signed URL is the credential: its row joins the waitpoint's tenant's chain
    auditAs(w.tenantId, `link:${w.id}`);
    const out = await complete(deps, deps.pool, null, w, c.get('body'), maxBytes);
    return sendJson(200, { completed: out.completed, alreadyCompleted: !out.completed, waitpointId: w.id });
  });

  // a link checker, a browser or a mail scanner opening the URL must not complete it
  app.get('/w/:tokenId/:signature', (c) => {
    const message = 'POST the JSON payload to this URL to complete the waitpoint; a GET never completes it.';
    c.header('allow', 'POST');
    if (/text\/html/i.test(c.req.header('accept') ?? '')) {
      return c.html(`<!doctype html><title>Flowline waitpoint</title><p>${message}</p>`, 405);
    }
    return c.json({ error: { code: 'MethodNotAllowed', message } }, 405);
  });
}
