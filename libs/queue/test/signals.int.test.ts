/**
 * The protocol against real Redis: the job keys it names are the keys BullMQ writes, and the
 * one signal publisher delivers wakes, change pings and cancellations on their channels, in
 * order, as their schemas read them.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { shardOfRun, type WorkItem } from '@flowline/graph';
import { cleanupRedisPrefix, testRedisUrl, uniquePrefix, waitFor } from '@flowline/testing';
import {
  cancelChannel,
  cancelMessageSchema,
  changesChannel,
  runChangesChannel,
  closeLaneQueues,
  createLaneQueues,
  enqueueWork,
  laneJobKey,
  laneJobLockKey,
  parseMessage,
  publishCancellations,
  publishChangePings,
  publishWake,
  publishWakes,
  runChangedPingSchema,
  wakeChannel,
  wakeChannelOf,
  shardWakeChannel,
  wakeMessageSchema,
  type LaneQueues,
} from '../src/index';

const redisUrl = testRedisUrl();
const prefix = uniquePrefix();

describe('the queue protocol against real Redis', () => {
  let redis: Redis;
  let sub: Redis;
  let queues: LaneQueues;
  const heard: { channel: string; raw: string }[] = [];

  beforeAll(async () => {
    redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
    sub = new Redis(redisUrl);
    queues = createLaneQueues(redis, prefix);
    sub.on('message', (channel: string, raw: string) => heard.push({ channel, raw }));
    await sub.subscribe(wakeChannel(prefix), runChangesChannel('a', prefix), runChangesChannel('b', prefix), cancelChannel(prefix));
  });

  afterAll(async () => {
    await closeLaneQueues(queues);
    await sub.quit();
    await redis.quit();
    await cleanupRedisPrefix(prefix, redisUrl);
  });

  it('names the hash BullMQ writes for a lane job, and its lock key beside it', async () => {
    const invocationId = randomUUID();
    const item: WorkItem = {
      lane: 'tool', runId: 'run-1', nodeKey: 'fetch', kind: 'Tool', invocationId, attempt: 1, config: {},
      input: { run: { input: null }, upstream: {}, input: null }, deadlineAt: 1, steering: [], outputSchema: null,
    };
    await enqueueWork(queues, [item]);
    expect(await redis.hget(laneJobKey('tool', invocationId, prefix), 'name')).toBe('Tool');
    expect(await redis.exists(laneJobKey('llm', invocationId, prefix))).toBe(0);
    expect(laneJobLockKey('tool', invocationId, prefix)).toBe(`${laneJobKey('tool', invocationId, prefix)}:lock`);
  });

  it('publishes wakes, change pings (on their run channel) and cancellations on their channels, in order, as their schemas read them', async () => {
    heard.length = 0;
    await publishWakes(redis, [{ runId: 'a' }, { runId: 'b' }, { runId: 'c' }], prefix);
    await publishWake(redis, { failed: { invocationId: 'inv-1', reason: 'gone', at: 5 } }, prefix);
    await publishChangePings(redis, [{ runId: 'a', seq: 3, kind: 'node' }, { runId: 'b', seq: 9, kind: 'gate' }], prefix);
    await publishCancellations(redis, [{ invocationId: 'inv-2', reason: 'run cancelled' }], prefix);
    await publishWakes(redis, [], prefix);
    await waitFor(() => heard.length >= 7, { timeoutMs: 10_000 });
    const read = heard.map(({ channel, raw }) =>
      channel === wakeChannel(prefix) ? ['wake', parseMessage(wakeMessageSchema, raw)]
        : channel.startsWith(`${changesChannel(prefix)}:`) ? ['change', parseMessage(runChangedPingSchema, raw)]
          : ['cancel', parseMessage(cancelMessageSchema, raw)]);
    expect(read).toEqual([
      ['wake', { runId: 'a' }],
      ['wake', { runId: 'b' }],
      ['wake', { runId: 'c' }],
      ['wake', { failed: { invocationId: 'inv-1', reason: 'gone', at: 5 } }],
      ['change', { runId: 'a', seq: 3, kind: 'node' }],
      ['change', { runId: 'b', seq: 9, kind: 'gate' }],
      ['cancel', { invocationId: 'inv-2', reason: 'run cancelled' }],
    ]);
  });

  it('routes a wake naming its run to the channel of the run shard when the sender knows SHARD_COUNT, the rest to the broadcast channel', async () => {
    const shardSub = new Redis(redisUrl);
    const got: { channel: string; raw: string }[] = [];
    shardSub.on('message', (channel: string, raw: string) => got.push({ channel, raw }));
    const runs = ['run-a', 'run-b', 'run-c', 'run-d'];
    await shardSub.subscribe(...Array.from({ length: 4 }, (_, s) => shardWakeChannel(s, prefix)));
    heard.length = 0;
    await publishWakes(redis, runs.map((runId) => ({ runId })), prefix, 4);
    await publishWake(redis, { failed: { invocationId: 'inv-9', reason: 'stalled', at: 1 } }, prefix, 4);
    await waitFor(() => got.length >= 4 && heard.length >= 1, { timeoutMs: 10_000 });
    await shardSub.quit();
    expect(got.map((g) => [g.channel, JSON.parse(g.raw) as unknown])).toEqual(
      runs.map((runId) => [shardWakeChannel(shardOfRun(runId, 4), prefix), { runId }]),
    );
    // nothing naming a run reached the broadcast channel
    expect(heard.map((h) => h.channel)).toEqual([wakeChannel(prefix)]);
    expect(wakeChannelOf('run-a', undefined, prefix)).toBe(wakeChannel(prefix));
  });
});
