import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeLaneQueues, createLaneQueues, enqueueWork, type LaneQueues } from '@flowline/queue';
import { cleanupRedisPrefix, startFakeLlm, testRedisUrl, uniquePrefix, waitFor, type FakeLlmServer } from '@flowline/testing';
import { llmItem, returnValueOf, spawnLlmWorker } from './helpers';

const prefix = uniquePrefix();
const url = testRedisUrl();
function startWorker(baseUrl: string, graceMs: number) {
  return spawnLlmWorker({ REDIS_URL: url, QUEUE_PREFIX: prefix, LLM_BASE_URL: baseUrl, LLM_MODEL: 'm', SHUTDOWN_GRACE_MS: String(graceMs) });
}

describe('worker-llm process shutdown', () => {
  let fake: FakeLlmServer;
  let producer: Redis;
  let queues: LaneQueues;

  beforeAll(async () => {
    fake = await startFakeLlm();
    producer = new Redis(url, { maxRetriesPerRequest: null });
    queues = createLaneQueues(producer, prefix);
  });

  afterAll(async () => {
    await closeLaneQueues(queues);
    await producer.quit();
    await fake.close();
    await cleanupRedisPrefix(prefix, url);
  });

  it('interrupts a model call still streaming when the grace period ends, reports Interrupted, aborts the request and exits 0', async () => {
    fake.enqueue({ hang: true, content: 'thinking' });
    const { child, exited } = await startWorker(fake.url, 300);
    const item = llmItem('LlmCall', { prompt: 'x' });
    await enqueueWork(queues, [item]);
    await waitFor(() => fake.inFlight() > 0, { description: 'request in flight' });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect((await returnValueOf(queues, item.invocationId)).outcome).toMatchObject({ ok: false, failureClass: 'Interrupted' });
    await waitFor(() => fake.requests[0]?.aborted === true, { description: 'the fake saw the request aborted' });
  });

  it('lets an in-flight call finish within the grace period, then exits 0', async () => {
    fake.enqueue({ content: 'late but fine', delayMs: 400 });
    const { child, exited } = await startWorker(fake.url, 20_000);
    const item = llmItem('LlmCall', { prompt: 'x' });
    await enqueueWork(queues, [item]);
    await waitFor(() => fake.inFlight() > 0, { description: 'request in flight' });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect((await returnValueOf(queues, item.invocationId)).outcome).toMatchObject({ ok: true, output: { text: 'late but fine' } });
  });
});
