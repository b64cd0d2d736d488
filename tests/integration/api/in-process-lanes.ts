/**
 * The real dispatcher (and, when asked, the real tool worker) run in-process over an API test
 * harness's database and Redis, as the API's integration tests that need runs to move use them
 * (tests only; services never import each other).
 */
import { Redis } from 'ioredis';
import pino from 'pino';
import { createToolRegistry } from '@flowline/tools';
import { createDispatcher } from '../../../services/dispatcher/src/dispatcher';
import { dispatcherConfigSchema } from '../../../services/dispatcher/src/config';
import { createToolWorker } from '../../../services/worker-tool/src/worker';
import type { Harness } from '../../../services/api/test/harness';

export interface InProcessLanes {
  /** stops the worker, then the dispatcher, then their Redis connection */
  stop(): Promise<void>;
}

/** Starts a dispatcher `id` (short lease and sweep) over `h`, and a tool worker with the test tools when `toolWorker`. */
export async function startInProcessLanes(h: Harness, o: { id: string; shardCount: number; toolWorker: boolean; env?: Record<string, string> }): Promise<InProcessLanes> {
  const laneRedis = new Redis(h.redisUrl, { maxRetriesPerRequest: null });
  const config = dispatcherConfigSchema.parse({
    DATABASE_URL: h.db.url,
    REDIS_URL: h.redisUrl,
    QUEUE_PREFIX: h.prefix,
    DISPATCHER_ID: o.id,
    SHARD_COUNT: String(o.shardCount),
    SHARD_LEASE_MS: '1500',
    DISPATCH_SWEEP_MS: '100',
    ...o.env,
  });
  const log = pino({ level: 'silent' });
  const dispatcher = createDispatcher({ config, pool: h.db.pool, redis: laneRedis, log });
  await dispatcher.start();
  const worker = o.toolWorker
    ? createToolWorker({ redis: laneRedis, registry: await createToolRegistry({ testTools: true }), logger: log, prefix: h.prefix, shardCount: o.shardCount, concurrency: 4, shutdownGraceMs: 200 })
    : null;
  await worker?.start();
  return {
    async stop() {
      await worker?.stop();
      await dispatcher.stop();
      laneRedis.disconnect();
    },
  };
}
