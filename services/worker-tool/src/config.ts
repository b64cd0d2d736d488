/**
 * worker-tool configuration: the shared option shapes of CONTRACT §7 plus the tool
 * lane's own, parsed once in main.ts.
 */
import { z } from 'zod';
import { connectionOptions, defineConfig, flagOption, laneWorkerOptions, toolModulesOf } from '@flowline/runtime';


/**
 * Tool jobs one process runs at once by default. Tool calls are I/O-bound (a fetch, an MCP call,
 * the `wait` tool's timer): a slot waiting costs a pending promise, not a core, so the lane is
 * sized like Temporal's 100 activity slots per worker rather than by cores. One idle slot costs
 * well under 1 MiB (docs/scaling.md, "Tool lane slots", has the measurement and its command);
 * lower it for CPU-heavy TOOL_MODULES.
 */
export const DEFAULT_TOOL_LANE_CONCURRENCY = 100;

/** Options only the tool worker reads. */
export const toolWorkerOwnOptions = {
  QUEUE_PREFIX: z.string().min(1).default('{flowline}').describe('BullMQ key prefix shared by dispatchers and workers'),
  LANE_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(DEFAULT_TOOL_LANE_CONCURRENCY)
    .describe('tool jobs this process runs at once (I/O-bound: sized like 100 activity slots per worker; lower it for CPU-heavy tool modules)'),
  SHUTDOWN_GRACE_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(10_000)
    .describe('on SIGTERM, how long in-flight tool calls may finish before they are interrupted, ms'),
  WF_TEST_TOOLS: flagOption('1 registers the test tools test_fail and counter'),
  HTTP_FETCH_ALLOW_PRIVATE: flagOption('1 lets http_fetch reach private, loopback and link-local addresses'),
  HTTP_FETCH_MAX_RESPONSE_BYTES: z.coerce.number().int().min(1).default(1_048_576).describe('largest http_fetch body, bytes'),
  HTTP_FETCH_TIMEOUT_MS: z.coerce.number().int().min(1).default(30_000).describe('http_fetch per-request timeout, ms'),
  MCP_DB_POOL_MAX: z.coerce
    .number()
    .int()
    .min(1)
    .max(100)
    .default(2)
    .describe('Postgres connections for reading MCP server records (opened only when a Tool node calls an MCP tool)'),
};

export const toolWorkerConfigSchema = defineConfig({
  ...connectionOptions,
  ...laneWorkerOptions,
  ...toolWorkerOwnOptions,
});

export type ToolWorkerConfig = z.output<typeof toolWorkerConfigSchema>;

export { toolModulesOf };
