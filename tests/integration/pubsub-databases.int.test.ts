/**
 * Two Flowline clusters on one Redis server, each in its own database (redis://…/1 and /2),
 * both with the default queue prefix: Redis pub/sub ignores the database index, so their
 * channels must differ by name. Each signal kind is checked with the real subscriber that
 * consumes it — the API's change feed (change pings), the dispatcher's wake feed (wakes) and
 * the live channel's Socket.IO adapter (a broadcast disconnect, which kicked the other
 * cluster's consoles) — against a message of the other cluster, with a positive control showing
 * the same subscriber does hear its own cluster.
 */
import { once } from 'node:events';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import pino from 'pino';
import { io as connectSocket, type Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_QUEUE_PREFIX, LIVE_SOCKET_PATH, publishChangePings, publishWake, type RunChangedPing } from '@flowline/queue';
import { createTestDatabase, spawnRedis, waitFor, type TestDatabase } from '@flowline/testing';
import { createChangeFeed } from '../../services/api/src/live/change-feed';
import { attachLive, DEFAULT_LIVE_OPTIONS, type LiveServer } from '../../services/api/src/live';
import { JobFeed } from '../../services/dispatcher/src/job-feed';

const logger = pino({ level: 'silent' });
const SHARDS = 4;
const runA = '00000000-0000-4000-8000-00000000000a';
const runB = '00000000-0000-4000-8000-00000000000b';

let redisServer: { url: string; proc: ChildProcess };
let db: TestDatabase;
// one connection per cluster: database 1 and database 2 of the same server
let one: Redis;
let two: Redis;
beforeAll(async () => {
  redisServer = await spawnRedis();
  db = await createTestDatabase();
  one = new Redis(`${redisServer.url}/1`, { maxRetriesPerRequest: null });
  two = new Redis(`${redisServer.url}/2`, { maxRetriesPerRequest: null });
});
afterAll(async () => {
  one?.disconnect();
  two?.disconnect();
  redisServer?.proc.kill('SIGKILL');
  await db?.drop();
});

describe('two clusters on one Redis server, databases 1 and 2, the default prefix', () => {
  it('a change ping of one cluster does not reach the other’s change feed', async () => {
    const feed = createChangeFeed(one, DEFAULT_QUEUE_PREFIX, logger);
    const heard: RunChangedPing[] = [];
    const unwatch = feed.watch(runA, (p) => heard.push(p));
    try {
      await unwatch.ready;
      // the other cluster's dispatcher commits the same run id's events (seq 7); then this cluster's (seq 8)
      await publishChangePings(two, [{ runId: runA, seq: 7, kind: 'node' }], DEFAULT_QUEUE_PREFIX);
      await publishChangePings(one, [{ runId: runA, seq: 8, kind: 'node' }], DEFAULT_QUEUE_PREFIX);
      await waitFor(() => heard.some((p) => p.seq === 8), { timeoutMs: 5_000, description: 'own ping heard' });
      expect(heard.map((p) => p.seq)).toEqual([8]);
    } finally {
      unwatch();
      await feed.close();
    }
  });

  it('a wake of one cluster does not reach the other’s dispatcher', async () => {
    const woken: string[] = [];
    const feed = new JobFeed(one, DEFAULT_QUEUE_PREFIX, { wake: (runId) => woken.push(runId), started: () => undefined, completed: () => undefined, failed: () => undefined }, logger);
    await feed.start();
    try {
      await feed.joinShards([0, 1, 2, 3]);
      await publishWake(two, { runId: runB }, DEFAULT_QUEUE_PREFIX, SHARDS);
      await publishWake(two, { runId: runB }, DEFAULT_QUEUE_PREFIX);
      await publishWake(one, { runId: runA }, DEFAULT_QUEUE_PREFIX, SHARDS);
      await waitFor(() => woken.includes(runA), { timeoutMs: 5_000, description: 'own wake heard' });
      expect(woken).toEqual([runA]);
    } finally {
      await feed.stop();
    }
  });

  it('a live channel broadcast of one cluster does not disconnect the other’s consoles', async () => {
    const started: { server: HttpServer; live: LiveServer }[] = [];
    const replica = async (redis: Redis) => {
      const server = createServer();
      const live = attachLive(server, { pool: db.pool, redis, apiKeys: null, queuePrefix: DEFAULT_QUEUE_PREFIX, eventReplayLimit: 10, options: DEFAULT_LIVE_OPTIONS, logger });
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      await live.ready;
      started.push({ server, live });
      return { live, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
    };
    const sockets: Socket[] = [];
    try {
      const a = await replica(one);
      const sameCluster = await replica(one);
      const otherCluster = await replica(two);
      const socket = connectSocket(a.url, { path: LIVE_SOCKET_PATH, transports: ['websocket'], reconnection: false });
      sockets.push(socket);
      const reasons: string[] = [];
      socket.on('disconnect', (r) => reasons.push(r));
      await waitFor(() => socket.connected, { timeoutMs: 5_000, description: 'console connected' });

      // the other cluster broadcasts a disconnect to every socket of its replicas
      otherCluster.live.io.disconnectSockets(true);
      // the adapter's message crosses one local Redis server in well under this
      await new Promise((r) => setTimeout(r, 500));
      expect(reasons).toEqual([]);
      // positive control: a replica of the same cluster (same database) does reach this console
      sameCluster.live.io.disconnectSockets(true);
      await waitFor(() => reasons.length > 0, { timeoutMs: 5_000, description: 'same-cluster broadcast heard' });
      expect(reasons).toEqual(['io server disconnect']);
    } finally {
      for (const s of sockets) s.close();
      for (const { server, live } of started) {
        await live.close();
        server.closeAllConnections();
        await new Promise<void>((r) => server.close(() => r()));
      }
    }
  });
});
