/**
 * A read-only look at one lane job for "why isn't this run moving?": whether it exists,
 * waits (and where in its lane's wait list), waits for provider admission, runs, lost its
 * worker or finished. Knows BullMQ's key layout (`<prefix>:<queue>:<jobId>` hash, `…:lock`,
 * `…:wait` list, LPUSHed by producers and RPOPLPUSHed by workers: the next job is the
 * rightmost). One atomic Redis step per job.
 */
import type { Redis } from 'ioredis';
import type { Lane } from '@flowline/graph';
import { jobIdFor, queueNameFor } from './names';
import { admittedAt, startsOnAdmission } from './schemas';

export type LaneJobFact =
  | { state: 'missing' }
  /** position 1 = next out of the wait list; null when the job is not in it (delayed, prioritized) */
  | { state: 'waiting'; position: number | null; depth: number }
  | { state: 'admitting' }
  | { state: 'running' }
  | { state: 'orphaned' }
  | { state: 'finished' };

// KEYS[1] job hash, KEYS[2] its lock, KEYS[3] the lane's wait list; ARGV[1] job id.
// Returns {exists, locked, processedOn, finishedOn, progress, lpos (-1 = absent), llen}.
const LOOK = `
if redis.call('EXISTS', KEYS[1]) == 0 then return {0} end
local f = redis.call('HMGET', KEYS[1], 'processedOn', 'finishedOn', 'progress')
local pos = redis.call('LPOS', KEYS[3], ARGV[1])
return {1, redis.call('EXISTS', KEYS[2]), f[1] or '', f[2] or '', f[3] or '', pos or -1, redis.call('LLEN', KEYS[3])}
`;

/** The fact of `invocationId`'s job on `lane`. */
export async function laneJobFact(redis: Redis, prefix: string, lane: Lane, invocationId: string): Promise<LaneJobFact> {
  const jobId = jobIdFor(invocationId);
  const queueKey = `${prefix}:${queueNameFor(lane)}`;
  const r = (await redis.eval(LOOK, 3, `${queueKey}:${jobId}`, `${queueKey}:${jobId}:lock`, `${queueKey}:wait`, jobId)) as (number | string)[];
  if (r[0] === 0) return { state: 'missing' };
  const [, locked, processedOn, finishedOn, progress, lpos, llen] = r as [number, number, string, string, string, number, number];
  if (finishedOn) return { state: 'finished' };
  if (!processedOn) return { state: 'waiting', position: lpos >= 0 ? llen - lpos : null, depth: llen };
  if (!locked) return { state: 'orphaned' };
  if (startsOnAdmission(lane) && admittedAt(safeJson(progress)) === null) return { state: 'admitting' };
  return { state: 'running' };
}

function safeJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return null;
  }
}
