/**
 * The check that {@link ROUTE_AUDIT_ACTIONS} names every mutating route and only those:
 * `createApp` refuses to build otherwise, as it does for a route without a scope.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../context';
import { ROUTE_AUDIT_ACTIONS, isAuditedPath, isMutatingMethod } from '../route-audit';
import { routeName } from '../route-scopes';

/** Mutating routes without an audit action, and table entries naming no route. */
export function auditTableMismatches(app: OpenAPIHono<AppEnv>): { unaudited: string[]; unrouted: string[] } {
  const registered = new Set(
    app.routes.filter((r) => isMutatingMethod(r.method) && isAuditedPath(r.path)).map((r) => routeName(r.method, r.path)),
  );
  const declared = new Set(Object.keys(ROUTE_AUDIT_ACTIONS));
  return {
    unaudited: [...registered].filter((r) => !declared.has(r)).sort(),
    unrouted: [...declared].filter((r) => !registered.has(r)).sort(),
  };
}

/** Throws (the app is not built) when {@link auditTableMismatches} finds any. */
export function assertEveryMutationAudited(app: OpenAPIHono<AppEnv>): void {
  const { unaudited, unrouted } = auditTableMismatches(app);
  if (unaudited.length > 0 || unrouted.length > 0) {
    throw new Error(
      `ROUTE_AUDIT_ACTIONS does not match the routes: without an action [${unaudited.join(', ')}], naming no route [${unrouted.join(', ')}]`,
    );
  }
}
