/**
 * The one table of what each keyed route and live event needs (CONTRACT §8: a key
 * without the scope → 403). `createApp` installs a scope check per entry, refuses to
 * build when a registered /v1 route has no entry (or an entry names no route), and
 * writes each route's scope into the OpenAPI document; the live channel checks its
 * events against {@link LIVE_EVENT_SCOPES}. Ops routes (`/livez`, `/healthz`, `/readyz`,
 * `/metrics`, `/openapi.json`, `/docs`) are outside /v1 and need no key.
 */
import type { ApiKeyScope } from '@flowline/runtime';
import type { LIVE_EVENTS } from '@flowline/queue';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** `"METHOD /v1/path"` (OpenAPI path template) → the scope a key needs for it. */
export const ROUTE_SCOPES = {
  'GET /v1/tools': 'read',
  'GET /v1/workers': 'read',
  'GET /v1/whoami': 'read',

  'GET /v1/api-keys': 'keys',
  'GET /v1/api-keys/{id}': 'keys',
  'POST /v1/api-keys': 'keys',
  'POST /v1/api-keys/{id}/rotate': 'keys',
  'DELETE /v1/api-keys/{id}': 'keys',

  'GET /v1/definitions': 'read',
  'GET /v1/definitions/{id}': 'read',
  'GET /v1/definitions/{id}/render': 'read',
  'GET /v1/definitions/{id}/describe': 'read',
  'GET /v1/definitions/{id}/versions': 'read',
  'GET /v1/definitions/{id}/versions/{version}': 'read',
  'DELETE /v1/definitions/{id}/versions/{version}': 'define',
  'GET /v1/definitions/{id}/diff': 'read',
  'GET /v1/definitions/{id}/aliases': 'read',
  'PUT /v1/definitions/{id}/aliases/{name}': 'define',
  'DELETE /v1/definitions/{id}/aliases/{name}': 'define',
  'POST /v1/definitions': 'define',
  'PUT /v1/definitions/{id}': 'define',
  'DELETE /v1/definitions/{id}': 'define',
  'POST /v1/definitions/{id}/duplicate': 'define',
  'POST /v1/definitions/validate': 'define',
  'POST /v1/definitions/{id}/validate': 'define',
  'POST /v1/definitions/{id}/disable': 'define',
  'POST /v1/definitions/{id}/enable': 'define',

  'POST /v1/definitions/{id}/runs': 'run',
  'GET /v1/runs': 'read',
  'GET /v1/runs/{id}': 'read',
  'GET /v1/runs/{id}/nodes/{key}': 'read',
  'GET /v1/runs/{id}/nodes/{key}/agent-steps': 'read',
  'GET /v1/runs/{id}/events': 'read',
  'GET /v1/runs/{id}/state': 'read',
  'GET /v1/runs/{id}/stream': 'read',
  'GET /v1/runs/{id}/controls': 'read',
  'GET /v1/runs/{id}/blockers': 'read',
  'POST /v1/runs/{id}/nodes/{key}/decide': 'run',
  'POST /v1/runs/{id}/signals': 'run',
  'GET /v1/waitpoints': 'read',
  'GET /v1/waitpoints/{id}': 'read',
  'POST /v1/waitpoints/{id}/complete': 'run',
  'DELETE /v1/waitpoints/{id}': 'operate',
  'POST /v1/events': 'run',
  'GET /v1/webhooks': 'read',
  'GET /v1/webhooks/{id}': 'read',
  'POST /v1/webhooks': 'define',
  'PUT /v1/webhooks/{id}': 'define',
  'DELETE /v1/webhooks/{id}': 'define',
  'GET /v1/webhooks/{id}/deliveries': 'read',
  'POST /v1/webhooks/{id}/deliveries/{deliveryId}/replay': 'run',
  'GET /v1/events': 'read',
  'GET /v1/events/{id}': 'read',
  'POST /v1/events/{id}/replay': 'run',

  'POST /v1/runs/{id}/cancel': 'operate',
  'POST /v1/runs/{id}/reschedule': 'operate',

  'GET /v1/schedules': 'read',
  'GET /v1/schedules/{id}': 'read',
  'GET /v1/schedules/{id}/preview': 'read',
  'GET /v1/schedules/{id}/slots': 'read',
  'POST /v1/schedules': 'define',
  'PUT /v1/schedules/{id}': 'define',
  'DELETE /v1/schedules/{id}': 'define',
  'POST /v1/schedules/{id}/pause': 'operate',
  'POST /v1/schedules/{id}/resume': 'operate',
  'POST /v1/schedules/{id}/trigger': 'run',
  'POST /v1/schedules/{id}/backfill': 'run',
  'POST /v1/runs/{id}/pause': 'operate',
  'POST /v1/runs/{id}/resume': 'operate',
  'POST /v1/runs/{id}/step': 'operate',
  'PUT /v1/runs/{id}/breakpoints': 'operate',
  'PUT /v1/runs/{id}/edges/{edgeKey}/override': 'operate',
  'POST /v1/runs/{id}/nodes/{key}/skip': 'operate',
  'POST /v1/runs/{id}/nodes/{key}/retry': 'operate',
  'POST /v1/runs/{id}/nodes/{key}/complete': 'operate',
  'PUT /v1/runs/{id}/nodes/{key}/input': 'operate',
  'POST /v1/runs/{id}/nodes/{key}/steer': 'operate',
  'POST /v1/runs/{id}/fork': 'operate',
  'POST /v1/runs/{id}/migrate': 'operate',
  'POST /v1/runs/bulk': 'operate',
  'GET /v1/bulk-jobs/{bulkId}': 'read',
  'GET /v1/bulk-jobs/{bulkId}/runs': 'read',
  'POST /v1/bulk-jobs/{bulkId}/resume': 'operate',

  'GET /v1/agents': 'read',
  'GET /v1/agents/{id}': 'read',
  'GET /v1/agents/{id}/versions': 'read',
  'GET /v1/agents/{id}/versions/{version}': 'read',
  'POST /v1/agents': 'define',
  'PUT /v1/agents/{id}': 'define',
  'DELETE /v1/agents/{id}': 'define',
  'GET /v1/mcp-servers': 'read',
  'GET /v1/mcp-servers/{id}': 'read',
  'POST /v1/mcp-servers': 'define',
  'PUT /v1/mcp-servers/{id}': 'define',
  'DELETE /v1/mcp-servers/{id}': 'define',
  'GET /v1/mcp-servers/{id}/tools': 'read',

  'POST /v1/files': 'run',
  'GET /v1/files/{id}': 'read',

  'GET /v1/conversations': 'read',
  'POST /v1/conversations/{id}/messages': 'run',
  'DELETE /v1/conversations/{id}': 'run',
  'GET /v1/conversations/{id}/messages': 'read',
  'GET /v1/conversations/{id}/runs': 'read',

  'GET /v1/audit': 'audit',
  'GET /v1/audit/export': 'audit',
  'GET /v1/audit/verify': 'audit',
} as const satisfies Record<`${Method} /v1/${string}`, ApiKeyScope>;

/** Client → server live events → the scope a key needs for them. */
export const LIVE_EVENT_SCOPES = {
  subscribeRun: 'read',
  unsubscribeRun: 'read',
  streamNodeActivity: 'read',
} as const satisfies Record<Exclude<keyof typeof LIVE_EVENTS, 'runChanged' | 'nodeActivity'>, ApiKeyScope>;

/** One table entry split into Hono's method and path form (`{id}` → `:id`). */
export interface ScopedRoute {
  method: Method;
  /** OpenAPI template, as in the table */
  path: string;
  /** Hono pattern */
  honoPath: string;
  scope: ApiKeyScope;
}

/** The table as a list of {@link ScopedRoute}. */
export function scopedRoutes(): ScopedRoute[] {
  return Object.entries(ROUTE_SCOPES).map(([route, scope]) => {
    const [method, path] = route.split(' ') as [Method, string];
    return { method, path, honoPath: path.replace(/\{(\w+)\}/g, ':$1'), scope };
  });
}

/** `"METHOD /path"` with Hono's `:param` turned back into `{param}`. */
export function routeName(method: string, honoPath: string): string {
  return `${method.toUpperCase()} ${honoPath.replace(/:(\w+)/g, '{$1}')}`;
}
