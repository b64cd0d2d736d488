/**
 * Which lane workers are alive and what each is doing, for the console's Workers page: every
 * worker writes a heartbeat (who it is, what runs on it, its last progress) while it runs,
 * and removes it when it stops. One sorted set per lane holds each worker's expiry, one hash
 * its last heartbeat; both under the queue prefix (one hash tag: a Redis Cluster keeps them
 * in one slot), so a reader needs no SCAN. A worker killed without stopping drops out when its
 * heartbeat expires (three intervals).
 */
import type { Lane } from '@flowline/graph';
import type { RedisConnection } from './connect-redis';

/** One worker's heartbeat. */
export interface WorkerBeat {
  /** `<host>:<pid>:<random>`: unique per process start */
  id: string;
  lane: Lane;
  host: string;
  pid: number;
  /** epoch ms the worker started taking jobs */
  startedAt: number;
  /** epoch ms of this heartbeat */
  beatAt: number;
  /** epoch ms of the last job it took or finished (its start before the first) */
  lastProgressAt: number;
  /** invocations running on it now */
  inFlight: number;
  /** LANE_CONCURRENCY: how many it runs at once at most */
  concurrency: number;
}

const expiriesKey = (prefix: string, lane: Lane) => `${prefix}:workers:${lane}`;
const beatsKey = (prefix: string, lane: Lane) => `${prefix}:workers:${lane}:beats`;

/** Writes `beat`, trusted until `beat.beatAt + ttlMs`. */
export async function writeWorkerBeat(redis: RedisConnection, prefix: string, beat: WorkerBeat, ttlMs: number): Promise<void> {
  await redis
    .multi()
    .zadd(expiriesKey(prefix, beat.lane), beat.beatAt + ttlMs, beat.id)
    .hset(beatsKey(prefix, beat.lane), beat.id, JSON.stringify(beat))
    .exec();
}

/** Removes a stopping worker. */
export async function removeWorkerBeat(redis: RedisConnection, prefix: string, lane: Lane, id: string): Promise<void> {
  await redis.multi().zrem(expiriesKey(prefix, lane), id).hdel(beatsKey(prefix, lane), id).exec();
}

/** The live workers of `lane` at `now`, by id; expired heartbeats are removed on the way. */
export async function readWorkerBeats(redis: RedisConnection, prefix: string, lane: Lane, now: number): Promise<WorkerBeat[]> {
  const expired = await redis.zrangebyscore(expiriesKey(prefix, lane), '-inf', now);
  if (expired.length > 0) {
    await redis
      .multi()
      .zremrangebyscore(expiriesKey(prefix, lane), '-inf', now)
      .hdel(beatsKey(prefix, lane), ...expired)
      .exec();
  }
  const ids = await redis.zrangebyscore(expiriesKey(prefix, lane), now, '+inf');
  if (ids.length === 0) return [];
  const raw = await redis.hmget(beatsKey(prefix, lane), ...ids);
  const beats: WorkerBeat[] = [];
  for (const text of raw) {
    if (text === null) continue;
    try {
      beats.push(JSON.parse(text) as WorkerBeat);
    } catch {
      // a foreign value under our key: not a worker
    }
  }
  return beats.sort((a, b) => a.id.localeCompare(b.id));
}
