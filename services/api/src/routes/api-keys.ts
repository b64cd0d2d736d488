/**
 * Managed API keys: `POST /v1/api-keys` mints one (its secret answered this once, never
 * again), `GET` lists and reads them (prefix and last four only), `POST …/rotate` gives a key
 * a new secret with a grace for the old one, `DELETE` revokes it on every replica at once
 * (the cache invalidation of principals/managed-keys.ts). A key mints or rotates only keys
 * holding no more than itself: scopes, definitions, networks and lifetime (403
 * `ScopeEscalation`); revoking any key of the tenant is always allowed.
 */
import { randomUUID } from 'node:crypto';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { decodeApiKeyCursor, getApiKey, insertApiKey, listApiKeys, revokeApiKey, rotateApiKey, withTransaction, type ApiKeyRecord } from '@flowline/db';
import { API_KEY_SCOPES } from '@flowline/runtime';
import { orderedScopes, servicePrincipalId, type Principal, type PrincipalResolver } from '../auth';
import type { AppDeps, AppEnv } from '../context';
import { sendJson } from '../body';
import { ApiError, NotFoundError, ScopeEscalationError, ValidationFailedError } from '../errors';
import { iso, pageLimit, requireCursor, requireUuid } from '../present';
import { cidrsWithin, newKeySecret, parseCidr } from '../principals/key-secret';
import { DEFAULT_MANAGED_KEY_TUNING } from '../principals/managed-keys';
import { ErrorSchema, IdParam, jsonBody, jsonContent, PageQuery, pageSchema } from '../schemas';
import { v1Route } from '../v1-route';

/** Managed keys cannot be made here: no pepper, or the server runs without keys. */
export class ManagedKeysDisabledError extends ApiError {
  constructor(why: string) {
    super(409, 'ManagedKeysDisabled', `managed API keys are disabled: ${why}`);
  }
}

const MAX_DEFINITIONS = 100;
const MAX_CIDRS = 64;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const ConstraintsBody = z
  .object({
    definitionIds: z.array(z.string().regex(UUID, 'must be a definition id')).min(1).max(MAX_DEFINITIONS).optional().openapi({
      description: "the definitions whose runs the key may start, read and act on; any other definition's run answers 403 KeyConstraint",
    }),
    cidrs: z
      .array(z.string().refine((c) => parseCidr(c) !== null, 'must be a CIDR (10.0.0.0/8, 2001:db8::/32) or an address'))
      .min(1)
      .max(MAX_CIDRS)
      .optional()
      .openapi({ description: 'the client networks the key may be used from; a request from elsewhere answers 403 KeyConstraint' }),
  })
  .strict();

const CreateKeyBody = z
  .object({
    name: z.string().min(1).max(128),
    scopes: z.array(z.enum(API_KEY_SCOPES)).min(1).max(API_KEY_SCOPES.length),
    constraints: ConstraintsBody.optional(),
    expiresAt: z.string().datetime({ offset: true }).optional().openapi({ description: 'after this instant the key answers 401' }),
  })
  .strict()
  .openapi('ApiKeyCreate');

const RotateBody = z
  .object({
    graceSeconds: z.number().int().min(0).openapi({ description: 'how long the old secret keeps working (at most API_KEY_MAX_ROTATION_GRACE_S); 0 ends it now' }),
  })
  .strict()
  .openapi('ApiKeyRotate');

const ApiKeySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    principal: z.string().openapi({ description: "who the key acts as: 'service:<id>' (what runs, intents and approvals record)" }),
    prefix: z.string().openapi({ description: "the recognisable start of the secret, 'fl_<tenant>'" }),
    lastFour: z.string().openapi({ description: "the secret's last four characters" }),
    owner: z.string().openapi({ description: 'the principal that created the key' }),
    scopes: z.array(z.enum(API_KEY_SCOPES)),
    constraints: z.object({ definitionIds: z.array(z.string()).nullable(), cidrs: z.array(z.string()).nullable() }),
    createdAt: z.string(),
    expiresAt: z.string().nullable(),
    rotatedAt: z.string().nullable(),
    revokedAt: z.string().nullable().openapi({ description: 'set once revoked: the key no longer authenticates' }),
    lastUsed: z
      .object({ at: z.string(), address: z.string().nullable() })
      .nullable()
      .openapi({ description: 'its last use, written at most once per API_KEY_LAST_USED_INTERVAL_S (60 s by default)' }),
  })
  .openapi('ApiKey');

const ApiKeyWithSecretSchema = ApiKeySchema.extend({
  secret: z.string().openapi({ description: 'the key itself, answered this once: it cannot be read again' }),
}).openapi('ApiKeyWithSecret');

const createKey = v1Route.apiKeys('post', '/v1/api-keys', {
  operationId: 'createApiKey',
  summary: 'Mint a managed API key',
  description:
    'Answers the key with its `secret`, shown this once. The new key holds no more than the calling key: its scopes, definitions, networks and lifetime must be within the caller\'s (else 403 ScopeEscalation). 409 ManagedKeysDisabled without API_KEY_PEPPER (or ENCRYPTION_KEY) or without API_KEYS.',
  request: { body: jsonBody(CreateKeyBody) },
  responses: {
    201: jsonContent(ApiKeyWithSecretSchema, 'the key and its secret'),
    409: jsonContent(ErrorSchema, 'ManagedKeysDisabled'),
  },
});

const listKeys = v1Route.apiKeys('get', '/v1/api-keys', {
  operationId: 'listApiKeys',
  summary: "The tenant's managed API keys, newest first (revoked ones included)",
  request: { query: PageQuery },
  responses: { 200: jsonContent(pageSchema(ApiKeySchema, 'ApiKeyPage'), 'a page of keys (never their secrets)') },
});

const getKey = v1Route.apiKeys('get', '/v1/api-keys/{id}', {
  operationId: 'getApiKey',
  summary: 'One managed API key (never its secret)',
  request: { params: IdParam },
  responses: { 200: jsonContent(ApiKeySchema, 'the key') },
});

const rotateKey = v1Route.apiKeys('post', '/v1/api-keys/{id}/rotate', {
  operationId: 'rotateApiKey',
  summary: 'Give a managed API key a new secret',
  description:
    "Answers the new `secret` once. The old secret keeps working for `graceSeconds`, then only the new one does. The caller must hold everything the key holds (else 403 ScopeEscalation). 404 for a revoked key.",
  request: { params: IdParam, body: jsonBody(RotateBody) },
  responses: {
    200: jsonContent(ApiKeyWithSecretSchema, 'the key and its new secret'),
    409: jsonContent(ErrorSchema, 'ManagedKeysDisabled'),
  },
});

const revokeKey = v1Route.apiKeys('delete', '/v1/api-keys/{id}', {
  operationId: 'revokeApiKey',
  summary: 'Revoke a managed API key',
  description: 'Every API replica refuses the key (401) within moments (idempotent: revoking a revoked key answers 204 again).',
  request: { params: IdParam },
  responses: { 204: { description: 'revoked' } },
});

/** A key as answered: never its secret or hash. */
function present(k: ApiKeyRecord) {
  return {
    id: k.id,
    name: k.name,
    principal: servicePrincipalId(k.id),
    prefix: k.prefix,
    lastFour: k.lastFour,
    owner: k.owner,
    scopes: orderedScopes(k.scopes),
    constraints: { definitionIds: k.definitionIds, cidrs: k.cidrs },
    createdAt: k.createdAt.toISOString(),
    expiresAt: iso(k.expiresAt),
    rotatedAt: iso(k.rotatedAt),
    revokedAt: iso(k.revokedAt),
    lastUsed: k.lastUsedAt ? { at: k.lastUsedAt.toISOString(), address: k.lastUsedAddress } : null,
  };
}

/** What a key would hold: the members {@link refuseEscalation} compares. */
interface Holding {
  scopes: readonly string[];
  definitionIds: readonly string[] | null;
  cidrs: readonly string[] | null;
  expiresAt: Date | null;
}

/**
 * Refuses (403 ScopeEscalation) a key holding anything `caller` does not: a scope it lacks,
 * a definition outside its own, a network outside its own, a longer life.
 */
function refuseEscalation(caller: Principal, k: Holding): void {
  const extra = k.scopes.filter((s) => !caller.scopes.has(s as never));
  if (extra.length > 0) throw new ScopeEscalationError(`the calling key lacks the scope(s) ${extra.join(', ')}`);
  const m = caller.managed;
  if (!m) return;
  if (m.definitionIds && (k.definitionIds === null || k.definitionIds.some((d) => !m.definitionIds?.has(d)))) {
    throw new ScopeEscalationError("constraints.definitionIds must be within the calling key's definitions");
  }
  if (m.cidrs && (k.cidrs === null || !cidrsWithin(k.cidrs, m.cidrs.cidrs))) {
    throw new ScopeEscalationError("constraints.cidrs must be within the calling key's networks");
  }
  if (m.expiresAt && (k.expiresAt === null || k.expiresAt.getTime() > m.expiresAt.getTime())) {
    throw new ScopeEscalationError(`expiresAt must be no later than the calling key's (${m.expiresAt.toISOString()})`);
  }
}

/** Registers the `/v1/api-keys` routes. */
export function registerApiKeyRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps, principals: PrincipalResolver): void {
  const maxGraceS = deps.managedKeys?.maxRotationGraceS ?? DEFAULT_MANAGED_KEY_TUNING.maxRotationGraceS;
  const managed = () => {
    if (principals.managed) return principals.managed;
    throw new ManagedKeysDisabledError(deps.apiKeys === null ? 'the server runs without keys (API_KEYS unset)' : 'neither API_KEY_PEPPER nor ENCRYPTION_KEY is set');
  };

  app.openapi(createKey, async (c) => {
    const keys = managed();
    const body = c.req.valid('json');
    const expiresAt = body.expiresAt === undefined ? null : new Date(body.expiresAt);
    if (expiresAt !== null && expiresAt.getTime() <= Date.now()) {
      throw new ValidationFailedError('expiresAt is in the past', [{ key: 'expiresAt', message: 'must be in the future' }]);
    }
    const holding: Holding = {
      scopes: orderedScopes(body.scopes),
      definitionIds: body.constraints?.definitionIds ? [...new Set(body.constraints.definitionIds.map((d) => d.toLowerCase()))] : null,
      cidrs: body.constraints?.cidrs ? [...new Set(body.constraints.cidrs)] : null,
      expiresAt,
    };
    const caller = c.get('principal');
    refuseEscalation(caller, holding);
    const tenant = c.get('tenant');
    const { secret, prefix, lastFour } = newKeySecret(tenant);
    const row = await insertApiKey(deps.pool, {
      id: randomUUID(),
      tenantId: tenant,
      name: body.name,
      scopes: [...holding.scopes],
      definitionIds: holding.definitionIds ? [...holding.definitionIds] : null,
      cidrs: holding.cidrs ? [...holding.cidrs] : null,
      owner: caller.id,
      prefix,
      lastFour,
      expiresAt,
      hash: keys.hash(secret),
    });
    deps.logger.info({ keyId: row.id, owner: caller.id }, 'api key created');
    return sendJson(201, { ...present(row), secret }, { location: `/v1/api-keys/${row.id}`, 'cache-control': 'no-store' });
  });

  app.openapi(listKeys, async (c) => {
    const q = c.req.valid('query');
    const page = await listApiKeys(deps.pool, c.get('tenant'), pageLimit(q.limit), requireCursor(q.cursor, decodeApiKeyCursor));
    return sendJson(200, { items: page.items.map(present), nextCursor: page.nextCursor });
  });

  app.openapi(getKey, async (c) => {
    const k = await getApiKey(deps.pool, c.get('tenant'), requireUuid(c.req.valid('param').id, 'api key'));
    if (!k) throw new NotFoundError('api key');
    return sendJson(200, present(k));
  });

  app.openapi(rotateKey, async (c) => {
    const keys = managed();
    const id = requireUuid(c.req.valid('param').id, 'api key');
    const { graceSeconds } = c.req.valid('json');
    if (graceSeconds > maxGraceS) {
      throw new ValidationFailedError(`graceSeconds is over API_KEY_MAX_ROTATION_GRACE_S (${maxGraceS})`, [{ key: 'graceSeconds', message: `at most ${maxGraceS}` }]);
    }
    const tenant = c.get('tenant');
    const current = await getApiKey(deps.pool, tenant, id);
    if (!current || current.revokedAt !== null) throw new NotFoundError('api key');
    // a rotation hands over a working secret of the key: only a caller holding all it holds may
    refuseEscalation(c.get('principal'), current);
    const { secret, prefix, lastFour } = newKeySecret(tenant);
    const row = await withTransaction(deps.pool, (tx) => rotateApiKey(tx, tenant, id, { hash: keys.hash(secret), prefix, lastFour, graceSeconds }));
    if (!row) throw new NotFoundError('api key');
    await keys.invalidate(id);
    deps.logger.info({ keyId: id, graceSeconds }, 'api key rotated');
    return sendJson(200, { ...present(row), secret }, { 'cache-control': 'no-store' });
  });

  app.openapi(revokeKey, async (c) => {
    const row = await revokeApiKey(deps.pool, c.get('tenant'), requireUuid(c.req.valid('param').id, 'api key'));
    if (!row) throw new NotFoundError('api key');
    // after the commit: a replica re-reading on the message finds the key revoked
    await principals.managed?.invalidate(row.id);
    deps.logger.info({ keyId: row.id }, 'api key revoked');
    return c.body(null, 204);
  });
}
