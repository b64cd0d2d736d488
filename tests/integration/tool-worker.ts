/**
 * The real worker of the tool lane (services/worker-tool) in the test's process, on the
 * database and BullMQ prefix of a dispatcher harness: the cross-service integration tests
 * (dispatcher + tool worker, API + dispatcher + tool worker) of this folder start it.
 */
import { Redis } from 'ioredis';
import pino from 'pino';
import { createToolRegistry, type ToolRegistryOptions } from '@flowline/tools';
import { createToolWorker, type ToolWorkerOptions } from '../../services/worker-tool/src/worker';
import { SHARD_COUNT, type Harness } from '../../services/dispatcher/test/harness';

/** Starts the real tool-lane worker (services/worker-tool) in this process (`mcp`: its MCP toolbox). */
export async function startToolWorker(
  h: Harness,
  concurrency = 8,
  tools: ToolRegistryOptions = {},
  mcp?: ToolWorkerOptions['mcp'],
): Promise<() => Promise<void>> {
  const registry = await createToolRegistry({ testTools: true, ...tools });
  const connection = new Redis(h.redis.url, { maxRetriesPerRequest: null });
  const worker = createToolWorker({
    redis: connection,
    registry,
    logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'warn' }),
    prefix: h.redis.prefix,
    shardCount: SHARD_COUNT,
    concurrency,
    shutdownGraceMs: 500,
    ...(mcp ? { mcp } : {}),
  });
  await worker.start();
  return async () => {
    await worker.stop();
    connection.disconnect();
  };
}
