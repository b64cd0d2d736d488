import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import type { WorkItem } from '@flowline/graph';
import { cleanupRedisPrefix, testRedisUrl, uniquePrefix } from '@flowline/testing';
import { closeLaneQueues, createLaneQueues, enqueueWork, type LaneQueues } from '../src/index';

const redisUrl = testRedisUrl();
const prefix = uniquePrefix();

function workItem(lane: 'llm' | 'tool', invocationId: string): WorkItem {
  return {
    lane,
    runId: 'run-1',
    nodeKey: lane === 'tool' ? 'fetch' : 'ask',
    kind: lane === 'tool' ? 'Tool' : 'LlmCall',
    invocationId,
    attempt: 1,
    config: {},
    input: { run: { input: null }, upstream: {}, input: null },
    deadlineAt: Date.now() + 60_000,
    steering: [],
    outputSchema: null,
  };
}

describe('enqueueWork against real Redis', () => {
  let redis: Redis;
  let queues: LaneQueues;

  beforeAll(() => {
    redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
    queues = createLaneQueues(redis, prefix);
  });

  afterAll(async () => {
    await closeLaneQueues(queues);
    await redis.quit();
    await cleanupRedisPrefix(prefix, redisUrl);
  });

  it('creates one job per invocation id when the same items are added twice', async () => {
    const a = randomUUID();
    const b = randomUUID();
    await enqueueWork(queues, [workItem('tool', a), workItem('llm', b)]);
    await enqueueWork(queues, [workItem('tool', a), workItem('llm', b)]);

    expect(await queues.tool.getJobCounts('waiting')).toEqual({ waiting: 1 });
    expect(await queues.llm.getJobCounts('waiting')).toEqual({ waiting: 1 });
    const job = await queues.tool.getJob(a);
    expect(job?.data.invocationId).toBe(a);
    expect(job?.opts.attempts).toBe(1);
  });

  it('keeps every key of a lane under the hash-tagged prefix', async () => {
    const keys = await redis.keys(`${prefix}:node.tool:*`);
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.every((k) => k.startsWith(prefix))).toBe(true);
  });
});
