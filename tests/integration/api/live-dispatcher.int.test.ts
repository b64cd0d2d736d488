import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Server as HttpServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve } from '@hono/node-server';
import { Redis } from 'ioredis';
import pino from 'pino';
import { createTestDatabase, createTestRedis, waitFor, type TestDatabase, type TestRedis } from '@flowline/testing';
import { createToolRegistry } from '@flowline/tools';
import { createClient, type FlowlineClient, type RunChange } from '@flowline/client';
// The real dispatcher, run in-process (tests only; services never import each other).
import { createDispatcher, type Dispatcher } from '../../../services/dispatcher/src/dispatcher';
import { dispatcherConfigSchema } from '../../../services/dispatcher/src/config';
import { createApp } from '../../../services/api/src/app';
import { attachLive, DEFAULT_LIVE_OPTIONS, type LiveServer } from '../../../services/api/src/live';
import { KEYS, pauseGraph } from '../../../services/api/test/harness';

const SHARD_COUNT = 4;
const TENANT_KEYS = new Map<string, string>([[KEYS.a, 'tenantA'], [KEYS.b, 'tenantB']]);
const logger = pino({ level: 'silent' });

let db: TestDatabase;
let tr: TestRedis;
let dispatcherRedis: Redis;
let dispatcher: Dispatcher;
const closers: Array<() => Promise<void>> = [];
const clients: FlowlineClient[] = [];

/** One API replica (app + HTTP server + live channel) with Redis connections of its own. */
async function startReplica(): Promise<string> {
  const redis = new Redis(tr.url, { maxRetriesPerRequest: 3 });
  const tools = await createToolRegistry({ testTools: true });
  const app = createApp({
    pool: db.pool,
    redis,
    apiKeys: TENANT_KEYS,
    limits: { maxNodesPerDefinition: 200, maxRunInputBytes: 65_536, eventReplayLimit: 3, shardCount: SHARD_COUNT, streamPollMs: 50, maxSteersPerNode: 5 },
    tools: { catalog: () => tools.catalog(), parserCatalog: () => tools.asParserCatalog() },
    queuePrefix: tr.prefix,
    logger,
  });
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as HttpServer;
  if (!server.listening) await once(server, 'listening');
  const live: LiveServer = attachLive(server, {
    pool: db.pool,
    redis,
    apiKeys: TENANT_KEYS,
    queuePrefix: tr.prefix,
    eventReplayLimit: 3,
    options: DEFAULT_LIVE_OPTIONS,
    logger,
  });
  await live.ready;
  closers.push(async () => {
    await live.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    redis.disconnect();
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function client(baseUrl: string): FlowlineClient {
  const c = createClient({ baseUrl, apiKey: KEYS.a });
  clients.push(c);
  return c;
}

let urlA: string;
let urlB: string;
beforeAll(async () => {
  db = await createTestDatabase();
  tr = createTestRedis();
  dispatcherRedis = new Redis(tr.url, { maxRetriesPerRequest: null });
  urlA = await startReplica();
  urlB = await startReplica();
  const config = dispatcherConfigSchema.parse({
    DATABASE_URL: db.url,
    REDIS_URL: tr.url,
    QUEUE_PREFIX: tr.prefix,
    DISPATCHER_ID: 'live-test',
    SHARD_COUNT: String(SHARD_COUNT),
    SHARD_LEASE_MS: '1500',
    DISPATCH_SWEEP_MS: '100',
    MAX_CONCURRENT_RUNS: '1000',
  });
  dispatcher = createDispatcher({ config, pool: db.pool, redis: dispatcherRedis, log: logger });
  await dispatcher.start();
});
afterAll(async () => {
  for (const c of clients) c.close();
  await dispatcher?.stop();
  await Promise.allSettled(closers.map((c) => c()));
  dispatcherRedis?.disconnect();
  await tr?.cleanup();
  await db?.drop();
});

describe('live channel with a real dispatcher', () => {
  it('delivers to a subscriber on replica A every change the dispatcher commits for runs started and decided through replica B', async () => {
    const a = client(urlA);
    const b = client(urlB);
    const def = await b.definitions.create({ name: 'live-gates', graph: pauseGraph() });
    const runIds = await Promise.all([1, 2, 3].map(async () => (await b.runs.start(def.id)).runId));
    const recs = new Map<string, RunChange[]>(runIds.map((id) => [id, []]));
    const subs = runIds.map((id) => a.subscribeRun(id, 0, (c) => recs.get(id)!.push(c)));
    await Promise.all(subs.map((s) => s.ready));
    const seqsOf = (id: string) => recs.get(id)!.flatMap((c) => c.events.map((e) => e.seq));
    const kindsOf = (id: string) => recs.get(id)!.flatMap((c) => c.events.map((e) => e.kind));

    // the dispatcher opens each gate; the subscriber learns it through pings alone
    await waitFor(() => runIds.every((id) => kindsOf(id).includes('gate.requested')), { timeoutMs: 20_000, description: 'gates requested' });
    for (const id of runIds) await b.runs.decide(id, 'gate', { operationId: `op-${id}`, decision: 'Approve' });
    await waitFor(() => runIds.every((id) => kindsOf(id).includes('run.completed')), { timeoutMs: 20_000, description: 'runs completed' });

    for (const [i, id] of runIds.entries()) {
      const detail = await b.runs.get(id);
      expect(detail.run.status).toBe('Completed');
      const stored: number[] = [];
      for (let after = 0; ; ) {
        const page = await b.runs.events(id, { afterSeq: after });
        stored.push(...page.events.map((e) => e.seq));
        if (!page.truncated) break;
        after = stored.at(-1)!;
      }
      // every committed seq delivered once, in order; the highest ping names the last commit
      expect(seqsOf(id)).toEqual(stored);
      expect(stored).toEqual(Array.from({ length: stored.length }, (_, k) => k + 1));
      expect(subs[i]!.highestPing()).toBe(stored.at(-1));
      // the decision's consequences reached the subscriber through a ping-triggered re-read
      const decidedBy = recs.get(id)!.find((c) => c.events.some((e) => e.kind === 'gate.decided'));
      expect(decidedBy?.ping).toBeDefined();
    }
  }, 60_000);
});
