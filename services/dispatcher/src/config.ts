/**
 * Dispatcher configuration: one zod schema, parsed once in main.ts from the
 * environment (CONTRACT §7). Invalid options stop the process naming the option.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { CoreOptions } from '@flowline/graph';

const int = (def: number, min = 1) => z.coerce.number().int().min(min).default(def);

export const dispatcherConfigSchema = z.object({
  /** Postgres connection string */
  DATABASE_URL: z.string().default('postgres://postgres@127.0.0.1:5432/postgres'),
  /** Redis connection string */
  REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
  /** BullMQ key prefix (tests use one per file) @default "flowline" */
  QUEUE_PREFIX: z.string().min(1).default('flowline'),
  /** identity of this replica in shard_leases/dispatchers */
  DISPATCHER_ID: z.string().min(1).default(() => `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`),
  /** due-run sweep interval @default 500, floor 100 */
  DISPATCH_SWEEP_MS: int(500, 100),
  /** number of shards runs hash into @default 16 */
  SHARD_COUNT: int(16),
  /** shard lease length, renewed every third of it @default 6000 */
  SHARD_LEASE_MS: int(6000, 300),
  /** most runs committed in one tick transaction @default 200 */
  DISPATCH_BATCH_SIZE: int(200),
  /** every Nth sweep re-checks in-flight work against BullMQ @default 10 */
  INFLIGHT_CHECK_EVERY_SWEEPS: int(10),
  /** live runs per tenant @default 100 */
  MAX_CONCURRENT_RUNS: int(100),
  MAX_NODES_PER_DEFINITION: int(200),
  MAX_NODE_RUNS_PER_RUN: int(200),
  MAX_TOTAL_ATTEMPTS: int(50),
  DEFAULT_NODE_TIMEOUT_SECONDS: int(600),
  MAX_OUTPUT_JSON_BYTES: int(262_144),
  MAX_RUN_INPUT_BYTES: int(65_536),
  MAX_STEERS_PER_NODE: int(5),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type DispatcherConfig = z.infer<typeof dispatcherConfigSchema>;

/** Parses the environment; on error prints every issue and exits 1. */
export function loadDispatcherConfig(env: NodeJS.ProcessEnv): DispatcherConfig {
  const parsed = dispatcherConfigSchema.safeParse(env);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      console.error(`invalid option ${issue.path.join('.')}: ${issue.message}`);
    }
    process.exit(1);
  }
  return parsed.data;
}

/** The options the planner reads. */
export function coreOptionsOf(c: DispatcherConfig): CoreOptions {
  return {
    maxNodesPerDefinition: c.MAX_NODES_PER_DEFINITION,
    maxNodeRunsPerRun: c.MAX_NODE_RUNS_PER_RUN,
    maxTotalAttempts: c.MAX_TOTAL_ATTEMPTS,
    defaultNodeTimeoutSeconds: c.DEFAULT_NODE_TIMEOUT_SECONDS,
    maxOutputJsonBytes: c.MAX_OUTPUT_JSON_BYTES,
    maxRunInputBytes: c.MAX_RUN_INPUT_BYTES,
    maxSteersPerNode: c.MAX_STEERS_PER_NODE,
  };
}
