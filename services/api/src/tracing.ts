/**
 * The API's request spans (tracing on only): each request runs inside a SERVER span named
 * after its method and route pattern (never the path: its segments are the client's text),
 * a child of the caller's W3C `traceparent` when it sent one. A run created inside it stores
 * the span's `traceparent` (routes/runs.ts), which the dispatcher's node spans continue.
 * Probes and scrapes (`/livez`, `/healthz`, `/readyz`, `/metrics`) are not traced: they would
 * open a trace each, every few seconds.
 */
import type { MiddlewareHandler } from 'hono';
import { contextOfHeaders, SpanKind, SpanStatusCode, tracingEnabled, withSpan } from '@flowline/runtime';

const UNTRACED_PATHS = new Set(['/livez', '/healthz', '/readyz', '/metrics']);

export function traceRequests(): MiddlewareHandler {
  return async (c, next) => {
    if (!tracingEnabled() || UNTRACED_PATHS.has(c.req.path)) return next();
    const method = c.req.method;
    await withSpan(`${method}`, { kind: SpanKind.SERVER, parent: contextOfHeaders(c.req.header()), attributes: { 'http.request.method': method } }, async (span) => {
      await next();
      const route = c.req.routePath || 'unmatched';
      span?.updateName(`${method} ${route}`);
      span?.setAttributes({ 'http.route': route, 'http.response.status_code': c.res.status });
      if (c.res.status >= 500) span?.setStatus({ code: SpanStatusCode.ERROR });
    });
  };
}
