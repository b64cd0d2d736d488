/**
 * `GET /v1/whoami`: who the request acts as — its principal, tenant and scopes, a managed
 * key's id, constraints and expiry, a signed-in person's name, groups and session end, and
 * whether the server checks keys at all (`authRequired` false in single-tenant mode). The console signs in with it and hides what
 * the scopes forbid.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { API_KEY_SCOPES } from '@flowline/runtime';
import type { AppDeps, AppEnv } from '../context';
import { sendJson } from '../body';
import { jsonContent } from '../schemas';
import { v1Route } from '../v1-route';

const WhoamiSchema = z
  .object({
    tenant: z.string(),
    principal: z.string().openapi({
      description:
        "who this key acts as: 'service:<key id>' for a managed key, 'key:' and the first 16 hex digits of the key's SHA-256 digest for an API_KEYS entry ('anonymous' without keys) — what runs, intents and approval quorums name",
    }),
    scopes: z.array(z.enum(API_KEY_SCOPES)).openapi({ description: 'what this key may do, in the order read, run, operate, define, keys, audit, admin' }),
    keyId: z.string().nullable().openapi({ description: "a managed key's id (GET /v1/api-keys/{id}); null for API_KEYS entries and without keys" }),
    constraints: z
      .object({ definitionIds: z.array(z.string()).nullable(), cidrs: z.array(z.string()).nullable() })
      .nullable()
      .openapi({ description: "a managed key's limits (null members: unconstrained); null for API_KEYS entries" }),
    expiresAt: z.string().nullable().openapi({ description: "when a managed key stops working; null: never" }),
    authRequired: z.boolean().openapi({ description: 'false when the server runs single-tenant without keys (API_KEYS unset)' }),
    via: z.enum(['key', 'session', 'none']).openapi({ description: "how this request authenticated: a bearer key, a person's sign-in session cookie (single sign-on), or none (single-tenant without keys)" }),
    name: z.string().nullable().openapi({ description: "a signed-in person's display name from the issuer; null for keys" }),
    groups: z.array(z.string()).openapi({ description: "a signed-in person's groups (approval quorums by group count them); empty for keys" }),
    sessionExpiresAt: z.string().nullable().openapi({ description: 'when a sign-in session ends; null for keys' }),
  })
  .openapi('Whoami');

const whoami = v1Route.session('get', '/v1/whoami', {
  operationId: 'getWhoami',
  summary: "The calling key's tenant, principal and scopes",
  responses: { 200: jsonContent(WhoamiSchema, 'the tenant and scopes of the key') },
});

/** Registers `GET /v1/whoami`. */
export function registerWhoamiRoute(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  app.openapi(whoami, (c) => {
    const held = c.get('scopes');
    const p = c.get('principal');
    const m = p.managed;
    return sendJson(200, {
      tenant: c.get('tenant'),
      principal: p.id,
      scopes: API_KEY_SCOPES.filter((s) => held.has(s)),
      keyId: m?.keyId ?? null,
      constraints: m ? { definitionIds: m.definitionIds ? [...m.definitionIds] : null, cidrs: m.cidrs ? [...m.cidrs.cidrs] : null } : null,
      expiresAt: m?.expiresAt ? m.expiresAt.toISOString() : null,
      authRequired: deps.apiKeys !== null,
      via: p.user ? 'session' : deps.apiKeys === null ? 'none' : 'key',
      name: p.user?.name ?? null,
      groups: [...(p.groups ?? [])],
      sessionExpiresAt: p.user?.sessionExpiresAt ?? null,
    });
  });
}
