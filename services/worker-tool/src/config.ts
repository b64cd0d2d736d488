/**
 * worker-tool configuration: the shared option shapes of CONTRACT §7 plus the tool
 * lane's own, parsed once in main.ts.
 */
import { z } from 'zod';
import { connectionOptions, defineConfig, flagOption, laneWorkerOptions, toolModulesOf } from '@flowline/runtime';


/** Options only the tool worker reads. */
export const toolWorkerOwnOptions = {
  QUEUE_PREFIX: z.string().min(1).default('{flowline}').describe('BullMQ key prefix shared by dispatchers and workers'),
  LANE_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(16).describe('tool jobs this process runs at once'),
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
