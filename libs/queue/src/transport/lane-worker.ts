/**
 * The lifecycle every lane worker shares: a BullMQ Worker with the lane options, a
 * subscription to the cancel channel (a cancel may overtake its job, so recent ones are
 * remembered), reports to the run's dispatcher on its shard's wake channel (the job's outcome
 * when it is stored, its start once it has run for `startReportDelayMs`, its failure),
 * and a graceful stop that lets in-flight calls finish within a grace period, then
 * interrupts them. It also owns the processing of each job: the payload parsed once (an
 * invalid one with ids fails ValidationFailed, one without ids fails the job: a broken
 * producer), the node's signal armed, the error coerced to a failure class (a
 * `FlowlineNodeError` reports its own, anything else NodeFailed and is logged at error), one
 * debug line per job, and the outcome returned. The lane supplies only how one item runs.
 *
 * Dispatchers learn outcomes and starts from these messages, not from BullMQ's
 * QueueEvents stream: every dispatcher would read every event of every job there
 * (added, waiting, active, completed, drained, …) to find the few of its own runs.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Worker, type Job, type Telemetry } from 'bullmq';
import type { RedisConnection } from './connect-redis';
import { removeWorkerBeat, writeWorkerBeat, type WorkerBeat } from './worker-registry';
import { FlowlineNodeError, type Json, type JsonObject, type Lane, type ParkRequest, type WorkItem, type WorkOutcome } from '@flowline/graph';
import {
  cancelChannel,
  channelPrefix,
  cancelMessageSchema,
  DEFAULT_QUEUE_PREFIX,
  parseMessage,
  parseWorkItem,
  publishWake,
  queueNameFor,
  startsOnAdmission,
  toWire,
  type WakeMessageWire,
  type Wire,
  type WorkReturn,
} from '../protocol';
import { createLaneQueue, laneWorkerOptions, type LaneQueue } from './lane-queue';
import { readLaneDepth } from './lane-backlog';
import { lazyChild } from './lazy-child';
import { warmUpLane } from './lane-warm-up';

/**
 * What a lane's `run` returns when its answer is more than an output: the node parks on a
 * person (`park`: an Agent's tool call to approve), or it succeeded with an output whose
 * model usage is not what this invocation spent (`charge`: a resumed Agent's output counts
 * its whole transcript). `usage` is what this invocation spent, charged to the run's budget.
 */
export class LaneAnswer {
  private constructor(
    readonly answer: { park: ParkRequest } | { output: Json },
    readonly usage: JsonObject | undefined,
  ) {}
  static park(request: ParkRequest, usage?: JsonObject): LaneAnswer {
    return new LaneAnswer({ park: request }, usage);
  }
  static output(output: Json, usage?: JsonObject): LaneAnswer {
    return new LaneAnswer({ output }, usage);
  }
}

/** A lane job as a worker gets it: work item and return value in their wire form (wire.ts). */
export type LaneJob = Job<Wire<WorkItem>, Wire<WorkReturn>>;

/** The slice of a pino logger the shell writes to. */
export interface LaneLogger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** The signal of one running invocation; `release` when the call has settled. */
export interface LaneInvocation {
  signal: AbortSignal;
  /**
   * The node's work started at `at` (epoch ms). On a lane whose nodes start at pickup this
   * is called by the shell; an admission-start lane (llm) calls it at the first admission.
   * The report is sent only if the call is still running `startReportDelayMs` later: a
   * quick call's outcome carries its start.
   */
  started(at: number): void;
  /** the first `started` time (epoch ms): the outcome's `startedAt`; null while the node has not started */
  readonly startedAt: number | null;
  release(): void;
}

/** What the lane's `run` gets beside its item. */
export interface LaneRunContext<L extends LaneLogger> {
  job: LaneJob;
  /** the node's signal (deadline, cancel, shutdown) and its start report */
  invocation: LaneInvocation;
  /** the lane's logger bound to the run, node, invocation, attempt and kind */
  log: L;
}

export interface LaneWorkerOptions<L extends LaneLogger = LaneLogger> {
  lane: Lane;
  /** BullMQ connection (`maxRetriesPerRequest: null`); owned by the caller. Duplicated once for the cancel subscription. */
  redis: RedisConnection;
  /** the lane's logger; each job logs through a child bound to its ids */
  logger: L & { child(bindings: Record<string, unknown>): L };
  /** @default DEFAULT_QUEUE_PREFIX */
  prefix?: string;
  /**
   * SHARD_COUNT: reports go to the wake channel of the run's shard, read by its owner alone.
   * Absent: the broadcast wake channel, which every dispatcher reads.
   */
  shardCount?: number;
  /** LANE_CONCURRENCY */
  concurrency: number;
  /** SHUTDOWN_GRACE_MS. @default 10000 */
  shutdownGraceMs?: number;
  /** WORKER_LOCK_MS. @default DEFAULT_WORKER_LOCK_MS */
  lockDurationMs?: number;
  /** clock, epoch ms. @default Date.now */
  now?: () => number;
  /** how long a call runs before its start is reported (its outcome carries it otherwise). @default DEFAULT_START_REPORT_DELAY_MS */
  startReportDelayMs?: number;
  /**
   * BullMQ telemetry (laneTelemetry(), tracing on only): each job is processed inside a
   * `process <queue>` span continuing its dispatch span. @default none (untraced)
   */
  telemetry?: Telemetry;
  /** how often the worker writes its heartbeat for the Workers page (worker-registry.ts), ms. @default DEFAULT_WORKER_HEARTBEAT_MS */
  heartbeatMs?: number;
  /** The lane's typed errors, which its outcome mapping turns into failure classes. */
  errors: {
    cancelled(reason: string | null): Error;
    timeout(): Error;
    /** retryable: the engine runs the node again on another worker */
    interrupted(): Error;
  };
  /** the reason of a failure that is not a FlowlineNodeError (reported NodeFailed) */
  unexpectedFailureReason: string;
  /**
   * Runs one valid work item under `ctx.invocation.signal` and returns the node's output;
   * throws a FlowlineNodeError (its class is reported) or anything else (NodeFailed).
   */
  run(item: WorkItem, ctx: LaneRunContext<L>): Promise<Json | LaneAnswer>;
  /**
   * The lane's own per-item preparation run once at start on a representative item (no IO,
   * no tool or model called), so its first real job does not compile it (lane-warm-up.ts).
   * @default none (only the shared protocol path is warmed)
   */
  warmUp?(item: WorkItem): void;
}

/**
 * What a lane service's own options repeat of the skeleton's: the connection, logger, lane
 * settings and clock its process hands down. The service adds its lane's dependencies and
 * spreads these into {@link createLaneWorker} with its lane, errors and run.
 */
export type LaneWorkerSettings<L extends LaneLogger = LaneLogger> = Pick<
  LaneWorkerOptions<L>,
  'redis' | 'logger' | 'prefix' | 'shardCount' | 'shutdownGraceMs' | 'lockDurationMs' | 'now' | 'telemetry'
> & {
  /** LANE_CONCURRENCY; each lane has its own default */
  concurrency?: number;
};

/** The failure classes the skeleton itself ends a call with. */
export type LaneEndClass = 'Cancelled' | 'Timeout' | 'Interrupted';

/**
 * A lane's {@link LaneWorkerOptions.errors}, worded alike on every lane: `make` builds the
 * lane's own error class, so the outcome mapping reads the lane's codes.
 */
export function laneErrors(make: (failureClass: LaneEndClass, message: string) => Error): LaneWorkerOptions['errors'] {
  return {
    cancelled: (reason) => make('Cancelled', reason === null ? 'the invocation was cancelled' : `the invocation was cancelled: ${reason}`),
    timeout: () => make('Timeout', 'the attempt deadline passed'),
    interrupted: () => make('Interrupted', 'the worker shut down during the call'),
  };
}

/** A node's ids as span attributes (the lane's spans add their own). */
export function nodeSpanIds(item: WorkItem) {
  return {
    'flowline.run.id': item.runId,
    'flowline.node.key': item.nodeKey,
    'flowline.invocation.id': item.invocationId,
    'flowline.node.attempt': item.attempt,
  };
}

export interface LaneWorker {
  /** subscribes to cancellations, then starts taking jobs */
  start(): Promise<void>;
  /** stops taking jobs; lets in-flight calls finish within the grace period, then interrupts them */
  stop(): Promise<void>;
  /** invocations currently running */
  inFlight(): number;
  /** epoch ms of the last job this worker took or finished (its creation time before the first): the stall rule's progress */
  lastProgressAt(): number;
  /** jobs waiting on this worker's lane, taken by no worker yet (wait + prioritized) */
  waitingJobs(): Promise<number>;
  readonly worker: Worker<Wire<WorkItem>, Wire<WorkReturn>>;
}

/** How often a worker says it is alive and what it does (the Workers page); it counts as gone after three. */
export const DEFAULT_WORKER_HEARTBEAT_MS = 5_000;

/** A call still running this long after it started gets its start reported on its own. */
export const DEFAULT_START_REPORT_DELAY_MS = 20;

/** Cancellations remembered for jobs not yet started. */
const RECENT_CANCELS_LIMIT = 10_000;
/** setTimeout's ceiling (~24.8 days). */
const MAX_TIMER_MS = 2_147_483_647;
/** After the grace period and the interrupt, how long a call that ignores its signal is still awaited. */
const ABANDON_AFTER_INTERRUPT_MS = 2_000;

/** The ids of a job payload that may not be a valid work item, or null. */
export function workIdsOf(data: unknown): Omit<WorkReturn, 'outcome'> | null {
  const d = data as Partial<Record<string, unknown>> | null;
  if (d === null || typeof d !== 'object') return null;
  const { runId, nodeKey, invocationId } = d;
  if (typeof runId !== 'string' || typeof nodeKey !== 'string' || typeof invocationId !== 'string') return null;
  return { runId, nodeKey, invocationId };
}

/** Creates (but does not start) a lane worker around `opts.run`. */
export function createLaneWorker<L extends LaneLogger>(opts: LaneWorkerOptions<L>): LaneWorker {
  const prefix = opts.prefix ?? DEFAULT_QUEUE_PREFIX;
  const now = opts.now ?? Date.now;
  const graceMs = opts.shutdownGraceMs ?? 10_000;
  const { lane, logger: log, errors } = opts;
  const subscriber = opts.redis.duplicate();
  const running = new Map<string, AbortController>();
  const recentCancels = new Map<string, string | null>();
  const pendingWakes = new Set<Promise<void>>();
  const startDelayMs = opts.startReportDelayMs ?? DEFAULT_START_REPORT_DELAY_MS;
  let stopping: Promise<void> | null = null;
  let lastProgressAt = now();
  /** read only by readiness once the worker looks idle; shares the caller's connection */
  let backlogQueue: LaneQueue | null = null;

  /** Arms the item's signal; a lane whose nodes start at pickup starts it at `pickedUpAt`. */
  function begin(item: WorkItem, pickedUpAt: number): LaneInvocation {
    const controller = new AbortController();
    running.set(item.invocationId, controller);
    if (recentCancels.has(item.invocationId)) controller.abort(errors.cancelled(recentCancels.get(item.invocationId) ?? null));
    const timer = setTimeout(
      () => controller.abort(errors.timeout()),
      Math.min(Math.max(item.deadlineAt - now(), 0), MAX_TIMER_MS),
    );
    let startTimer: NodeJS.Timeout | null = null;
    let released = false;
    let startedAt: number | null = null;
    const invocation: LaneInvocation = {
      signal: controller.signal,
      get startedAt() {
        return startedAt;
      },
      started(at) {
        startedAt ??= at;
        if (released || startTimer) return;
        const start = { invocationId: item.invocationId, nodeKey: item.nodeKey, at };
        startTimer = setTimeout(() => report({ runId: item.runId, started: start }), startDelayMs);
      },
      release() {
        released = true;
        clearTimeout(timer);
        if (startTimer) clearTimeout(startTimer);
        running.delete(item.invocationId);
      },
    };
    if (!startsOnAdmission(lane)) invocation.started(pickedUpAt);
    return invocation;
  }

  /** One job: parse, run, coerce the error to a failure class, log at debug, return the outcome. */
  async function processJob(job: LaneJob): Promise<WorkReturn> {
    const pickedUpAt = now();
    const parsed = parseWorkItem(job.data);
    if (!parsed.success) {
      const ids = workIdsOf(job.data);
      // Without ids nobody could settle an outcome: that is a broken producer, fail the job.
      if (ids === null) throw new Error('the job payload is not a work item');
      log.warn({ ...ids, jobId: job.id }, `invalid ${lane} job payload`);
      const startedAt = startsOnAdmission(lane) ? null : pickedUpAt;
      return { ...ids, outcome: { ok: false, failureClass: 'ValidationFailed', reason: 'the job payload is not a valid work item', startedAt, finishedAt: now() } };
    }
    const item = parsed.data;
    const ids = { runId: item.runId, nodeKey: item.nodeKey, invocationId: item.invocationId };
    const bindings = { ...ids, attempt: item.attempt, kind: item.kind };
    const jobLog = lazyChild(opts.logger, bindings);
    const invocation = begin(item, pickedUpAt);
    let outcome: WorkOutcome;
    try {
      const output = await opts.run(item, { job, invocation, log: jobLog });
      outcome = outcomeOf(output, invocation.startedAt, now());
    } catch (error) {
      const typed = error instanceof FlowlineNodeError;
      if (!typed) jobLog.error({ err: error }, `unexpected error running a ${lane} node`);
      const reason = typed ? error.message : opts.unexpectedFailureReason;
      outcome = { ok: false, failureClass: typed ? error.failureClass : 'NodeFailed', reason, startedAt: invocation.startedAt, finishedAt: now() };
      // what the attempt spent before it failed (model tokens) still counts against its run's budget
      if (typed && error.usage) outcome.usage = error.usage;
    } finally {
      invocation.release();
    }
    // debug: the hot path writes no line per job at the default level. Written by the lane's
    // logger with the job's ids first, the same line its child would write, without making one.
    opts.logger.debug(
      { ...bindings, ok: outcome.ok, failureClass: outcome.ok === false ? outcome.failureClass : 'None', durationMs: outcome.finishedAt - pickedUpAt },
      `${lane} invocation finished`,
    );
    return { ...ids, outcome };
  }

  const worker = new Worker<Wire<WorkItem>, Wire<WorkReturn>>(queueNameFor(lane), async (job) => toWire(await processJob(job)), {
    connection: opts.redis,
    prefix,
    concurrency: opts.concurrency,
    autorun: false,
    ...laneWorkerOptions(opts.lockDurationMs),
    ...(opts.telemetry ? { telemetry: opts.telemetry } : {}),
  });

  function report(message: WakeMessageWire): void {
    const p = publishWake(opts.redis, message, prefix, opts.shardCount)
      .catch((err: unknown) => log.warn({ err, runId: message.runId }, 'report to the dispatcher failed; its in-flight check heals it'))
      .finally(() => pendingWakes.delete(p));
    pendingWakes.add(p);
  }
  // The return value is stored before 'completed' fires: a report lost on the way is
  // found by the dispatcher's in-flight check in the job itself.
  worker.on('active', () => {
    lastProgressAt = now();
  });
  worker.on('completed', (job) => {
    lastProgressAt = now();
    report({ runId: job.returnvalue.runId, ret: job.returnvalue });
  });
  worker.on('failed', (job, err) => {
    lastProgressAt = now();
    const ids = workIdsOf(job?.data);
    log.error({ ...ids, jobId: job?.id, err }, `${lane} job failed: the worker broke`);
    if (ids) report({ runId: ids.runId, failed: { invocationId: ids.invocationId, reason: err.message, at: now() } });
  });
  // A job whose worker died fails as stalled (maxStalledCount 0) when a surviving worker
  // checks; the job id is the invocation id, and the dispatcher finds its run.
  worker.on('stalled', (jobId) => {
    log.warn({ jobId }, `${lane} job stalled: its worker is gone`);
    report({ failed: { invocationId: jobId, reason: 'the worker holding the job is gone (stalled)', at: now() } });
  });
  worker.on('error', (err) => log.error({ err }, `${lane} worker error`));

  subscriber.on('message', (channel: string, raw: string) => {
    if (channel !== cancelChannel(channelPrefix(prefix, subscriber))) return;
    const message = parseMessage(cancelMessageSchema, raw);
    if (message === null) return;
    recentCancels.set(message.invocationId, message.reason);
    if (recentCancels.size > RECENT_CANCELS_LIMIT) {
      const oldest = recentCancels.keys().next();
      if (!oldest.done) recentCancels.delete(oldest.value);
    }
    const controller = running.get(message.invocationId);
    if (controller && !controller.signal.aborted) {
      log.info({ invocationId: message.invocationId }, `cancelling in-flight ${lane} invocation`);
      controller.abort(errors.cancelled(message.reason));
    }
  });
  subscriber.on('error', (err) => log.warn({ err }, 'cancel subscriber error'));

  const heartbeatMs = opts.heartbeatMs ?? DEFAULT_WORKER_HEARTBEAT_MS;
  const identity = { id: `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`, lane, host: hostname(), pid: process.pid, startedAt: now(), concurrency: opts.concurrency };
  let heartbeat: NodeJS.Timeout | null = null;
  /** Says this worker is alive; a failed write only delays the page (the next beat retries). */
  function beat(): Promise<void> {
    const b: WorkerBeat = { ...identity, beatAt: now(), lastProgressAt, inFlight: running.size };
    return writeWorkerBeat(opts.redis, prefix, b, heartbeatMs * 3).catch((err: unknown) => log.warn({ err }, 'worker heartbeat not written'));
  }

  /** Before the first job: a failed warm-up only leaves its cost to the first jobs. */
  function warmUp(): void {
    try {
      warmUpLane(lane, now(), opts.warmUp);
    } catch (err) {
      log.warn({ err }, `${lane} worker warm-up failed; the first jobs pay it`);
    }
  }

  async function stopOnce(): Promise<void> {
    if (heartbeat) clearInterval(heartbeat);
    await removeWorkerBeat(opts.redis, prefix, lane, identity.id).catch(() => undefined);
    const closing = worker.close().then(() => 'closed' as const);
    let interruptTimer: NodeJS.Timeout | undefined;
    let abandonTimer: NodeJS.Timeout | undefined;
    const abandoned = new Promise<'abandoned'>((resolve) => {
      interruptTimer = setTimeout(() => {
        for (const controller of running.values()) controller.abort(errors.interrupted());
        abandonTimer = setTimeout(() => resolve('abandoned'), ABANDON_AFTER_INTERRUPT_MS);
      }, graceMs);
    });
    const how = await Promise.race([closing, abandoned]);
    clearTimeout(interruptTimer);
    clearTimeout(abandonTimer);
    // An abandoned job keeps its lock until the process exits; with maxStalledCount 0 it then
    // fails as stalled and the dispatcher retries the node as Interrupted.
    if (how === 'abandoned') log.warn({ inFlight: running.size }, `abandoning ${lane} calls that ignored their signal`);
    await Promise.all([...pendingWakes]);
    await backlogQueue?.close();
    await subscriber.quit().catch(() => subscriber.disconnect());
  }

  return {
    worker,
    async start() {
      warmUp();
      await subscriber.subscribe(cancelChannel(channelPrefix(prefix, subscriber)));
      worker.run().catch((err: unknown) => log.error({ err }, `${lane} worker stopped by an error`));
      await worker.waitUntilReady();
      identity.startedAt = now();
      await beat();
      heartbeat = setInterval(() => void beat(), heartbeatMs);
      heartbeat.unref();
    },
    stop() {
      stopping ??= stopOnce();
      return stopping;
    },
    inFlight: () => running.size,
    lastProgressAt: () => lastProgressAt,
    async waitingJobs() {
      backlogQueue ??= createLaneQueue(opts.redis, lane, prefix);
      return readLaneDepth(backlogQueue);
    },
  };
}

/** The outcome of a run's answer: a plain output, or a {@link LaneAnswer}. */
function outcomeOf(answer: Json | LaneAnswer, startedAt: number | null, finishedAt: number): WorkOutcome {
  if (!(answer instanceof LaneAnswer)) return { ok: true, output: answer, startedAt, finishedAt };
  const usage = answer.usage ? { usage: answer.usage } : {};
  if ('park' in answer.answer) return { ok: 'park', request: answer.answer.park, startedAt, finishedAt, ...usage };
  return { ok: true, output: answer.answer.output, startedAt, finishedAt, ...usage };
}
