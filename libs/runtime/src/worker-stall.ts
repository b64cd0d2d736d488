/**
 * The stalled-worker rule of a lane worker's readiness: a worker that took or finished no job
 * for WORKER_STALL_MS while jobs wait on its lane has stopped consuming (every slot held by a
 * call that never ends, a blocking connection that hangs), so its /readyz answers 503 with the
 * reason. A long call with nothing waiting is no stall: nobody is kept waiting by it.
 */
import { z } from 'zod';

/** Lane-worker readiness options. */
export const workerStallOptions = {
  WORKER_STALL_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(86_400_000)
    .default(300_000)
    .describe('a worker that neither took nor finished a job for this long while jobs wait on its lane answers /readyz 503, ms'),
};

/** What the rule reads: the time of the last job taken or finished, and the jobs waiting. */
export interface WorkerProgress {
  /** WORKER_STALL_MS */
  stallMs: number;
  /** epoch ms of the last job this worker took or finished (its start time before the first) */
  lastProgressAt(): number;
  /** jobs waiting on the worker's lane (not yet taken by any worker) */
  waiting(): Promise<number>;
}

/** Why a worker counts as stalled at `now`, or null when it does not. */
export function stallReason(now: number, lastProgressAt: number, waiting: number, stallMs: number): string | null {
  const idleMs = now - lastProgressAt;
  if (waiting <= 0 || idleMs < stallMs) return null;
  return `no job taken or finished for ${idleMs} ms while ${waiting} wait (WORKER_STALL_MS=${stallMs})`;
}

/**
 * Reads the rule at `now`: the lane's backlog is read only once the worker has been idle
 * for WORKER_STALL_MS, so a progressing worker's readiness costs no Redis read.
 */
export async function checkStall(progress: WorkerProgress, now: number): Promise<string | null> {
  const last = progress.lastProgressAt();
  if (now - last < progress.stallMs) return null;
  return stallReason(now, last, await progress.waiting(), progress.stallMs);
}
