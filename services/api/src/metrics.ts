/**
 * Prometheus metrics: default process metrics plus an HTTP request duration histogram
 * labelled by method, matched route pattern and status.
 */
import type { MiddlewareHandler } from 'hono';
import { Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** A registry with default metrics and the request histogram, and the middleware feeding it. */
export function createMetrics(): { registry: Registry; middleware: MiddlewareHandler } {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const histogram = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration in seconds',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const middleware: MiddlewareHandler = async (c, next) => {
    const end = histogram.startTimer();
    try {
      await next();
    } finally {
      end({ method: c.req.method, route: c.req.routePath || 'unmatched', status: String(c.res.status) });
    }
  };
  return { registry, middleware };
}
