/**
 * Lane workers' heartbeats against real Redis: a started worker is listed with its identity,
 * concurrency, what runs on it and its last progress; a job it takes moves its progress and
 * shows in flight; a stopped worker is gone at once, and a worker that stops beating (a
 * process killed) drops out when its heartbeat expires.
 */
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { silent, testLaneErrors, toolItem } from './lane-fixtures';
import { cleanupRedisPrefix, testRedisUrl, uniquePrefix, waitFor } from '@flowline/testing';
import { closeLaneQueues, createLaneQueues, createLaneWorker, readWorkerBeats, writeWorkerBeat, type LaneQueues } from '../src/index';

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
  await cleanupRedisPrefix(prefix, redisUrl);
  redis.disconnect();
});


describe('worker heartbeats', () => {
  it('lists a running worker with what it runs and its progress, and drops it when it stops', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    const worker = createLaneWorker({
      lane: 'tool',
      redis,
      logger: silent,
      prefix,
      concurrency: 3,
      heartbeatMs: 100,
      errors: testLaneErrors,
      unexpectedFailureReason: 'the test lane failed',
      async run() {
        await held;
        return { ok: true };
      },
    });
    await worker.start();
    try {
      const [first] = await readWorkerBeats(redis, prefix, 'tool', Date.now());
      expect(first).toMatchObject({ lane: 'tool', host: hostname(), pid: process.pid, concurrency: 3, inFlight: 0 });
      expect(first!.id).toMatch(new RegExp(`^${hostname()}:${process.pid}:[0-9a-f]{6}$`));
      expect(await readWorkerBeats(redis, prefix, 'llm', Date.now())).toEqual([]);

      const item = toolItem();
      await queues.tool.add('Tool', item, { jobId: item.invocationId });
      await waitFor(async () => (await readWorkerBeats(redis, prefix, 'tool', Date.now()))[0]?.inFlight === 1, { timeoutMs: 5_000, description: 'the job shows in flight' });
      const busy = (await readWorkerBeats(redis, prefix, 'tool', Date.now()))[0]!;
      expect(busy.lastProgressAt).toBeGreaterThan(first!.lastProgressAt - 1);
      expect(busy.beatAt).toBeGreaterThan(first!.beatAt);
      release();
    } finally {
      release();
      await worker.stop();
    }
    expect(await readWorkerBeats(redis, prefix, 'tool', Date.now())).toEqual([]);
  });

  it('drops a worker whose heartbeat expired (a process killed without stopping)', async () => {
    const now = Date.now();
    const beat = { id: 'gone:1:abcdef', lane: 'llm' as const, host: 'gone', pid: 1, startedAt: now - 10_000, beatAt: now - 1_000, lastProgressAt: now - 5_000, inFlight: 2, concurrency: 4 };
    await writeWorkerBeat(redis, prefix, beat, 500);
    await writeWorkerBeat(redis, prefix, { ...beat, id: 'alive:2:abcdef', host: 'alive', beatAt: now }, 60_000);
    expect((await readWorkerBeats(redis, prefix, 'llm', now)).map((b) => b.id)).toEqual(['alive:2:abcdef']);
    // the expired one is removed, not only hidden
    expect(await redis.hexists(`${prefix}:workers:llm:beats`, 'gone:1:abcdef')).toBe(0);
  });
});
