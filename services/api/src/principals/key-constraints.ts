/**
 * A managed key constrained to some definitions (`constraints.definitionIds`) reaches those
 * definitions and their runs only: 403 `KeyConstraint` elsewhere. The check is central — one
 * per {@link ROUTE_SCOPES} entry, installed like the scope checks — and reads how each route
 * names its definition from {@link ROUTE_DEFINITION_SUBJECTS}. A route without an entry is
 * refused to a constrained key: a new route is closed to such keys until someone says how it
 * names its definition. Unconstrained principals pass without any work.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import type { Pool } from 'pg';
import { definitionOfSubject, type DefinitionSubject } from '@flowline/db';
import { routeCheck } from '../auth';
import type { AppEnv } from '../context';
import { KeyConstraintError } from '../errors';
import { isUuid } from '../present';
import { scopedRoutes, type ROUTE_SCOPES } from '../route-scopes';

/**
 * How a route names the definition it acts on: `free` (it acts on no definition's runs),
 * `definition` (path `{id}` is the definition), a `run` / `waitpoint` / `schedule` path `{id}`
 * (its definition is read from Postgres), or `runList` (the `definitionId` query filter, which
 * a constrained key must give).
 */
type Subject = 'free' | 'definition' | 'runList' | DefinitionSubject;

/** The routes a constrained key may reach, and how each names its definition. */
export const ROUTE_DEFINITION_SUBJECTS: Partial<Record<keyof typeof ROUTE_SCOPES, Subject>> = {
  'GET /v1/tools': 'free',
  'GET /v1/whoami': 'free',
  'GET /v1/api-keys': 'free',
  'GET /v1/api-keys/{id}': 'free',
  'POST /v1/api-keys': 'free',
  'POST /v1/api-keys/{id}/rotate': 'free',
  'DELETE /v1/api-keys/{id}': 'free',

  'GET /v1/definitions/{id}': 'definition',
  'GET /v1/definitions/{id}/render': 'definition',
  'GET /v1/definitions/{id}/describe': 'definition',
  'GET /v1/definitions/{id}/versions': 'definition',
  'GET /v1/definitions/{id}/versions/{version}': 'definition',
  'PUT /v1/definitions/{id}': 'definition',
  'DELETE /v1/definitions/{id}': 'definition',
  'POST /v1/definitions/{id}/validate': 'definition',
  'POST /v1/definitions/{id}/disable': 'definition',
  'POST /v1/definitions/{id}/enable': 'definition',
  'POST /v1/definitions/{id}/runs': 'definition',

  'GET /v1/runs': 'runList',
  'GET /v1/runs/{id}': 'run',
  'GET /v1/runs/{id}/nodes/{key}': 'run',
  'GET /v1/runs/{id}/nodes/{key}/agent-steps': 'run',
  'GET /v1/runs/{id}/events': 'run',
  'GET /v1/runs/{id}/state': 'run',
  'GET /v1/runs/{id}/stream': 'run',
  'GET /v1/runs/{id}/controls': 'run',
  'GET /v1/runs/{id}/blockers': 'run',
  'POST /v1/runs/{id}/nodes/{key}/decide': 'run',
  'POST /v1/runs/{id}/signals': 'run',
  'POST /v1/runs/{id}/cancel': 'run',
  'POST /v1/runs/{id}/reschedule': 'run',
  'POST /v1/runs/{id}/pause': 'run',
  'POST /v1/runs/{id}/resume': 'run',
  'POST /v1/runs/{id}/step': 'run',
  'PUT /v1/runs/{id}/breakpoints': 'run',
  'PUT /v1/runs/{id}/edges/{edgeKey}/override': 'run',
  'POST /v1/runs/{id}/nodes/{key}/skip': 'run',
  'POST /v1/runs/{id}/nodes/{key}/retry': 'run',
  'POST /v1/runs/{id}/nodes/{key}/complete': 'run',
  'PUT /v1/runs/{id}/nodes/{key}/input': 'run',
  'POST /v1/runs/{id}/nodes/{key}/steer': 'run',
  'POST /v1/runs/{id}/fork': 'run',

  'GET /v1/waitpoints/{id}': 'waitpoint',
  'POST /v1/waitpoints/{id}/complete': 'waitpoint',
  'DELETE /v1/waitpoints/{id}': 'waitpoint',

  'GET /v1/schedules/{id}': 'schedule',
  'GET /v1/schedules/{id}/preview': 'schedule',
  'GET /v1/schedules/{id}/slots': 'schedule',
  'PUT /v1/schedules/{id}': 'schedule',
  'DELETE /v1/schedules/{id}': 'schedule',
  'POST /v1/schedules/{id}/pause': 'schedule',
  'POST /v1/schedules/{id}/resume': 'schedule',
  'POST /v1/schedules/{id}/trigger': 'schedule',
  'POST /v1/schedules/{id}/backfill': 'schedule',
};

const refused = (what: string) => new KeyConstraintError(`this key is limited to some definitions: ${what}`);

/**
 * Refuses a constrained principal whose definitions do not include `definitionId`; unknown
 * ids (null) pass, so the route answers its own 404.
 */
export function checkDefinition(c: Context<AppEnv>, definitionId: string | null): void {
  const allowed = c.get('principal').managed?.definitionIds;
  if (allowed && definitionId !== null && !allowed.has(definitionId)) throw refused('not this one');
}

/** The definition a constrained key's request names, judged by the route's {@link Subject}. */
async function judge(c: Context<AppEnv>, pool: Pool, subject: Subject | undefined, allowed: ReadonlySet<string>): Promise<void> {
  if (subject === 'free') return;
  if (subject === undefined) throw refused('this route reaches beyond them');
  if (subject === 'runList') {
    const filter = c.req.query('definitionId')?.toLowerCase();
    if (filter === undefined || !allowed.has(filter)) throw refused('list runs with definitionId set to one of them');
    return;
  }
  const param = c.req.param('id');
  if (param === undefined || !isUuid(param)) return;
  // ids are stored and compared in lower case (a path may spell a uuid in upper case)
  const id = param.toLowerCase();
  const definitionId = subject === 'definition' ? id : await definitionOfSubject(pool, c.get('tenant'), subject, id);
  checkDefinition(c, definitionId);
}

/**
 * Installs the definition check of every {@link ROUTE_SCOPES} entry, matched by Hono's router
 * on the route's method and path. Call after the scope checks.
 */
export function installKeyConstraints(app: OpenAPIHono<AppEnv>, pool: Pool): void {
  const subjects: Partial<Record<string, Subject>> = ROUTE_DEFINITION_SUBJECTS;
  for (const r of scopedRoutes()) {
    const subject = subjects[`${r.method} ${r.path}`];
    const check: MiddlewareHandler<AppEnv> = async (c, next) => {
      const allowed = c.get('principal').managed?.definitionIds;
      if (allowed) await judge(c, pool, subject, allowed);
      await next();
    };
    app.on(r.method, r.honoPath, routeCheck(check));
  }
}
