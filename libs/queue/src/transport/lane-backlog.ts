/**
 * What waits in a lane, as autoscaling should see it. BullMQ keeps waiting jobs in more
 * than one structure (the `wait` list and the `prioritized` sorted set; a paused queue
 * keeps them where they are), so the depth adds both; a raw wait-list length undercounts.
 */
import type { LaneQueue } from './lane-queue';

export interface LaneBacklog {
  /** jobs waiting for a worker (wait + prioritized) */
  depth: number;
  /** age of the oldest of them, ms (0 when none waits) */
  oldestWaitMs: number;
}

const WAITING = ['wait', 'prioritized'] as const;

/** The jobs waiting on a lane for a worker (wait + prioritized). */
export async function readLaneDepth(queue: LaneQueue): Promise<number> {
  const counts = await queue.getJobCounts(...WAITING);
  return WAITING.reduce((sum, s) => sum + (counts[s] ?? 0), 0);
}

/**
 * Reads a lane's backlog at `now` (ms). The oldest job is the tail of each structure: the
 * list end for `wait`, the first member of `prioritized` (FIFO within a
 * priority, so across priorities it is the next to run rather than strictly the oldest).
 */
export async function readLaneBacklog(queue: LaneQueue, now: number): Promise<LaneBacklog> {
  const counts = await queue.getJobCounts(...WAITING);
  const depth = WAITING.reduce((sum, s) => sum + (counts[s] ?? 0), 0);
  if (depth === 0) return { depth, oldestWaitMs: 0 };
  let oldest = now;
  for (const state of WAITING) {
    if ((counts[state] ?? 0) === 0) continue;
    const [job] = await queue.getJobs([state], 0, 0, true);
    if (job && job.timestamp < oldest) oldest = job.timestamp;
  }
  return { depth, oldestWaitMs: Math.max(0, now - oldest) };
}
