/**
 * The ops HTTP port of a process without an API (dispatchers, workers), on OPS_PORT:
 * `GET /livez` 200 while the process answers; `GET /readyz` 200 when `ready()` resolves
 * true, 503 otherwise (false, a throw, or no answer within the check timeout); `GET
 * /metrics` the Prometheus text of `registry` (process defaults included). Anything else
 * answers 404. Binds every interface: the kubelet and Prometheus reach it from outside.
 * An unready answer carries the reason when the check gave one: `{"status":"unready","reason":…}`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { z } from 'zod';
import type { Logger } from './logger';
import type { Shutdown } from './shutdown';
import { checkStall, type WorkerProgress } from './worker-stall';

/** Ops-port options (dispatchers and workers). */
export const opsOptions = {
  OPS_PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65_535)
    .optional()
    .describe('port of /metrics, /livez and /readyz (unset: no ops port; 0: any free port)'),
  READY_CHECK_TIMEOUT_MS: z.coerce.number().int().min(1).max(60_000).default(2_000).describe('a /readyz check that takes longer answers 503, ms'),
};

export interface OpsServerOptions {
  port: number;
  /** what /metrics serves; default process metrics are added to it */
  registry: Registry;
  /** readiness: Postgres and Redis answer, the process is not draining; `{ reason }` is unready, saying why */
  ready: () => Promise<boolean | Unready>;
  /** @default 2000 */
  readyTimeoutMs?: number;
  logger: Logger;
}

/** An unready answer with its reason (served in the /readyz body). */
export interface Unready {
  reason: string;
}

export interface OpsServer {
  /** the bound port (the real one when `port` was 0) */
  port: number;
  close(): Promise<void>;
}

/** A registry with the default process metrics, for {@link startOpsServer}. */
export function createMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

async function isReady(ready: () => Promise<boolean | Unready>, timeoutMs: number): Promise<boolean | Unready> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Unready>((resolve) => (timer = setTimeout(() => resolve({ reason: `the check took over ${timeoutMs} ms` }), timeoutMs)));
  try {
    return await Promise.race([ready().catch(() => false), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Starts the ops server; resolves once it listens. */
export async function startOpsServer(o: OpsServerOptions): Promise<OpsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET') {
      res.writeHead(405).end();
      return;
    }
    if (path === '/livez') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    } else if (path === '/readyz') {
      void isReady(o.ready, o.readyTimeoutMs ?? 2_000).then((answer) => {
        const ok = answer === true;
        const body = ok ? { status: 'ready' } : answer === false ? { status: 'unready' } : { status: 'unready', reason: answer.reason };
        res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      });
    } else if (path === '/metrics') {
      o.registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': o.registry.contentType }).end(text),
        (err: unknown) => {
          o.logger.warn({ err: String(err) }, 'metrics collection failed');
          res.writeHead(500).end();
        },
      );
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  o.logger.info({ port }, 'ops port listening (/metrics, /livez, /readyz)');
  return {
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * The ops port of a lane worker (none when `port` is unset): `/readyz` answers 503 once the
 * process drains, while Redis does not answer, and (with `progress`) while the worker has
 * stalled: no job taken or finished for WORKER_STALL_MS while jobs wait (worker-stall.ts). Registers the port's close with `shutdown`
 * and answers the switch that marks the process draining: register that switch after the
 * worker's stop, so it runs first (releasers run last-registered first).
 */
export async function startWorkerOpsPort(o: {
  port: number | undefined;
  readyTimeoutMs: number;
  logger: Logger;
  redis: { ping(): Promise<string> };
  shutdown: Pick<Shutdown, 'onShutdown'>;
  /** what /metrics serves @default createMetricsRegistry() */
  registry?: Registry;
  /** the worker's progress, for the stall rule @default none (no stall check) */
  progress?: WorkerProgress;
}): Promise<() => void> {
  let draining = false;
  let stalled: string | null = null;
  const ready = async (): Promise<boolean | Unready> => {
    if (draining) return { reason: 'draining' };
    const pong = await o.redis.ping().catch(() => null);
    if (pong !== 'PONG') return { reason: 'Redis does not answer' };
    if (o.progress === undefined) return true;
    const reason = await checkStall(o.progress, Date.now());
    // logged on each change, not on each probe
    if (reason !== null && stalled === null) o.logger.warn({ reason }, 'worker stalled: unready');
    if (reason === null && stalled !== null) o.logger.info('worker consuming again: ready');
    stalled = reason;
    return reason === null ? true : { reason };
  };
  if (o.port !== undefined) {
    const ops = await startOpsServer({
      port: o.port,
      registry: o.registry ?? createMetricsRegistry(),
      readyTimeoutMs: o.readyTimeoutMs,
      logger: o.logger,
      ready,
    });
    o.shutdown.onShutdown(() => ops.close(), 'ops-port');
  }
  return () => {
    draining = true;
  };
}
