/**
 * The process plumbing every lane worker (worker-tool, worker-llm) shares once its worker is
 * built: the order in which things are released at shutdown, the ops port and its readiness,
 * then the start. The order is the point: releasers run last-registered first, so at SIGTERM the
 * lane-specific releasers run, then readiness turns 503, the worker drains (its grace, then
 * interrupts), Redis closes, and the last spans are flushed.
 */
import type { Registry } from 'prom-client';
import { z } from 'zod';
import type { Logger } from './logger';
import { opsOptions, startWorkerOpsPort } from './ops-server';
import { dispatchOptions, encryptionOptions, logOptions, mcpOptions, templateOptions, workerOptions } from './options';
import { tracingOptions } from './tracing';
import { workerStallOptions } from './worker-stall';
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

/**
 * The options both lane workers take beside their own: the tool modules an Agent or a Tool node
 * may call, the MCP servers they may reach (and the key that opens their headers), the job lock, the shard count (a report goes to the wake channel of its run's shard,
 * read by the shard's owner alone), logging, tracing, the ops port and the stall rule.
 */
export const laneWorkerOptions = {
  TOOL_FILES_ROOT: workerOptions.TOOL_FILES_ROOT,
  TOOL_MODULES: workerOptions.TOOL_MODULES,
  WORKER_LOCK_MS: workerOptions.WORKER_LOCK_MS,
  ...mcpOptions,
  // the workers open MCP server headers sealed with it
  ...encryptionOptions,
  ...templateOptions,
  SHARD_COUNT: dispatchOptions.SHARD_COUNT,
  ...logOptions,
  ...tracingOptions,
  ...opsOptions,
  ...workerStallOptions,
  WORKER_HEARTBEAT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(300_000)
    .default(5_000)
    .describe("how often a lane worker writes its heartbeat (what it runs, its last progress) for the console's Workers page (GET /v1/workers), ms; it is dropped from the page after three missed"),
};

/** TOOL_MODULES as a list (comma-separated, blanks dropped). */
export function toolModulesOf(config: { TOOL_MODULES?: string }): string[] {
  return (config.TOOL_MODULES ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** A boolean option written `0`/`1` (or `false`/`true`). */
export function flagOption(description: string, dflt: '0' | '1' = '0') {
  return z
    .enum(['0', '1', 'false', 'true'])
    .default(dflt)
    .transform((v) => v === '1' || v === 'true')
    .describe(description);
}

/** The lane settings a lane worker's config names, as the lane worker takes them. */
export function laneWorkerSettings(config: {
  QUEUE_PREFIX: string;
  SHARD_COUNT: number;
  LANE_CONCURRENCY: number;
  SHUTDOWN_GRACE_MS: number;
  WORKER_LOCK_MS: number;
  WORKER_HEARTBEAT_MS: number;
}) {
  return {
    heartbeatMs: config.WORKER_HEARTBEAT_MS,
    prefix: config.QUEUE_PREFIX,
    shardCount: config.SHARD_COUNT,
    concurrency: config.LANE_CONCURRENCY,
    shutdownGraceMs: config.SHUTDOWN_GRACE_MS,
    lockDurationMs: config.WORKER_LOCK_MS,
  };
}

/** The tool registry options a lane worker's config names (the `http_fetch` policy is each lane's own). */
export function toolRegistrySettings(config: { WF_TEST_TOOLS: boolean; TOOL_MODULES?: string; TOOL_FILES_ROOT?: string }) {
  return { testTools: config.WF_TEST_TOOLS, modules: toolModulesOf(config), filesRoot: config.TOOL_FILES_ROOT ?? null };
}
