/**
 * Reads one lane job's fate in a single atomic Redis step, including the case BullMQ
 * itself only notices on a surviving worker's stalled check: a started job whose lock
 * lapsed (its worker died). The job's hash and lock keys come from libs/queue
 * (`laneJobKey`, `laneJobLockKey`: the layout `Job.fromId` and the workers' lock renewal use).
 */
import type { RedisConnection } from '@flowline/queue';
import type { JobFate, Lane } from '@flowline/graph';
import { admittedAt, jobFieldJson, laneJobKey, laneJobLockKey, LANES, parseWorkReturn, startsOnAdmission } from '@flowline/queue';

export type { JobFate };

// KEYS[1] job hash, KEYS[2] its lock. Returns {exists, locked, processedOn, finishedOn, failedReason, returnvalue, progress}.
const PROBE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return {0} end
local f = redis.call('HMGET', KEYS[1], 'processedOn', 'finishedOn', 'failedReason', 'returnvalue', 'progress')
return {1, redis.call('EXISTS', KEYS[2]), f[1] or '', f[2] or '', f[3] or '', f[4] or '', f[5] or ''}
`;

async function probeLane(redis: RedisConnection, prefix: string, lane: Lane, invocationId: string): Promise<JobFate> {
  const r = (await redis.eval(PROBE, 2, laneJobKey(lane, invocationId, prefix), laneJobLockKey(lane, invocationId, prefix))) as (number | string)[];
  if (r[0] === 0) return { state: 'missing' };
  const [, locked, processedOn, finishedOn, failedReason, returnvalue, progress] = r as [number, number, string, string, string, string, string];
  if (finishedOn) {
    const ret = returnvalue ? parseWorkReturn(jobFieldJson(returnvalue)) : null;
    if (ret?.success) return { state: 'completed', outcome: ret.data.outcome, finishedOn: Number(finishedOn) };
    return { state: 'failed', reason: failedReason || 'job failed', finishedOn: Number(finishedOn) };
  }
  if (!processedOn) return { state: 'waiting' };
  if (!locked) return { state: 'orphaned', processedOn: Number(processedOn) };
  if (!startsOnAdmission(lane)) return { state: 'running', startedAt: Number(processedOn) };
  // an admission-started lane runs from the worker's admission, not from the pickup
  const at = progress ? admittedAt(jobFieldJson(progress)) : null;
  return at === null ? { state: 'admitting' } : { state: 'running', startedAt: at };
}

/** The fate of an invocation's job on whichever lane holds it. */
export async function probeJob(redis: RedisConnection, prefix: string, invocationId: string): Promise<JobFate> {
  for (const lane of LANES) {
    const fate = await probeLane(redis, prefix, lane, invocationId);
    if (fate.state !== 'missing') return fate;
  }
  return { state: 'missing' };
}
