/**
 * A whole Flowline cluster in this process for the CLI's integration tests: the real API
 * (HTTP server + live channel), one real dispatcher and the real tool-lane worker, over a
 * database and a BullMQ prefix of this file's own. Not a test file.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Server as HttpServer } from 'node:http';
import { serve } from '@hono/node-server';
import { Redis } from 'ioredis';
import pino from 'pino';
import { claimBulkJob } from '@flowline/db';
import { createToolRegistry } from '@flowline/tools';
// The real services, run in-process as this test's fixture (the CLI's sources speak only HTTP).
import { createApp } from '../../../services/api/src/app';
import { attachLive, DEFAULT_LIVE_OPTIONS } from '../../../services/api/src/live';
import { TEST_MANAGED_KEYS } from '../../../services/api/test/harness';
import { processBulkJob } from '../../../services/dispatcher/src/bulk-jobs';
import { createHarness, SHARD_COUNT } from '../../../services/dispatcher/test/harness';
import { startToolWorker } from '../tool-worker';

export const KEY = 'cli-test-key';

export interface CliCluster {
  /** the API's base URL */
  url: string;
  /** claims the open bulk job and works it until it pauses or ends (the dispatcher's runner, one claim; the harness dispatcher runs none) */
  /** works open bulk jobs as a dispatcher would, until `bulkId` has had its turn */
  workBulkJob(bulkId: string): Promise<void>;
  close(): Promise<void>;
}

export async function startCluster(): Promise<CliCluster> {
  const h = await createHarness();
  const closers: Array<() => Promise<void>> = [];
  try {
    const logger = pino({ level: 'silent' });
    const apiKeys = new Map([[KEY, 'tenantCli']]);
    const redis = new Redis(h.redis.url, { maxRetriesPerRequest: 3 });
    closers.push(async () => redis.disconnect());
    const tools = await createToolRegistry({ testTools: true });
    const app = createApp({
      pool: h.db.pool,
      redis,
      apiKeys,
      managedKeys: TEST_MANAGED_KEYS,
      limits: { maxNodesPerDefinition: 200, maxRunInputBytes: 65_536, eventReplayLimit: 200, shardCount: SHARD_COUNT, streamPollMs: 50, maxSteersPerNode: 5 },
      tools: { catalog: () => tools.catalog(), parserCatalog: () => tools.asParserCatalog() },
      queuePrefix: h.redis.prefix,
      logger,
    });
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as HttpServer;
    if (!server.listening) await once(server, 'listening');
    closers.push(async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    });
    const live = attachLive(server, {
      pool: h.db.pool,
      redis,
      apiKeys,
      managedKeys: TEST_MANAGED_KEYS,
      queuePrefix: h.redis.prefix,
      eventReplayLimit: 200,
      options: DEFAULT_LIVE_OPTIONS,
      logger,
    });
    await live.ready;
    closers.push(() => live.close());
    closers.push(await startToolWorker(h, 4));
    await h.startDispatcher('cli-test');
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      async workBulkJob(bulkId) {
        const deps = { pool: h.db.pool, redis, queuePrefix: h.redis.prefix, shardCount: SHARD_COUNT, owner: 'cli-test', batchSize: 10, leaseMs: 5000, batchPauseMs: 0, errorRateMinRuns: 5, log: logger };
        // no dispatcher works this cluster's bulk jobs, so other tests' jobs are still open: work
        // each one claimed until the one asked for has had its turn
        for (;;) {
          const job = await claimBulkJob(h.db.pool, deps.owner, deps.leaseMs);
          if (!job) throw new Error(`bulk job ${bulkId} is not open`);
          await processBulkJob(deps, job);
          if (job.id === bulkId) return;
        }
      },
      async close() {
        for (const c of closers.reverse()) await c().catch(() => undefined);
        await h.close();
      },
    };
  } catch (err) {
    for (const c of closers.reverse()) await c().catch(() => undefined);
    await h.close();
    throw err;
  }
}
