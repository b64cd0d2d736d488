/**
 * A read-only look at one lane job for "why isn't this run moving?": whether it exists, is
 * held in the dispatch window (and where among its tenant's held work), waits (and where in its
 * lane's wait list), waits for provider admission, runs, lost its
 * worker or finished. Knows BullMQ's key layout (`<prefix>:<queue>:<jobId>` hash, `…:lock`,
 * `…:wait` list, LPUSHed by producers and RPOPLPUSHed by workers: the next job is the
 * rightmost). One atomic Redis step per job.
 */
import type { RedisConnection } from './connect-redis';
import type { JobFact, Lane } from '@flowline/graph';
import { jobIdFor, queueNameFor } from '../protocol/names';
import { admittedAt, startsOnAdmission } from '../protocol/schemas';

/** What the lane job of a Queued/Running node looks like in Redis: the blockers' {@link JobFact}. */
export type LaneJobFact = JobFact;

// KEYS[1] job hash, KEYS[2] its lock, KEYS[3] the lane's wait list, KEYS[4] the dispatch window's
// held items, KEYS[5] the tenant's hold (dispatch-window.ts: a sorted set released lowest score
// first, or a list, oldest first, in the layout before run priorities); ARGV[1] job id.
// Returns {0} (missing), {2, rank (-1 = absent), size} (held in the window), or
// {1, locked, processedOn, finishedOn, progress, lpos (-1 = absent), llen}.
const LOOK = `
if redis.call('EXISTS', KEYS[1]) == 0 then
  if redis.call('HEXISTS', KEYS[4], ARGV[1]) == 0 then return {0} end
  if redis.call('TYPE', KEYS[5]).ok == 'list' then
    return {2, redis.call('LPOS', KEYS[5], ARGV[1]) or -1, redis.call('LLEN', KEYS[5])}
  end
  return {2, redis.call('ZRANK', KEYS[5], ARGV[1]) or -1, redis.call('ZCARD', KEYS[5])}
end
local f = redis.call('HMGET', KEYS[1], 'processedOn', 'finishedOn', 'progress')
local pos = redis.call('LPOS', KEYS[3], ARGV[1])
return {1, redis.call('EXISTS', KEYS[2]), f[1] or '', f[2] or '', f[3] or '', pos or -1, redis.call('LLEN', KEYS[3])}
`;

/** The fact of `invocationId`'s job on `lane` (a run of `tenantId`). */
export async function laneJobFact(redis: RedisConnection, prefix: string, lane: Lane, invocationId: string, tenantId: string): Promise<LaneJobFact> {
  const jobId = jobIdFor(invocationId);
  const queueKey = `${prefix}:${queueNameFor(lane)}`;
  const windowKey = `${prefix}:window:${lane}`;
  const keys = [`${queueKey}:${jobId}`, `${queueKey}:${jobId}:lock`, `${queueKey}:wait`, `${windowKey}:items`, `${windowKey}:q:${tenantId}`];
  const r = (await redis.eval(LOOK, keys.length, ...keys, jobId)) as (number | string)[];
  if (r[0] === 0) return { state: 'missing' };
  if (r[0] === 2) {
    const [, pos, len] = r as [number, number, number];
    return { state: 'held', position: pos >= 0 ? pos + 1 : null, depth: len };
  }
  const [, locked, processedOn, finishedOn, progress, lpos, llen] = r as [number, number, string, string, string, number, number];
  if (finishedOn) return { state: 'finished' };
  if (!processedOn) return { state: 'waiting', position: lpos >= 0 ? llen - lpos : null, depth: llen };
  if (!locked) return { state: 'orphaned' };
  if (startsOnAdmission(lane) && admittedAt(jobFieldJson(progress)) === null) return { state: 'admitting' };
  return { state: 'running' };
}

/** A JSON field of a BullMQ job hash (`progress`, `returnvalue`) as a value; null when it is not JSON. */
export function jobFieldJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return null;
  }
}
