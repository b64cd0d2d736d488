/**
 * What tells the dispatcher that a run needs a tick: the wake channel (API intents,
 * worker completions, peer dispatchers) and BullMQ QueueEvents of every lane
 * (a start, completed → outcome from the return value, failed → the worker died or
 * threw: Interrupted). Events are hints; a missed one is healed by the periodic
 * in-flight check against BullMQ.
 *
 * A start (Queued → Running) is BullMQ's `active` on the tool lane. On a lane of
 * ADMISSION_START_LANES (llm) a job a worker took may still wait for provider capacity,
 * and the node must keep reading Queued meanwhile: there the start is the worker's
 * `admitted` job progress, which the LLM worker writes at its first admission whether it
 * had to wait or not. Waiting this way spends nothing: the attempt was counted when the
 * node was queued, the deadline counts from then, and a cancel reaches the waiting
 * worker on the cancel channel as it would a running one.
 */
import { QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import type { Lane } from '@flowline/graph';
import {
  LANES,
  admittedAt,
  parseMessage,
  queueNameFor,
  startsOnAdmission,
  wakeChannel,
  wakeMessageSchema,
  workReturnSchema,
} from '@flowline/queue';
import type { WorkReturn } from '@flowline/queue';
import type { Logger } from 'pino';

export interface JobFeedHandlers {
  wake(runId: string): void;
  /** the invocation's node started (Queued → Running) at `at` */
  started(invocationId: string, at: number): void;
  completed(ret: WorkReturn): void;
  failed(invocationId: string, reason: string, at: number): void;
}

export class JobFeed {
  private subscriber: Redis | null = null;
  private readonly events: QueueEvents[] = [];
  private readonly connections: Redis[] = [];

  constructor(
    private readonly redisUrl: string,
    private readonly prefix: string,
    private readonly handlers: JobFeedHandlers,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    const sub = new Redis(this.redisUrl, { maxRetriesPerRequest: null });
    this.subscriber = sub;
    sub.on('error', (err) => this.log.warn({ err }, 'wake subscriber error'));
    sub.on('message', (_channel: string, raw: string) => {
      const msg = parseMessage(wakeMessageSchema, raw);
      if (msg) this.handlers.wake(msg.runId);
    });
    await sub.subscribe(wakeChannel(this.prefix));
    await Promise.all(LANES.map((lane) => this.listen(lane)));
  }

  async stop(): Promise<void> {
    await Promise.allSettled(this.events.map((e) => e.close()));
    this.subscriber?.disconnect();
    for (const c of this.connections) c.disconnect();
  }

  private async listen(lane: Lane): Promise<void> {
    const connection = new Redis(this.redisUrl, { maxRetriesPerRequest: null });
    connection.on('error', (err) => this.log.warn({ err, lane }, 'queue events connection error'));
    this.connections.push(connection);
    const qe = new QueueEvents(queueNameFor(lane), { connection, prefix: this.prefix });
    qe.on('error', (err) => this.log.warn({ err, lane }, 'queue events error'));
    if (startsOnAdmission(lane)) {
      qe.on('progress', ({ jobId, data }) => {
        const at = admittedAt(data);
        if (at !== null) this.handlers.started(jobId, at);
      });
    } else {
      qe.on('active', ({ jobId }) => this.handlers.started(jobId, Date.now()));
    }
    qe.on('completed', ({ returnvalue }) => {
      const ret = workReturnSchema.safeParse(returnvalue);
      if (ret.success) this.handlers.completed(ret.data);
      else this.log.warn({ lane }, 'completed job without a valid return value');
    });
    qe.on('failed', ({ jobId, failedReason }) => this.handlers.failed(jobId, failedReason, Date.now()));
    this.events.push(qe);
    await qe.waitUntilReady();
  }
}
