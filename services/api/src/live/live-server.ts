/**
 * The live channel on the API's HTTP server (CONTRACT §6): Socket.IO at `/socket.io` with
 * the Redis adapter, handshake auth `{ token }` against the API keys (or a person's sign-in
 * session cookie), run rooms joined
 * BEFORE the replay is read, and `runChanged` relayed from the replica's change feed —
 * merged per run within the merge window and written only to this replica's sockets
 * (`io.local`). A replica subscribes to a run's change channel while the run's room exists
 * here (the adapter's create-room / delete-room: from the first socket's join to the last
 * one's leave), so it receives only the pings of runs its own sockets watch and delivers
 * them without re-broadcasting through the adapter; a replica nobody watches a run through
 * spends nothing on that run's commits, so adding replicas
 * does not add work per commit.
 */
import type { Server as HttpServer } from 'node:http';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { Server, type Socket } from 'socket.io';
import { createAdapter, createShardedAdapter } from '@socket.io/redis-adapter';
import { LIVE_EVENTS, LIVE_SOCKET_PATH, channelPrefix, duplicateConnection, isClusterConnection, runRoom, type RedisConnection } from '@flowline/queue';
import { checkClientAddress, type ApiKeyTable, type Principal } from '../auth';
import type { ManagedKeyOptions } from '../principals/managed-keys';
import { principalResolverFor } from '../principals/resolver';
import { USER_SESSION_COOKIE, type UserSessions } from '../principals/user-sessions';
import { parse as parseCookie } from 'hono/utils/cookie';
import { sharedChangeFeed, type ChangeFeed, type Unwatch } from './change-feed';
import type { LiveOptions } from './config';
import { createPingMerger } from './merger';
import { createTokenBucket } from './token-bucket';
import { registerLiveHandlers } from './handlers';
import type { ApiMetrics } from '../metrics';

/** What the live channel is built from. */
export interface LiveDeps {
  pool: Pool;
  redis: RedisConnection;
  /** key → tenant and scopes (a bare tenant string holds every scope); null = single-tenant `default` without auth */
  apiKeys: ApiKeyTable | null;
  /** managed API keys, resolved through the same cache as the HTTP routes @default disabled */
  managedKeys?: ManagedKeyOptions;
  queuePrefix: string;
  eventReplayLimit: number;
  options: LiveOptions;
  logger: Logger;
  /** the change feed to relay; defaults to the process-wide one of `redis` + prefix */
  feed?: ChangeFeed;
  /** the API's metrics: live sockets (read at scrape time) and pings sent */
  metrics?: Pick<ApiMetrics, 'pingSent' | 'setSocketCount'>;
  /** people's sign-in sessions (single sign-on on): a handshake without a token presents its cookie @default none */
  sessions?: UserSessions | null;
}

/** The attached live channel. */
export interface LiveServer {
  io: Server;
  feed: ChangeFeed;
  /** resolves once the change channel and the adapter are subscribed */
  ready: Promise<void>;
  close(): Promise<void>;
}

/** Attaches Socket.IO to `server` and starts relaying change pings. */
export function attachLive(server: HttpServer, d: LiveDeps): LiveServer {
  // On a Redis Cluster the adapter uses sharded pub/sub (SPUBLISH/SSUBSCRIBE, Redis >= 7): a
  // message reaches only the shard owning its channel's slot instead of every node over the
  // cluster bus. `static`: this replica never broadcasts to rooms through the adapter (pings are
  // relayed from the change feed to local sockets), so per-room channels would be pure cost.
  const clustered = isClusterConnection(d.redis);
  const pub = duplicateConnection(d.redis);
  const sub = duplicateConnection(d.redis, clustered ? { shardedSubscribers: true } : {});
  for (const c of [pub, sub]) c.on('error', (err) => d.logger.warn({ err }, 'socket.io adapter redis error'));
  // the adapter's channels carry the database index too: another cluster on another database of
  // the same server (same queue prefix) must not hear this one's broadcasts
  const adapterPrefix = `${channelPrefix(d.queuePrefix, d.redis)}:socket.io`;
  const io = new Server(server, {
    path: LIVE_SOCKET_PATH,
    serveClient: false,
    adapter: clustered
      ? createShardedAdapter(pub, sub, { channelPrefix: adapterPrefix, subscriptionMode: 'static' })
      : createAdapter(pub, sub, { key: adapterPrefix }),
    cors: { origin: true },
  });
  const feed = d.feed ?? sharedChangeFeed(d.redis, d.queuePrefix, d.logger);
  const log = d.logger.child({ component: 'live' });

  const merger = createPingMerger(d.options.mergeWindowMs, (ping) => {
    io.local.to(runRoom(ping.runId)).emit(LIVE_EVENTS.runChanged, ping);
    d.metrics?.pingSent();
  });
  d.metrics?.setSocketCount(() => io.of('/').sockets.size);
  // one change-channel subscription per run room of this replica
  const ROOM_PREFIX = runRoom('');
  const watching = new Map<string, Unwatch>();
  const adapter = io.of('/').adapter;
  const onCreateRoom = (room: unknown) => {
    if (typeof room !== 'string' || !room.startsWith(ROOM_PREFIX)) return;
    const runId = room.slice(ROOM_PREFIX.length);
    if (!watching.has(runId)) watching.set(runId, feed.watch(runId, (ping) => merger.add(ping)));
  };
  const onDeleteRoom = (room: unknown) => {
    if (typeof room !== 'string' || !room.startsWith(ROOM_PREFIX)) return;
    const runId = room.slice(ROOM_PREFIX.length);
    watching.get(runId)?.();
    watching.delete(runId);
  };
  adapter.on('create-room', onCreateRoom);
  adapter.on('delete-room', onDeleteRoom);
  const pingsFlowing = (runId: string) => watching.get(runId)?.ready.catch(() => undefined) ?? Promise.resolve();
  // after a lost subscriber connection, re-announce every watched run's current seq
  const offResync = feed.onResync(() => {
    const runIds = [...watching.keys()];
    if (runIds.length === 0) return;
    d.pool
      .query<{ id: string; last_seq: number }>(`SELECT id, last_seq FROM runs WHERE id = ANY($1::uuid[])`, [runIds])
      .then((res) => {
        for (const r of res.rows) merger.add({ runId: r.id, seq: r.last_seq, kind: 'run' });
      })
      .catch((err: unknown) => log.warn({ err }, 'live resync read failed'));
  });

  const bucket = createTokenBucket({
    ratePerSec: d.options.subscribeRate,
    burst: d.options.subscribeBurst,
    maxWaiting: d.options.subscribeMaxWaiting,
  });
  const principals = principalResolverFor(d);
  io.use((socket, next) => {
    const token: unknown = (socket.handshake.auth as Record<string, unknown> | undefined)?.token;
    // a browser signed in through single sign-on sends no token: its session cookie rides on the handshake
    const session = typeof token !== 'string' && d.sessions ? parseCookie(socket.handshake.headers.cookie ?? '', USER_SESSION_COOKIE)[USER_SESSION_COOKIE] : undefined;
    // the key as sent, compared exactly (a padded key is another, unknown key)
    (session !== undefined ? d.sessions!.resolve(session) : principals.resolve(typeof token === 'string' ? token : null)).then(
      (principal) => {
        if (principal === null) {
          next(new Error('Unauthorized'));
          return;
        }
        const forwarded = socket.handshake.headers['x-forwarded-for'];
        const address = principals.clientAddress(socket.handshake.address || null, Array.isArray(forwarded) ? forwarded.join(',') : forwarded);
        try {
          checkClientAddress(principal, address);
        } catch {
          next(new Error('KeyConstraint'));
          return;
        }
        // scopes are checked per event (handlers.ts): a key without `read` connects, and its subscriptions are refused
        (socket.data as { principal: Principal }).principal = principal;
        if (principal.managed) principals.managed?.noteUse(principal.managed.keyId, address);
        next();
      },
      (err: unknown) => {
        log.warn({ err }, 'live handshake key lookup failed');
        next(new Error('Unavailable'));
      },
    );
  });
  // a revoked (or rotated) key's sockets are closed: their clients reconnect and are judged again
  const offInvalidate =
    principals.managed?.onInvalidate((keyId) => {
      for (const socket of io.of('/').sockets.values()) {
        if ((socket.data as { principal?: Principal }).principal?.managed?.keyId === keyId) socket.disconnect(true);
      }
    }) ?? (() => undefined);

  const activity = { count: 0 };
  io.on('connection', (socket: Socket) => {
    registerLiveHandlers(socket, { ...d, bucket, activity, pingsFlowing, log });
  });

  const whenReady = (c: RedisConnection) => (c.status === 'ready' ? Promise.resolve() : new Promise<void>((r) => c.once('ready', () => r())));
  const adapterReady = Promise.all([whenReady(pub), whenReady(sub)]);
  return {
    io,
    feed,
    ready: Promise.all([feed.ready, adapterReady]).then(() => undefined),
    async close() {
      adapter.off('create-room', onCreateRoom);
      adapter.off('delete-room', onDeleteRoom);
      for (const unwatch of watching.values()) unwatch();
      watching.clear();
      offResync();
      offInvalidate();
      merger.close();
      bucket.close();
      // io.local: only this replica's sockets. Through the Redis adapter a plain
      // io.disconnectSockets would reach every replica's sockets, and a deploy (one replica
      // stopped at a time) would drop every console of the cluster at once.
      io.local.disconnectSockets(true);
      // io.close() would also close the HTTP server, which the caller owns: close the engine only
      io.engine.close();
      await Promise.all([pub.quit().catch(() => pub.disconnect()), sub.quit().catch(() => sub.disconnect())]);
    },
  };
}
