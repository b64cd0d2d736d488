/**
 * Prometheus metrics of an API process: default process metrics, the HTTP request duration
 * histogram labelled by method, matched route pattern and status, and the engine's view from
 * the API: `flowline_runs_created_total{tenant}`, `flowline_api_refused_total{bound}` (requests
 * refused to be retried later, by the option of the bound), `flowline_live_sockets` (connected
 * live-channel sockets, read at scrape time) and `flowline_live_pings_total` (change pings
 * written to a run's room on this replica).
 */
import type { MiddlewareHandler } from 'hono';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { metricsOn } from '@flowline/runtime';

/** The API's registry, the middleware feeding its request histogram, and the engine hooks. */
export interface ApiMetrics {
  registry: Registry;
  middleware: MiddlewareHandler;
  /** a run was created (not an idempotent replay) */
  runCreated(tenant: string): void;
  /** a request was refused by the bound `option` sets (admission, or the database acquire timeout) */
  refused(option: string): void;
  /** a change ping was written to a run's room */
  pingSent(): void;
  /** schedule slots this replica decided (trigger, backfill) by outcome; the dispatchers count the slots they fire */
  scheduleSlots(outcome: string, n: number): void;
  /** what `flowline_live_sockets` reads at scrape time (the live channel sets it) */
  setSocketCount(read: () => number): void;
}

/** A registry with default metrics, the request histogram and the engine counters. */
export function createMetrics(): ApiMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const metric = metricsOn(registry);
  const histogram = metric.histogram(
    'http_request_duration_seconds',
    'HTTP request duration in seconds',
    [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    ['method', 'route', 'status'],
  );
  const created = metric.counter('flowline_runs_created_total', 'runs created, by tenant', ['tenant']);
  const refused = metric.counter(
    'flowline_api_refused_total',
    'requests refused to be retried later (429 TooManyInFlight, 503 Overloaded), by the option of the bound that refused',
    ['bound'],
  );
  const pings = metric.counter('flowline_live_pings_total', "change pings written to a run's room on this replica");
  const slots = metric.counter('flowline_schedule_slots_total', 'schedule slots decided, by outcome (here: trigger and backfill; the dispatchers count fired slots)', ['outcome']);
  let sockets = () => 0;
  metric.gauge('flowline_live_sockets', 'live-channel sockets connected to this replica', function () {
    this.set(sockets());
  });
  const middleware: MiddlewareHandler = async (c, next) => {
    const end = histogram.startTimer();
    try {
      await next();
    } finally {
      end({ method: c.req.method, route: c.req.routePath || 'unmatched', status: String(c.res.status) });
    }
  };
  return {
    registry,
    middleware,
    runCreated: (tenant) => created.inc({ tenant }),
    refused: (bound) => refused.inc({ bound }),
    pingSent: () => pings.inc(),
    scheduleSlots: (outcome, n) => slots.inc({ outcome }, n),
    setSocketCount: (read) => {
      sockets = read;
    },
  };
}
