/**
 * Lane queues and the conventions every producer and consumer shares: one attempt
 * per job (the engine's attempt ledger is the only retry budget), no stalled retry,
 * bounded retention of finished jobs, and idempotent bulk enqueue by invocation id.
 */
import { Queue, type JobsOptions, type WorkerOptions } from 'bullmq';
import type { RedisConnection } from './connect-redis';
import type { Lane, WorkItem } from '@flowline/graph';
import { DEFAULT_QUEUE_PREFIX, LANES, jobIdFor, queueNameFor, toWire, type Wire, type WorkReturn } from '../protocol';

/**
 * Default options of every lane job. `attempts: 1`: BullMQ never retries, the
 * dispatcher does. Finished jobs stay readable (the dispatcher reads the return value)
 * for at least an hour, capped in count so Redis stays bounded.
 */
export const DEFAULT_JOB_OPTIONS = {
  attempts: 1,
  removeOnComplete: { age: 3_600, count: 50_000 },
  removeOnFail: { age: 24 * 3_600, count: 50_000 },
} as const satisfies JobsOptions;

/**
 * Default BullMQ job lock of a lane worker (WORKER_LOCK_MS), ms. A live worker renews it
 * every half period; a killed worker's job is seen orphaned (lock lapsed) by the dispatcher's
 * in-flight check and by BullMQ's stalled check within about this long.
 */
export const DEFAULT_WORKER_LOCK_MS = 10_000;

/**
 * Worker options every lane worker must use. `maxStalledCount: 0`: a job whose worker
 * died is failed (never silently re-run), and the dispatcher retries it as Interrupted
 * within the node's attempt budget.
 */
export const LANE_WORKER_OPTIONS = {
  maxStalledCount: 0,
  lockDuration: DEFAULT_WORKER_LOCK_MS,
  stalledInterval: DEFAULT_WORKER_LOCK_MS,
} as const satisfies Partial<WorkerOptions>;

/** {@link LANE_WORKER_OPTIONS} with a job lock of `lockMs` (tests lower it so a killed worker is noticed fast). */
export function laneWorkerOptions(lockMs: number = DEFAULT_WORKER_LOCK_MS): Partial<WorkerOptions> {
  if (!Number.isInteger(lockMs) || lockMs < 200) throw new RangeError('worker lock must be an integer of at least 200 ms');
  return { ...LANE_WORKER_OPTIONS, lockDuration: lockMs, stalledInterval: lockMs };
}

/** A lane queue: work items in, work returns out, each in its wire form (wire.ts). */
export type LaneQueue = Queue<Wire<WorkItem>, Wire<WorkReturn>>;

/** The queue of each lane. */
export type LaneQueues = Readonly<Record<Lane, LaneQueue>>;

/**
 * A BullMQ queue for one lane.
 * @param redis connection (BullMQ duplicates nothing for a Queue; share one client)
 * @param prefix BullMQ key prefix; @default DEFAULT_QUEUE_PREFIX
 */
export function createLaneQueue(redis: RedisConnection, lane: Lane, prefix: string = DEFAULT_QUEUE_PREFIX): LaneQueue {
  return new Queue<Wire<WorkItem>, Wire<WorkReturn>>(queueNameFor(lane), {
    connection: redis,
    prefix,
    defaultJobOptions: DEFAULT_JOB_OPTIONS,
  });
}

/** The queues of every lane. */
export function createLaneQueues(redis: RedisConnection, prefix: string = DEFAULT_QUEUE_PREFIX): LaneQueues {
  return { llm: createLaneQueue(redis, 'llm', prefix), tool: createLaneQueue(redis, 'tool', prefix) };
}

/** Closes every lane queue (not the shared connection). */
export async function closeLaneQueues(queues: LaneQueues): Promise<void> {
  await Promise.all(LANES.map((lane) => queues[lane].close()));
}

/** A job as {@link addLaneJobs} takes it (the shape of BullMQ's `addBulk` entries). */
export interface LaneJobEntry {
  name: string;
  data: Wire<WorkItem>;
  opts: JobsOptions & { jobId: string };
}

/**
 * Adds `jobs` to `queue`: one job by `add` (one script call), several by `addBulk` (one
 * MULTI; ioredis builds a pipeline object per call, a cost a lone job need not pay).
 * Idempotent by job id either way.
 */
export async function addLaneJobs(queue: LaneQueue, jobs: readonly LaneJobEntry[]): Promise<void> {
  if (jobs.length === 1) await queue.add(jobs[0]!.name, jobs[0]!.data, jobs[0]!.opts);
  else if (jobs.length > 1) await queue.addBulk(jobs as LaneJobEntry[]);
}

/**
 * Puts work items on their lanes (in their wire form), one `addBulk` per lane. Idempotent:
 * the job id is the invocation id, so an item whose job already exists (waiting, active or
 * still retained after finishing) adds nothing.
 * @returns the number of items handed to BullMQ
 */
export async function enqueueWork(queues: LaneQueues, items: readonly WorkItem[]): Promise<number> {
  const byLane = new Map<Lane, WorkItem[]>();
  for (const item of items) {
    const list = byLane.get(item.lane) ?? [];
    list.push(item);
    byLane.set(item.lane, list);
  }
  await Promise.all(
    [...byLane].map(([lane, laneItems]) =>
      queues[lane].addBulk(
        laneItems.map((item) => ({
          name: item.kind,
          data: toWire(item),
          opts: { jobId: jobIdFor(item.invocationId) },
        })),
      ),
    ),
  );
  return items.length;
}
