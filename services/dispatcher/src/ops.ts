/**
 * The dispatcher's ops port (OPS_PORT): /livez, /readyz (Postgres and Redis answer, not
 * draining) and /metrics with the lanes' backlog, which the worker pools autoscale on:
 * `flowline_lane_queue_depth{lane}` (jobs waiting in every BullMQ structure) and
 * `flowline_lane_oldest_wait_seconds{lane}` (age of the oldest), read at scrape time; and the
 * stuck-run watchdog's findings `flowline_watchdog_stuck_runs_total{invariant}` (watchdog.ts);
 * plus the engine metrics registered on `registry` by metrics.ts.
 */
import { Counter, type Registry } from 'prom-client';
import type { RedisConnection } from '@flowline/queue';
import type { Pool } from 'pg';
import { closeLaneQueues, createLaneQueues, LANES, readLaneBacklog } from '@flowline/queue';
import { metricsOn, startOpsServer, type Logger, type OpsServer } from '@flowline/runtime';

export interface DispatcherOpsOptions {
  port: number;
  /** a registry from createMetricsRegistry, with the engine metrics (metrics.ts) on it */
  registry: Registry;
  readyTimeoutMs: number;
  pool: Pool;
  redis: RedisConnection;
  queuePrefix: string;
  /** true once shutdown began: /readyz answers 503 */
  draining: () => boolean;
  /** the watchdog's findings so far by invariant (the dispatcher's totals.stuck); null before it exists */
  stuck: () => Readonly<Record<string, number>> | null;
  logger: Logger;
}

export async function startDispatcherOps(o: DispatcherOpsOptions): Promise<OpsServer> {
  const registry = o.registry;
  const queues = createLaneQueues(o.redis, o.queuePrefix);
  // both gauges come from one read: concurrent collects of a scrape share it
  let reading: Promise<void> | null = null;
  const refresh = () =>
    (reading ??= (async () => {
      const now = Date.now();
      for (const lane of LANES) {
        const b = await readLaneBacklog(queues[lane], now);
        depth.set({ lane }, b.depth);
        oldest.set({ lane }, b.oldestWaitMs / 1000);
      }
    })().finally(() => {
      reading = null;
    }));
  const metric = metricsOn(registry);
  const depth = metric.gauge('flowline_lane_queue_depth', 'jobs waiting for a worker in the lane (wait + prioritized)', refresh, ['lane']);
  const oldest = metric.gauge(
    'flowline_lane_oldest_wait_seconds',
    'age of the oldest job waiting in the lane, seconds (0 when none waits)',
    refresh,
    ['lane'],
  );
  // a counter read at scrape time: it grows by what the dispatcher counted since the last scrape
  const seen: Record<string, number> = {};
  new Counter({
    name: 'flowline_watchdog_stuck_runs_total',
    help: 'stuck-run watchdog findings by invariant (runningPastDeadline, dueNotTicked); each run found was made due',
    labelNames: ['invariant'] as const,
    registers: [registry],
    collect() {
      for (const [invariant, n] of Object.entries(o.stuck() ?? {})) {
        const delta = n - (seen[invariant] ?? 0);
        if (delta > 0 || seen[invariant] === undefined) this.inc({ invariant }, Math.max(0, delta));
        seen[invariant] = n;
      }
    },
  });
  const server = await startOpsServer({
    port: o.port,
    registry,
    readyTimeoutMs: o.readyTimeoutMs,
    logger: o.logger,
    ready: async () => {
      if (o.draining()) return false;
      await o.pool.query('SELECT 1');
      return (await o.redis.ping()) === 'PONG';
    },
  });
  return {
    port: server.port,
    close: async () => {
      await server.close();
      await closeLaneQueues(queues);
    },
  };
}
