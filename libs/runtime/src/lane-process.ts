/**
 * The process plumbing every lane worker (worker-tool, worker-llm) shares once its worker is
 * built: the order in which things are released at shutdown, the ops port and its readiness,
 * then the start. The order is the point: releasers run last-registered first, so at SIGTERM the
 * lane-specific releasers run, then readiness turns 503, the worker drains (its grace, then
 * interrupts), Redis closes, and the last spans are flushed.
 */
import type { Registry } from 'prom-client';
import type { Logger } from './logger';
import { startWorkerOpsPort } from './ops-server';
import type { Releaser, Shutdown } from './shutdown';

/** What the plumbing needs of a lane worker (the shared lane-worker skeleton has it). */
export interface LaneProcessWorker {
  start(): Promise<void>;
  stop(): Promise<void>;
  lastProgressAt(): number;
  waitingJobs(): Promise<number>;
}

export interface ServeLaneWorkerOptions {
  worker: LaneProcessWorker;
  /** the lane's name in the releasers' log lines (`tool-worker`, `llm-worker`) */
  name: string;
  /** the worker's connection, closed after the worker stopped */
  redis: { ping(): Promise<string>; quit(): Promise<unknown> };
  tracing: { shutdown(): Promise<void> };
  shutdown: Shutdown;
  logger: Logger;
  /** OPS_PORT, READY_CHECK_TIMEOUT_MS and WORKER_STALL_MS of the worker's config */
  options: { OPS_PORT?: number; READY_CHECK_TIMEOUT_MS: number; WORKER_STALL_MS: number };
  /** what /metrics serves @default a registry of the default metrics */
  registry?: Registry;
  /** the lane's own releasers, run first at shutdown (registered last) */
  releasers?: readonly [Releaser, string][];
}

/** Registers the releasers and the ops port (`/readyz` 503 once draining, Redis down or the worker stalled), then starts the worker. */
export async function serveLaneWorker(o: ServeLaneWorkerOptions): Promise<void> {
  const { shutdown, worker } = o;
  // released last: the final spans are flushed after the worker stopped
  shutdown.onShutdown(() => o.tracing.shutdown(), 'tracing');
  // the worker stops before Redis closes
  shutdown.onShutdown(async () => {
    await o.redis.quit();
  }, 'redis');
  const markDraining = await startWorkerOpsPort({
    registry: o.registry,
    port: o.options.OPS_PORT,
    readyTimeoutMs: o.options.READY_CHECK_TIMEOUT_MS,
    logger: o.logger,
    redis: o.redis,
    shutdown,
    progress: { stallMs: o.options.WORKER_STALL_MS, lastProgressAt: () => worker.lastProgressAt(), waiting: () => worker.waitingJobs() },
  });
  shutdown.onShutdown(() => worker.stop(), o.name);
  shutdown.onShutdown(markDraining, 'readiness');
  for (const [release, name] of o.releasers ?? []) shutdown.onShutdown(release, name);
  await worker.start();
}
