/**
 * The tool lane worker: takes `node.tool` jobs, runs the named tool under an
 * AbortSignal that fires on the attempt deadline (Timeout), on a cancellation from
 * the cancel channel (Cancelled) or at shutdown (Interrupted), and returns the
 * outcome as the job's return value. Tool failures never throw out of a job: a
 * failed BullMQ job means the worker itself broke. After a job finishes the worker
 * publishes a wake for its run so the owning dispatcher settles it at once.
 */
import { Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { WorkItem, WorkOutcome } from '@flowline/graph';
import {
  DEFAULT_QUEUE_PREFIX,
  laneWorkerOptions,
  cancelChannel,
  cancelMessageSchema,
  parseMessage,
  publishWake,
  queueNameFor,
  workItemSchema,
  type WorkReturn,
} from '@flowline/queue';
import { ToolError, toolFailed, toolInvalid, type ToolRegistry } from '@flowline/tools';
import { resolveToolCall } from './tool-call';

export interface ToolWorkerOptions {
  /** BullMQ connection (`maxRetriesPerRequest: null`); owned by the caller. Duplicated once for the cancel subscription. */
  redis: Redis;
  registry: ToolRegistry;
  logger: Logger;
  /** @default DEFAULT_QUEUE_PREFIX */
  prefix?: string;
  /** LANE_CONCURRENCY. @default 16 */
  concurrency?: number;
  /** SHUTDOWN_GRACE_MS: in-flight calls get this long at stop before they are aborted as Interrupted. @default 10000 */
  shutdownGraceMs?: number;
  /** WORKER_LOCK_MS: BullMQ job lock; a killed worker's job is noticed within about this long. @default DEFAULT_WORKER_LOCK_MS */
  lockDurationMs?: number;
  /** clock, epoch ms. @default Date.now */
  now?: () => number;
}

export interface ToolWorker {
  /** subscribes to cancellations, then starts taking jobs */
  start(): Promise<void>;
  /** stops taking jobs; lets in-flight calls finish within the grace period, then interrupts them */
  stop(): Promise<void>;
  /** invocations currently running */
  inFlight(): number;
  readonly worker: Worker<WorkItem, WorkReturn>;
}

/** Cancellations remembered for jobs not yet started (a cancel can overtake its job). */
const RECENT_CANCELS_LIMIT = 10_000;
/** setTimeout's ceiling (~24.8 days). */
const MAX_TIMER_MS = 2_147_483_647;
/** After the grace period and the interrupt, how long a call that ignores its signal is still awaited. */
const ABANDON_AFTER_INTERRUPT_MS = 2_000;

function idsOf(data: unknown): Omit<WorkReturn, 'outcome'> | null {
  const d = data as Partial<Record<string, unknown>> | null;
  if (d === null || typeof d !== 'object') return null;
  const { runId, nodeKey, invocationId } = d;
  if (typeof runId !== 'string' || typeof nodeKey !== 'string' || typeof invocationId !== 'string') return null;
  return { runId, nodeKey, invocationId };
}

/** Creates (but does not start) a tool lane worker. */
export function createToolWorker(opts: ToolWorkerOptions): ToolWorker {
  const prefix = opts.prefix ?? DEFAULT_QUEUE_PREFIX;
  const now = opts.now ?? Date.now;
  const graceMs = opts.shutdownGraceMs ?? 10_000;
  const log = opts.logger;
  const subscriber = opts.redis.duplicate();
  const running = new Map<string, AbortController>();
  const recentCancels = new Map<string, string | null>();
  const pendingWakes = new Set<Promise<void>>();
  let stopping: Promise<void> | null = null;

  const failure = (error: ToolError, startedAt: number): WorkOutcome => ({
    ok: false,
    failureClass: error.failureClass,
    reason: error.message,
    startedAt,
    finishedAt: now(),
  });

  async function execute(item: WorkItem, startedAt: number, signal: AbortSignal, jobLog: Logger): Promise<WorkOutcome> {
    if (item.lane !== 'tool' || item.kind !== 'Tool') throw toolInvalid(`a ${item.kind} node cannot run on the tool lane`);
    if (item.deadlineAt <= now()) throw new ToolError('Timeout', 'the attempt deadline passed before the tool started');
    const call = resolveToolCall(item.config, item.input);
    const result = await opts.registry.invoke(call.toolName, call.args, {
      signal,
      allowedUrls: call.allowedUrls,
      attempt: item.attempt,
      invocationId: item.invocationId,
      logger: jobLog,
    });
    return { ok: true, output: { result }, startedAt, finishedAt: now() };
  }

  async function processJob(job: Job<WorkItem, WorkReturn>): Promise<WorkReturn> {
    const startedAt = now();
    const parsed = workItemSchema.safeParse(job.data);
    if (!parsed.success) {
      const ids = idsOf(job.data);
      // Without ids nobody could settle an outcome: that is a broken producer, fail the job.
      if (ids === null) throw new Error('the job payload is not a work item');
      log.warn({ ...ids, jobId: job.id }, 'invalid tool job payload');
      return { ...ids, outcome: failure(toolInvalid('the job payload is not a valid work item'), startedAt) };
    }
    const item = parsed.data;
    const ids = { runId: item.runId, nodeKey: item.nodeKey, invocationId: item.invocationId };
    const jobLog = log.child({ ...ids, attempt: item.attempt });
    const controller = new AbortController();
    running.set(item.invocationId, controller);
    if (recentCancels.has(item.invocationId)) {
      controller.abort(cancelledError(recentCancels.get(item.invocationId) ?? null));
    }
    const timer = setTimeout(
      () => controller.abort(new ToolError('Timeout', 'the attempt deadline passed')),
      Math.min(Math.max(item.deadlineAt - now(), 0), MAX_TIMER_MS),
    );
    let outcome: WorkOutcome;
    try {
      outcome = await execute(item, startedAt, controller.signal, jobLog);
    } catch (error) {
      outcome = failure(error instanceof ToolError ? error : toolFailed('the tool worker failed to run the tool', error), startedAt);
      if (!(error instanceof ToolError)) jobLog.error({ err: error }, 'unexpected error running a tool');
    } finally {
      clearTimeout(timer);
      running.delete(item.invocationId);
    }
    jobLog.info(
      { ok: outcome.ok, failureClass: outcome.ok ? 'None' : outcome.failureClass, durationMs: outcome.finishedAt - startedAt },
      'tool invocation finished',
    );
    return { ...ids, outcome };
  }

  const worker = new Worker<WorkItem, WorkReturn>(queueNameFor('tool'), processJob, {
    connection: opts.redis,
    prefix,
    concurrency: opts.concurrency ?? 16,
    autorun: false,
    ...laneWorkerOptions(opts.lockDurationMs),
  });

  const wake = (runId: string): void => {
    const p = publishWake(opts.redis, { runId }, prefix)
      .catch((err: unknown) => log.warn({ err, runId }, 'wake publish failed'))
      .finally(() => pendingWakes.delete(p));
    pendingWakes.add(p);
  };
  worker.on('completed', (job) => wake(job.returnvalue.runId));
  worker.on('failed', (job, err) => {
    const ids = idsOf(job?.data);
    log.error({ ...ids, jobId: job?.id, err }, 'tool job failed: the worker broke');
    if (ids) wake(ids.runId);
  });
  worker.on('error', (err) => log.error({ err }, 'tool worker error'));

  subscriber.on('message', (channel: string, raw: string) => {
    if (channel !== cancelChannel(prefix)) return;
    const message = parseMessage(cancelMessageSchema, raw);
    if (message === null) return;
    recentCancels.set(message.invocationId, message.reason);
    if (recentCancels.size > RECENT_CANCELS_LIMIT) {
      const oldest = recentCancels.keys().next();
      if (!oldest.done) recentCancels.delete(oldest.value);
    }
    const controller = running.get(message.invocationId);
    if (controller && !controller.signal.aborted) {
      log.info({ invocationId: message.invocationId }, 'cancelling in-flight tool invocation');
      controller.abort(cancelledError(message.reason));
    }
  });
  subscriber.on('error', (err) => log.warn({ err }, 'cancel subscriber error'));

  async function stopOnce(): Promise<void> {
    const closing = worker.close().then(() => 'closed' as const);
    let interruptTimer: NodeJS.Timeout | undefined;
    let abandonTimer: NodeJS.Timeout | undefined;
    const abandoned = new Promise<'abandoned'>((resolve) => {
      interruptTimer = setTimeout(() => {
        // Interrupted is retryable: the engine runs the node again on another worker.
        for (const controller of running.values()) controller.abort(new ToolError('Interrupted', 'the worker shut down during the call'));
        abandonTimer = setTimeout(() => resolve('abandoned'), ABANDON_AFTER_INTERRUPT_MS);
      }, graceMs);
    });
    const how = await Promise.race([closing, abandoned]);
    clearTimeout(interruptTimer);
    clearTimeout(abandonTimer);
    // An abandoned job keeps its lock until the process exits; with maxStalledCount 0 it then
    // fails as stalled and the dispatcher retries the node as Interrupted.
    if (how === 'abandoned') log.warn({ inFlight: running.size }, 'abandoning tool calls that ignored their signal');
    await Promise.all([...pendingWakes]);
    await subscriber.quit().catch(() => subscriber.disconnect());
  }

  return {
    worker,
    async start() {
      await subscriber.subscribe(cancelChannel(prefix));
      worker.run().catch((err: unknown) => log.error({ err }, 'tool worker stopped by an error'));
      await worker.waitUntilReady();
    },
    stop() {
      stopping ??= stopOnce();
      return stopping;
    },
    inFlight: () => running.size,
  };
}

function cancelledError(reason: string | null): ToolError {
  return new ToolError('Cancelled', reason === null ? 'the invocation was cancelled' : `the invocation was cancelled: ${reason}`);
}
