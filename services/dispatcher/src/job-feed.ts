/**
 * What tells the dispatcher that a run needs a tick: the wake channel. A message without a
 * report is a change in the store (API intent, operator action, child run, peer
 * dispatcher). A lane worker's message reports its job: the outcome (`ret`, sent once
 * BullMQ stored the return value), the start (sent only for a call still running
 * `startReportDelayMs` after it started, so a quick call's outcome carries its start), or
 * a failure (the worker threw, or died and its job stalled: Interrupted).
 *
 * On the tool lane a node starts at pickup. On a lane of ADMISSION_START_LANES (llm) a
 * job a worker took may still wait for provider capacity and its node must keep reading
 * Queued meanwhile: the worker reports the start at the job's first admission. Waiting
 * spends nothing: the attempt was counted when the node was queued, the deadline counts
 * from then, and a cancel reaches the waiting worker on the cancel channel.
 *
 * Channels: the wake channel of every shard this replica holds (`shardWakeChannel`, joined on
 * shard gain BEFORE the gained shards are reconciled, left on loss), so a report of a run
 * reaches its owner alone; plus the broadcast `wakeChannel` for the few messages that cannot
 * name a shard (a stalled job's failure, a sender without SHARD_COUNT).
 *
 * Reports are hints on pub/sub: a lost one is healed by the periodic in-flight check,
 * which reads the job itself (return value, lock, the worker's admission progress).
 * BullMQ's QueueEvents stream is not read: every dispatcher would parse every event of
 * every job of every lane (added, waiting, active, completed, drained, …) to find the
 * few of its own runs, which cost as much CPU per hop as the owner's whole tick.
 */
import type { RedisConnection } from '@flowline/queue';
import { channelPrefix, parseWakeMessage, shardWakeChannel, wakeChannel } from '@flowline/queue';
import type { WorkReturn } from '@flowline/queue';
import type { Logger } from 'pino';

/** Where an invocation belongs, when the report names it. */
export interface ReportRef {
  runId: string;
  nodeKey: string;
}

export interface JobFeedHandlers {
  /** the run (of `tenantId`, when the publisher named it) changed in the store */
  wake(runId: string, tenantId?: string): void;
  /** the invocation's node started (Queued → Running) at `at` */
  started(invocationId: string, at: number, ref: ReportRef): void;
  completed(ret: WorkReturn): void;
  /** the invocation's job failed; `runId` is absent when the worker could not name it (stalled job) */
  failed(invocationId: string, reason: string, at: number, runId: string | null): void;
}

export class JobFeed {
  private subscriber: RedisConnection | null = null;
  private messages = 0;
  /** the channels' prefix: the queue prefix on this connection's database (pub/sub ignores the database) */
  private readonly ns: string;

  constructor(
    /** the dispatcher's connection; the feed subscribes on a duplicate of it (same server or cluster) */
    private readonly redis: RedisConnection,
    prefix: string,
    private readonly handlers: JobFeedHandlers,
    private readonly log: Logger,
  ) {
    this.ns = channelPrefix(prefix, redis);
  }

  /** Messages received on any wake channel since start. */
  get received(): number {
    return this.messages;
  }

  async start(): Promise<void> {
    const sub = this.redis.duplicate();
    this.subscriber = sub;
    sub.on('error', (err) => this.log.warn({ err }, 'wake subscriber error'));
    sub.on('message', (_channel: string, raw: string) => {
      this.messages++;
      const msg = parseWakeMessage(raw);
      if (!msg) return;
      if (msg.ret) this.handlers.completed(msg.ret);
      else if (msg.started && msg.runId) {
        const s = msg.started;
        this.handlers.started(s.invocationId, s.at, { runId: msg.runId, nodeKey: s.nodeKey });
      } else if (msg.failed) this.handlers.failed(msg.failed.invocationId, msg.failed.reason, msg.failed.at, msg.runId ?? null);
      else if (msg.runId) this.handlers.wake(msg.runId, msg.tenantId);
    });
    await sub.subscribe(wakeChannel(this.ns));
  }

  /** Joins the wake channels of `shards` (on gain); resolves once Redis confirmed. */
  async joinShards(shards: readonly number[]): Promise<void> {
    if (shards.length === 0 || !this.subscriber) return;
    await this.subscriber.subscribe(...shards.map((s) => shardWakeChannel(s, this.ns)));
  }

  /** Leaves the wake channels of `shards` (on loss); a failure is logged, the handlers' ownership check still drops their messages. */
  leaveShards(shards: readonly number[]): void {
    if (shards.length === 0 || !this.subscriber) return;
    this.subscriber
      .unsubscribe(...shards.map((s) => shardWakeChannel(s, this.ns)))
      .catch((err: unknown) => this.log.warn({ err, shards }, 'leaving shard wake channels failed'));
  }

  async stop(): Promise<void> {
    this.subscriber?.disconnect();
    this.subscriber = null;
  }
}
