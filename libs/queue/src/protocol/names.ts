/**
 * Queue, job-id, job-key and channel naming: the one place that knows how Flowline lays its
 * transport out in Redis. Every BullMQ key of a lane queue is `<prefix>:<queue>:…`;
 * the default prefix is a Redis Cluster hash tag, so all keys of every lane live in
 * one slot and BullMQ's multi-key Lua scripts work on a cluster.
 */
import { shardOfRun, type Lane } from '@flowline/graph';

/** Default BullMQ prefix (a hash tag: `{…}`). Tests pass a unique one per file. */
export const DEFAULT_QUEUE_PREFIX = '{flowline}';

/** The BullMQ queue name of each worker lane. */
export const LANE_QUEUE_NAMES: Readonly<Record<Lane, string>> = {
  llm: 'node.llm',
  tool: 'node.tool',
};

export const LANES: readonly Lane[] = ['llm', 'tool'];

/** Thrown when an id cannot be a BullMQ custom job id. */
export class InvalidJobIdError extends Error {
  readonly code = 'InvalidJobId';
  constructor(message: string) {
    super(message);
    this.name = 'InvalidJobIdError';
  }
}

/** The BullMQ queue name of a lane. */
export function queueNameFor(lane: Lane): string {
  return LANE_QUEUE_NAMES[lane];
}

/**
 * The BullMQ job id of an invocation: the invocation id itself, so adding the same
 * invocation twice is a no-op and an outcome is found by invocation id.
 * BullMQ refuses integer-looking ids and ids containing `:`; invocation ids are UUIDs.
 * @throws InvalidJobIdError when the id could not be a job id
 */
export function jobIdFor(invocationId: string): string {
  if (invocationId.length === 0 || invocationId.length > 200) {
    throw new InvalidJobIdError('invocation id must be 1–200 characters');
  }
  if (invocationId.includes(':')) {
    throw new InvalidJobIdError('invocation id must not contain ":"');
  }
  if (`${parseInt(invocationId, 10)}` === invocationId) {
    throw new InvalidJobIdError('invocation id must not be an integer');
  }
  return invocationId;
}

/**
 * The Redis key of a lane job's hash in BullMQ's layout, `<prefix>:<queue>:<jobId>`: the
 * key `Job.fromId` reads and a worker's job writes.
 */
export function laneJobKey(lane: Lane, invocationId: string, prefix: string = DEFAULT_QUEUE_PREFIX): string {
  return `${prefix}:${queueNameFor(lane)}:${jobIdFor(invocationId)}`;
}

/** The Redis key of a lane job's lock (`<job key>:lock`), held and renewed by the worker running it. */
export function laneJobLockKey(lane: Lane, invocationId: string, prefix: string = DEFAULT_QUEUE_PREFIX): string {
  return `${laneJobKey(lane, invocationId, prefix)}:lock`;
}

/**
 * The Redis database index a connection works in (`redis://host/2` → 2): an ioredis client's
 * `options.db`; 0 for anything else (a Redis Cluster has only database 0).
 */
export function redisDbOf(conn: unknown): number {
  const db = (conn as { options?: { db?: unknown } } | null | undefined)?.options?.db;
  return typeof db === 'number' && Number.isInteger(db) && db > 0 ? db : 0;
}

/**
 * The prefix of every pub/sub channel of `prefix` on `conn`'s database: the queue prefix, and
 * `:db<n>` after it when the database is not 0. Redis pub/sub ignores the database index, so
 * without it a second cluster with the same prefix on another database of the same server
 * would hear this one's wakes, change pings, cancellations and Socket.IO adapter messages.
 * Database 0 (and a Redis Cluster) keeps the bare prefix. Every channel function below takes
 * this as its `prefix`; the publishers and subscribers derive it from their connection.
 */
export function channelPrefix(prefix: string, conn: unknown): string {
  const db = redisDbOf(conn);
  return db === 0 ? prefix : `${prefix}:db${db}`;
}

/**
 * The pub/sub channel on which dispatchers publish `{ invocationId, reason }`
 * cancellations; every worker of every lane listens and aborts the matching
 * in-flight call. Plain (non-sharded) pub/sub reaches every node of a cluster.
 */
export function cancelChannel(prefix: string = DEFAULT_QUEUE_PREFIX): string {
  return `${prefix}:cancel`;
}

/**
 * The pub/sub channel on which an API replica that revoked or rotated a managed API key
 * publishes the key's id; every API replica listens and drops its cached copy of that key.
 * Pass the prefix through {@link channelPrefix} (pub/sub ignores the database index).
 */
export function apiKeyChangesChannel(prefix: string = DEFAULT_QUEUE_PREFIX): string {
  return `${prefix}:api-keys`;
}

/**
 * The broadcast wake channel: every dispatcher listens. Only a message that cannot name its
 * run's shard goes here: a stalled job's failure (its run is unknown to the worker) or a
 * sender that does not know SHARD_COUNT.
 */
export function wakeChannel(prefix: string = DEFAULT_QUEUE_PREFIX): string {
  return `${prefix}:wake`;
}

/**
 * The wake channel of one shard: `{ runId }` wakes and lane workers' reports of the runs of
 * that shard. Only the dispatcher holding the shard's lease subscribes (on gain; it
 * unsubscribes on loss), so a report costs one dispatcher, however many replicas run. A
 * message published while no one holds the shard is lost; the new owner's in-flight check
 * and due sweep on gain heal it.
 */
export function shardWakeChannel(shard: number, prefix: string = DEFAULT_QUEUE_PREFIX): string {
  return `${prefix}:wake:${shard}`;
}

/**
 * Where a wake about `runId` goes: its shard's channel when the sender knows SHARD_COUNT,
 * else the broadcast channel.
 */
export function wakeChannelOf(runId: string | undefined, shardCount: number | undefined, prefix: string = DEFAULT_QUEUE_PREFIX): string {
  return runId !== undefined && shardCount !== undefined ? shardWakeChannel(shardOfRun(runId, shardCount), prefix) : wakeChannel(prefix);
}
