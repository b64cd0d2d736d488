/**
 * The one publisher of Flowline's pub/sub signals: wakes (`wakeChannel`), change pings
 * (`runChangesChannel`) and cancellations (`cancelChannel`). Every sender — the API after an
 * intent commits, a dispatcher after its commit, a lane worker with its job's report —
 * publishes through these functions, so a channel and its message shape are written in one
 * place. Transport-free: the connection is anything with `publish` and `pipeline` (an ioredis
 * client), so this module imports neither ioredis nor BullMQ. Channels carry the connection's
 * database index (`channelPrefix`): pub/sub is server-wide, whatever the database.
 */
import { DEFAULT_QUEUE_PREFIX, cancelChannel, channelPrefix, wakeChannelOf } from './names';
import { runChangesChannel, type RunChangedPing } from './live';
import type { CancelMessage, WakeMessageWire } from './schemas';

/** A batch of publishes sent in one round trip (an ioredis pipeline). */
export interface SignalBatch {
  publish(channel: string, message: string): unknown;
  exec(): Promise<unknown>;
}

/** What a signal is published on (an ioredis client). */
export interface SignalConnection {
  publish(channel: string, message: string): Promise<unknown>;
  pipeline(): SignalBatch;
}

async function publishAll(redis: SignalConnection, channel: string, messages: readonly object[]): Promise<void> {
  if (messages.length === 0) return;
  if (messages.length === 1) {
    await redis.publish(channel, JSON.stringify(messages[0]));
    return;
  }
  const batch = redis.pipeline();
  for (const message of messages) batch.publish(channel, JSON.stringify(message));
  await batch.exec();
}

/**
 * Publishes wake messages: `{ runId }` says a run changed in the store (API intent, operator,
 * child, peer dispatcher); a lane worker's message also carries its job's report (outcome in
 * its wire form, start or failure). With `shardCount` (SHARD_COUNT) each message naming its
 * run goes to the channel of the run's shard, which only that shard's owner reads
 * (`shardWakeChannel`); the rest go to the broadcast `wakeChannel`. One round trip for any
 * number of messages.
 */
export async function publishWakes(
  redis: SignalConnection,
  messages: readonly WakeMessageWire[],
  prefix: string = DEFAULT_QUEUE_PREFIX,
  shardCount?: number,
): Promise<void> {
  if (messages.length === 0) return;
  if (messages.length === 1) {
    await publishWake(redis, messages[0]!, prefix, shardCount);
    return;
  }
  const ns = channelPrefix(prefix, redis);
  const batch = redis.pipeline();
  for (const m of messages) batch.publish(wakeChannelOf(m.runId, shardCount, ns), JSON.stringify(m));
  await batch.exec();
}

/** Publishes one wake message (see {@link publishWakes}). */
export async function publishWake(
  redis: SignalConnection,
  message: WakeMessageWire,
  prefix: string = DEFAULT_QUEUE_PREFIX,
  shardCount?: number,
): Promise<void> {
  await redis.publish(wakeChannelOf(message.runId, shardCount, channelPrefix(prefix, redis)), JSON.stringify(message));
}

/**
 * Publishes content-free change pings `{ runId, seq, kind }` after the commit that wrote their
 * events, each on its run's channel (`runChangesChannel`): only the API replicas with a
 * subscriber on the run receive it and relay it to their sockets and SSE streams.
 */
export async function publishChangePings(redis: SignalConnection, pings: readonly RunChangedPing[], prefix: string = DEFAULT_QUEUE_PREFIX): Promise<void> {
  if (pings.length === 0) return;
  const ns = channelPrefix(prefix, redis);
  if (pings.length === 1) {
    await redis.publish(runChangesChannel(pings[0]!.runId, ns), JSON.stringify(pings[0]));
    return;
  }
  const batch = redis.pipeline();
  for (const ping of pings) batch.publish(runChangesChannel(ping.runId, ns), JSON.stringify(ping));
  await batch.exec();
}

/** Publishes cancellations for in-flight invocations (every lane worker aborts a matching call). */
export async function publishCancellations(redis: SignalConnection, messages: readonly CancelMessage[], prefix: string = DEFAULT_QUEUE_PREFIX): Promise<void> {
  await publishAll(redis, cancelChannel(channelPrefix(prefix, redis)), messages);
}
