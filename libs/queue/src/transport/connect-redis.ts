/**
 * The one place a service opens Redis: a single server (`REDIS_URL`) or, when
 * `REDIS_CLUSTER_NODES` names seed nodes, a Redis Cluster. Everything above this module takes
 * a {@link RedisConnection} and works on either:
 *
 * - every key Flowline and BullMQ write starts with the queue prefix, a hash tag
 *   (`{flowline}`), so all of them live in one slot and every Lua script, MULTI and pipeline
 *   stays single-slot (the config refuses a clustered boot whose prefix is not a hash tag);
 * - wakes, change pings and cancellations use classic PUBLISH/SUBSCRIBE, which a cluster
 *   delivers to subscribers on any node (see docs/scaling.md for why not sharded pub/sub);
 * - the API's Socket.IO adapter uses sharded pub/sub on a cluster ({@link isClusterConnection}).
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';

/** A connection to Redis: one server or a cluster (both speak the same commands). */
export type RedisConnection = Redis | Cluster;

/** One seed node of a Redis Cluster. */
export interface RedisClusterSeed {
  host: string;
  port: number;
}

/** Where Redis is: `url` alone for one server; `clusterNodes` (non-empty) for a cluster. */
export interface RedisTarget {
  /** `redis://` / `rediss://` URL; on a cluster only its credentials and TLS scheme are used */
  url: string;
  /** seed nodes of a Redis Cluster; absent or empty = one server at `url` */
  clusterNodes?: readonly RedisClusterSeed[] | undefined;
}

/** Connection options that mean the same on one server and on a cluster. */
export interface ConnectOptions {
  /** ioredis `maxRetriesPerRequest` (BullMQ workers need `null`) */
  maxRetriesPerRequest?: number | null;
  /** connect on first command or `connect()` @default false */
  lazyConnect?: boolean;
  /** queue commands while disconnected @default true */
  enableOfflineQueue?: boolean;
  /** clustered: open one subscriber connection per master for SSUBSCRIBE (Socket.IO's sharded adapter) @default false */
  shardedSubscribers?: boolean;
}

/** True when the connection is a Redis Cluster client. */
export function isClusterConnection(redis: RedisConnection): redis is Cluster {
  return redis instanceof Cluster;
}

/** Opens a connection to the Redis of `target` (see {@link RedisTarget}). */
export function connectRedis(target: RedisTarget, options: ConnectOptions = {}): RedisConnection {
  const { shardedSubscribers, lazyConnect, enableOfflineQueue, ...perCommand } = options;
  const common = {
    ...(lazyConnect !== undefined ? { lazyConnect } : {}),
    ...(enableOfflineQueue !== undefined ? { enableOfflineQueue } : {}),
  };
  if (!target.clusterNodes || target.clusterNodes.length === 0) return new Redis(target.url, { ...perCommand, ...common });
  const u = new URL(target.url);
  const redisOptions: RedisOptions = {
    ...perCommand,
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    ...(u.protocol === 'rediss:' ? { tls: {} } : {}),
  };
  return new Cluster(
    target.clusterNodes.map((n) => ({ host: n.host, port: n.port })),
    { ...common, redisOptions, shardedSubscribers: shardedSubscribers ?? false },
  );
}

/**
 * A second connection to the same server or cluster as `redis` (a subscriber, a blocking
 * reader), with `options` overriding the original's: ioredis' `duplicate`, which takes its
 * overrides in a different place on a cluster.
 */
export function duplicateConnection(redis: RedisConnection, options: ConnectOptions = {}): RedisConnection {
  const { lazyConnect, enableOfflineQueue, shardedSubscribers, ...perCommand } = options;
  const common = {
    ...(lazyConnect !== undefined ? { lazyConnect } : {}),
    ...(enableOfflineQueue !== undefined ? { enableOfflineQueue } : {}),
  };
  if (!isClusterConnection(redis)) return redis.duplicate({ ...perCommand, ...common });
  return redis.duplicate(undefined, {
    ...common,
    ...(shardedSubscribers !== undefined ? { shardedSubscribers } : {}),
    redisOptions: { ...redis.options.redisOptions, ...perCommand },
  });
}

/**
 * Runs `issue`, which sends commands on `redis`, with the connection's socket corked until the
 * next tick: the commands it and the promise continuations of the same turn send leave in one
 * write (one syscall) instead of one each, in order. ioredis writes each command as it is
 * issued; its auto-pipelining does this for every command of a connection, which BullMQ's
 * scripts are not known to be safe with, so it is applied only where a caller asks. A cluster
 * client (one socket per node) and a connection that is not ready are left as they are.
 */
export function corked<T>(redis: RedisConnection, issue: () => T): T {
  const stream = isClusterConnection(redis) || redis.status !== 'ready' ? null : (redis as unknown as { stream?: { cork?: () => void; uncork?: () => void } }).stream;
  if (!stream?.cork || !stream.uncork) return issue();
  stream.cork();
  try {
    return issue();
  } finally {
    process.nextTick(() => stream.uncork!());
  }
}
