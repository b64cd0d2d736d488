/**
 * Live fan-out bench (not part of `npm test`): 2 in-process API replicas on one Postgres
 * and Redis, N sockets (half per replica) each subscribed to one of R runs, and a
 * committer that commits one event per run per round (SQL + change ping, as a dispatcher
 * does). Reports pings delivered per second and the p50/p95 delay from commit to receipt.
 *
 *   npx tsx tests/bench/live-fanout.ts [--sockets 1000] [--runs 100] [--seconds 10] [--round-ms 100]
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Server as HttpServer } from 'node:http';
import { parseArgs } from 'node:util';
import { serve } from '@hono/node-server';
import { Redis } from 'ioredis';
import pino from 'pino';
import { io, type Socket } from 'socket.io-client';
import { createTestDatabase, createTestRedis } from '@flowline/testing';
import { LIVE_EVENTS, runChangesChannel, type RunChangedPing } from '@flowline/queue';
import { createClient } from '@flowline/client';
import { createApp } from '../../services/api/src/app';
import { attachLive, DEFAULT_LIVE_OPTIONS, type LiveServer } from '../../services/api/src/live';

const { values: flags } = parseArgs({
  options: {
    sockets: { type: 'string', default: '1000' },
    runs: { type: 'string', default: '100' },
    seconds: { type: 'string', default: '10' },
    'round-ms': { type: 'string', default: '100' },
  },
});
const SOCKETS = Number(flags.sockets);
const RUNS = Number(flags.runs);
const SECONDS = Number(flags.seconds);
const ROUND_MS = Number(flags['round-ms']);

const logger = pino({ level: 'warn' });
const db = await createTestDatabase();
const tr = createTestRedis();

async function replica(): Promise<{ url: string; live: LiveServer; close(): Promise<void> }> {
  const redis = new Redis(tr.url, { maxRetriesPerRequest: 3 });
  const app = createApp({
    pool: db.pool,
    redis,
    apiKeys: null,
    limits: { maxNodesPerDefinition: 200, maxRunInputBytes: 65_536, eventReplayLimit: 200, shardCount: 8, streamPollMs: 250, maxSteersPerNode: 5 },
    tools: { catalog: () => [], parserCatalog: () => ({ has: () => false, get: () => undefined }) as never },
    queuePrefix: tr.prefix,
    logger,
  });
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as HttpServer;
  if (!server.listening) await once(server, 'listening');
  const live = attachLive(server, { pool: db.pool, redis, apiKeys: null, queuePrefix: tr.prefix, eventReplayLimit: 200, options: DEFAULT_LIVE_OPTIONS, logger });
  await live.ready;
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    live,
    async close() {
      await live.close();
      server.closeAllConnections();
      server.close();
      redis.disconnect();
    },
  };
}

const replicas = [await replica(), await replica()];
const rest = createClient({ baseUrl: replicas[0]!.url });
const def = await rest.definitions.create({
  name: 'fanout',
  graph: { nodes: [{ key: 'start', kind: 'Start' }, { key: 'end', kind: 'End', config: { outcome: 'done' } }], edges: [{ key: 'e1', from: 'start', to: 'end' }] },
});
const runIds: string[] = [];
for (let i = 0; i < RUNS; i++) runIds.push((await rest.runs.start(def.id)).runId);

const committedAt = new Map<string, number>(); // `${runId}:${seq}` → ms
const delays: number[] = [];
let received = 0;
const sockets: Socket[] = [];
for (let i = 0; i < SOCKETS; i++) {
  const s = io(replicas[i % 2]!.url, { path: '/socket.io', transports: ['websocket'] });
  s.on(LIVE_EVENTS.runChanged, (p: RunChangedPing) => {
    received++;
    const t = committedAt.get(`${p.runId}:${p.seq}`);
    if (t !== undefined) delays.push(performance.now() - t);
  });
  sockets.push(s);
}
await Promise.all(sockets.map((s) => (s.connected ? null : once(s as never, 'connect'))));
const subStart = performance.now();
await Promise.all(sockets.map((s, i) => s.timeout(60_000).emitWithAck(LIVE_EVENTS.subscribeRun, { runId: runIds[i % RUNS], afterSeq: 0 })));
const subscribeMs = performance.now() - subStart;

const pub = new Redis(tr.url);
const seqs = new Map(runIds.map((id) => [id, 1]));
const started = performance.now();
let commits = 0;
while (performance.now() - started < SECONDS * 1000) {
  const round = performance.now();
  const batch = runIds.map((id) => ({ id, seq: seqs.get(id)! + 1 }));
  await db.pool.query(
    `WITH b AS (SELECT * FROM unnest($1::uuid[], $2::int[]) AS t(id, seq)),
     e AS (INSERT INTO events (run_id, seq, kind, node_key, detail) SELECT id, seq, 'node.completed', 'start', '{}'::jsonb FROM b)
     UPDATE runs r SET last_seq = b.seq FROM b WHERE r.id = b.id`,
    [batch.map((b) => b.id), batch.map((b) => b.seq)],
  );
  const now = performance.now();
  const p = pub.pipeline();
  for (const b of batch) {
    seqs.set(b.id, b.seq);
    committedAt.set(`${b.id}:${b.seq}`, now);
    p.publish(runChangesChannel(b.id, tr.prefix), JSON.stringify({ runId: b.id, seq: b.seq, kind: 'node' }));
  }
  await p.exec();
  commits += batch.length;
  const left = ROUND_MS - (performance.now() - round);
  if (left > 0) await new Promise((r) => setTimeout(r, left));
}
const elapsed = (performance.now() - started) / 1000;
await new Promise((r) => setTimeout(r, 500)); // let the last merge windows drain before counting

const sorted = [...delays].sort((a, b) => a - b);
const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;
const result = {
  sockets: SOCKETS,
  replicas: 2,
  runs: RUNS,
  seconds: Number(elapsed.toFixed(1)),
  mergeWindowMs: DEFAULT_LIVE_OPTIONS.mergeWindowMs,
  subscribeAllMs: Math.round(subscribeMs),
  commits,
  commitsPerSec: Math.round(commits / elapsed),
  pingsDelivered: received,
  pingsPerSec: Math.round(received / elapsed),
  delayP50Ms: Number(q(0.5).toFixed(1)),
  delayP95Ms: Number(q(0.95).toFixed(1)),
};
console.log(JSON.stringify(result, null, 2));

for (const s of sockets) s.disconnect();
rest.close();
pub.disconnect();
await Promise.all(replicas.map((r) => r.close()));
await tr.cleanup();
await db.drop();
process.exit(0);
