/**
 * The one table of what each mutating route records in the audit log: a stable dotted action
 * name and the resource it acts on. `createApp` refuses to build when a mutating route
 * (POST/PUT/PATCH/DELETE under /v1, and the keyless `/hooks` and `/w` ones) has no entry here,
 * or an entry names no route; the audit middleware (audit/middleware.ts) resolves a request to
 * its entry before the route runs, so the action is known to the transaction that records it.
 *
 * `id` says where the resource's id is read: `param:<name>` a path parameter (the default is
 * `param:id` when the path has one), `answer:<member>` a member of the JSON answer (a create
 * learns its id only then), `none` no id.
 */

type Method = 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One route's audit record. */
export interface AuditRouteSpec {
  action: string;
  resource: string;
  id?: `param:${string}` | `answer:${string}` | 'none';
}

/** `"METHOD /path"` (OpenAPI path template) → what the route records. */
export const ROUTE_AUDIT_ACTIONS = {
  'POST /v1/definitions': { action: 'definition.create', resource: 'definition', id: 'answer:id' },
  'PUT /v1/definitions/{id}': { action: 'definition.update', resource: 'definition' },
  'DELETE /v1/definitions/{id}': { action: 'definition.delete', resource: 'definition' },
  'DELETE /v1/definitions/{id}/versions/{version}': { action: 'definition.retireVersion', resource: 'definition' },
  'POST /v1/definitions/{id}/duplicate': { action: 'definition.duplicate', resource: 'definition', id: 'answer:id' },
  'POST /v1/definitions/validate': { action: 'definition.validateDocument', resource: 'definition', id: 'none' },
  'POST /v1/definitions/{id}/validate': { action: 'definition.validate', resource: 'definition' },
  'POST /v1/definitions/{id}/disable': { action: 'definition.disable', resource: 'definition' },
  'POST /v1/definitions/{id}/enable': { action: 'definition.enable', resource: 'definition' },
  'PUT /v1/definitions/{id}/aliases/{name}': { action: 'definition.setAlias', resource: 'definition' },
  'DELETE /v1/definitions/{id}/aliases/{name}': { action: 'definition.deleteAlias', resource: 'definition' },

  'POST /v1/definitions/{id}/runs': { action: 'run.start', resource: 'run', id: 'answer:runId' },
  'POST /v1/runs/{id}/nodes/{key}/decide': { action: 'gate.decide', resource: 'run' },
  'POST /v1/runs/{id}/signals': { action: 'run.signal', resource: 'run' },
  'POST /v1/waitpoints/{id}/complete': { action: 'waitpoint.complete', resource: 'waitpoint' },
  'DELETE /v1/waitpoints/{id}': { action: 'waitpoint.revoke', resource: 'waitpoint' },
  'POST /v1/events': { action: 'event.publish', resource: 'event', id: 'none' },
  'POST /v1/events/{id}/replay': { action: 'event.replay', resource: 'event' },
  'POST /v1/webhooks': { action: 'webhook.create', resource: 'webhook', id: 'answer:id' },
  'PUT /v1/webhooks/{id}': { action: 'webhook.update', resource: 'webhook' },
  'DELETE /v1/webhooks/{id}': { action: 'webhook.delete', resource: 'webhook' },
  'POST /v1/webhooks/{id}/deliveries/{deliveryId}/replay': { action: 'webhook.replayDelivery', resource: 'webhook' },

  'POST /v1/api-keys': { action: 'apiKey.create', resource: 'apiKey', id: 'answer:id' },
  'POST /v1/api-keys/{id}/rotate': { action: 'apiKey.rotate', resource: 'apiKey' },
  'DELETE /v1/api-keys/{id}': { action: 'apiKey.revoke', resource: 'apiKey' },

  'POST /v1/runs/{id}/cancel': { action: 'run.cancel', resource: 'run' },
  'POST /v1/runs/{id}/reschedule': { action: 'run.reschedule', resource: 'run' },
  'POST /v1/runs/{id}/pause': { action: 'run.pause', resource: 'run' },
  'POST /v1/runs/{id}/resume': { action: 'run.resume', resource: 'run' },
  'POST /v1/runs/{id}/step': { action: 'run.step', resource: 'run' },
  'PUT /v1/runs/{id}/breakpoints': { action: 'run.setBreakpoints', resource: 'run' },
  'PUT /v1/runs/{id}/edges/{edgeKey}/override': { action: 'run.overrideEdge', resource: 'run' },
  'POST /v1/runs/{id}/nodes/{key}/skip': { action: 'node.skip', resource: 'run' },
  'POST /v1/runs/{id}/nodes/{key}/retry': { action: 'node.retry', resource: 'run' },
  'POST /v1/runs/{id}/nodes/{key}/complete': { action: 'node.complete', resource: 'run' },
  'PUT /v1/runs/{id}/nodes/{key}/input': { action: 'node.setInput', resource: 'run' },
  'POST /v1/runs/{id}/nodes/{key}/steer': { action: 'node.steer', resource: 'run' },
  'POST /v1/runs/{id}/fork': { action: 'run.fork', resource: 'run' },
  'POST /v1/runs/{id}/migrate': { action: 'run.migrate', resource: 'run' },
  'POST /v1/runs/bulk': { action: 'run.bulk', resource: 'bulkJob', id: 'answer:bulkId' },
  'POST /v1/bulk-jobs/{bulkId}/resume': { action: 'bulkJob.resume', resource: 'bulkJob', id: 'param:bulkId' },

  'POST /v1/schedules': { action: 'schedule.create', resource: 'schedule', id: 'answer:id' },
  'PUT /v1/schedules/{id}': { action: 'schedule.update', resource: 'schedule' },
  'DELETE /v1/schedules/{id}': { action: 'schedule.delete', resource: 'schedule' },
  'POST /v1/schedules/{id}/pause': { action: 'schedule.pause', resource: 'schedule' },
  'POST /v1/schedules/{id}/resume': { action: 'schedule.resume', resource: 'schedule' },
  'POST /v1/schedules/{id}/trigger': { action: 'schedule.trigger', resource: 'schedule' },
  'POST /v1/schedules/{id}/backfill': { action: 'schedule.backfill', resource: 'schedule' },

  'POST /v1/agents': { action: 'agent.create', resource: 'agent', id: 'answer:id' },
  'PUT /v1/agents/{id}': { action: 'agent.update', resource: 'agent' },
  'DELETE /v1/agents/{id}': { action: 'agent.delete', resource: 'agent' },
  'POST /v1/mcp-servers': { action: 'mcpServer.create', resource: 'mcpServer', id: 'answer:id' },
  'PUT /v1/mcp-servers/{id}': { action: 'mcpServer.update', resource: 'mcpServer' },
  'DELETE /v1/mcp-servers/{id}': { action: 'mcpServer.delete', resource: 'mcpServer' },

  'POST /v1/files': { action: 'file.upload', resource: 'file', id: 'answer:id' },
  'POST /v1/conversations/{id}/messages': { action: 'conversation.send', resource: 'conversation' },
  'DELETE /v1/conversations/{id}': { action: 'conversation.delete', resource: 'conversation' },

  // keyless: the route names the tenant and principal once its credential (a hook's signature
  // check, a link's signature) says whose request it is (audit/middleware.ts `auditAs`)
  'POST /hooks/{tenant}/{slug}': { action: 'webhook.deliver', resource: 'webhook', id: 'none' },
  'POST /w/{tokenId}/{signature}': { action: 'waitpoint.completeByLink', resource: 'waitpoint', id: 'param:tokenId' },
  'POST /w/a/{runId}/{nodeKey}/{principal}/{signature}': { action: 'gate.decideByLink', resource: 'run', id: 'param:runId' },
} as const satisfies Record<`${Method} /${string}`, AuditRouteSpec>;

/** True for the methods that change something: their requests are audited. */
export const isMutatingMethod = (method: string): boolean => method === 'POST' || method === 'PUT' || method === 'PATCH' || method === 'DELETE';

/** True for the paths whose mutating routes are audited: /v1 and the keyless /hooks and /w. */
export const isAuditedPath = (path: string): boolean => path.startsWith('/v1/') || path.startsWith('/hooks/') || path.startsWith('/w/');

/** One table entry, compiled to match a request's method and path. */
export interface AuditRoute extends AuditRouteSpec {
  method: Method;
  /** OpenAPI template, as in the table */
  path: string;
  /** true for /v1 (a key names tenant and principal); false for the keyless routes */
  keyed: boolean;
  /** the path's parameter names, in order */
  params: string[];
  pattern: RegExp;
}

/** The table compiled; literal-heavier paths first so `/v1/runs/bulk` wins over `/v1/runs/{id}`-like shapes. */
export function auditRoutes(): AuditRoute[] {
  return Object.entries(ROUTE_AUDIT_ACTIONS as Record<string, AuditRouteSpec>)
    .map(([route, spec]) => {
      const [method, path] = route.split(' ') as [Method, string];
      const params = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
      const pattern = new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '([^/]+)')}$`);
      return { ...spec, method, path, keyed: path.startsWith('/v1/'), params, pattern };
    })
    .sort((a, b) => a.params.length - b.params.length);
}

/** The entry of `method path` and its path parameters, or null (an unknown route is not audited). */
export function matchAuditRoute(routes: AuditRoute[], method: string, path: string): { route: AuditRoute; params: Record<string, string> } | null {
  for (const route of routes) {
    if (route.method !== method) continue;
    const m = route.pattern.exec(path);
    if (m === null) continue;
    const params: Record<string, string> = {};
    route.params.forEach((name, i) => {
      params[name] = safeDecode(m[i + 1]!);
    });
    return { route, params };
  }
  return null;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
