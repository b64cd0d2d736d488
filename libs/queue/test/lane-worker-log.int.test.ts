/**
 * What a lane worker logs per job on real Redis: a job whose call never logs makes no child
 * logger, and the job's debug line still carries its ids.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { cleanupRedisPrefix, testRedisUrl, uniquePrefix, waitFor } from '@flowline/testing';
import { closeLaneQueues, createLaneQueues, createLaneWorker, enqueueWork, type LaneQueues } from '../src/index';
import { testLaneErrors, toolItem } from './lane-fixtures';

const redisUrl = testRedisUrl();
const prefix = uniquePrefix();
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

it('makes no child logger for a job whose call does not log, and writes its debug line with the job ids', async () => {
  const children: Record<string, unknown>[] = [];
  const debug: { obj: object; msg: string }[] = [];
  const logger = {
    debug: (obj: object, msg: string) => void debug.push({ obj, msg }),
    info() {},
    warn() {},
    error() {},
    child(bindings: Record<string, unknown>) {
      children.push(bindings);
      return logger;
    },
  };
  const worker = createLaneWorker({
    lane: 'tool',
    redis,
    logger,
    prefix,
    concurrency: 1,
    errors: testLaneErrors,
    unexpectedFailureReason: 'broke',
    run: async () => ({ done: true }),
  });
  const item = toolItem({ attempt: 2 });
  try {
    await worker.start();
    await enqueueWork(queues, [item]);
    await waitFor(() => debug.length > 0, { timeoutMs: 10_000, description: 'the job debug line' });
  } finally {
    await worker.stop();
  }
  expect(children).toEqual([]);
  expect(debug).toEqual([
    {
      obj: { runId: item.runId, nodeKey: item.nodeKey, invocationId: item.invocationId, attempt: 2, kind: 'Tool', ok: true, failureClass: 'None', durationMs: expect.any(Number) as number },
      msg: 'tool invocation finished',
    },
  ]);
});
