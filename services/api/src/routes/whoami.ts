/**
 * `GET /v1/whoami`: who the request's key acts as — its tenant and scopes, and whether the
 * server checks keys at all (`authRequired` false in single-tenant mode). The console signs
 * in with it and hides what the scopes forbid.
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
      description: "who this key acts as: 'key:' and the first 16 hex digits of the key's SHA-256 digest ('anonymous' without keys) — what approval quorums name",
    }),
    scopes: z.array(z.enum(API_KEY_SCOPES)).openapi({ description: 'what this key may do, in the order read, run, operate, define, audit, admin' }),
    authRequired: z.boolean().openapi({ description: 'false when the server runs single-tenant without keys (API_KEYS unset)' }),
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
    return sendJson(200, {
      tenant: c.get('tenant'),
      principal: c.get('principal'),
      scopes: API_KEY_SCOPES.filter((s) => held.has(s)),
      authRequired: deps.apiKeys !== null,
    });
  });
}
