import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeLaneQueues, createLaneQueues, enqueueWork, type LaneQueues } from '@flowline/queue';
import { cleanupRedisPrefix, testRedisUrl, uniquePrefix } from '@flowline/testing';
import { createToolRegistry } from '@flowline/tools';
import { createProviderRegistry } from '../src/providers/registry';
import { createLlmWorker, type LlmWorker } from '../src/worker';
import { llmItem, returnValueOf } from './helpers';

const prefix = uniquePrefix();
const url = testRedisUrl();

const canonicalAgent = {
  instructions: 'Summarise the request and say whether it needs a human review.',
  tools: ['read_file'],
  responseJsonSchema: {
    type: 'object',
    properties: { requiresReview: { type: 'boolean' } },
    required: ['requiresReview'],
    additionalProperties: false,
  },
  includeUpstreamOutputs: true,
};

describe('llm worker without LLM_BASE_URL (built-in scripted provider)', () => {
  let redis: Redis;
  let producer: Redis;
  let queues: LaneQueues;
  let worker: LlmWorker;

  async function run(item: ReturnType<typeof llmItem>) {
    await enqueueWork(queues, [item]);
    return (await returnValueOf(queues, item.invocationId)).outcome;
  }

  beforeAll(async () => {
    redis = new Redis(url, { maxRetriesPerRequest: null });
    producer = new Redis(url, { maxRetriesPerRequest: null });
    const tools = await createToolRegistry({});
    worker = createLlmWorker({ redis, providers: createProviderRegistry({}), tools, logger: pino({ level: 'silent' }), prefix });
    await worker.start();
    queues = createLaneQueues(producer, prefix);
  });

  afterAll(async () => {
    await worker.stop();
    await closeLaneQueues(queues);
    await Promise.all([redis.quit(), producer.quit()]);
    await cleanupRedisPrefix(prefix, url);
  });

  it('runs the canonical Agent to the minimal valid answer, marked model "scripted", the same way twice', async () => {
    const first = await run(llmItem('Agent', canonicalAgent));
    const second = await run(llmItem('Agent', canonicalAgent));
    expect(first).toMatchObject({ ok: true, output: { json: { requiresReview: false }, toolCalls: [], usage: { model: 'scripted', finishReason: 'stop' } } });
    expect(second.ok === true && second.output).toMatchObject({ text: first.ok === true ? (first.output as { text: string }).text : null });
  });

  it('decides the first label with confidence 1, so a minConfidence is met', async () => {
    const outcome = await run(llmItem('DecisionModel', { question: 'Route?', labels: ['left', 'right'], minConfidence: 0.9 }));
    expect(outcome).toMatchObject({ ok: true, output: { choice: 'left', confidence: 1, held: false, provider: 'llm', usage: { model: 'scripted' } } });
  });

  it('answers an LlmCall with deterministic text derived from the prompt', async () => {
    const a = await run(llmItem('LlmCall', { prompt: 'one' }));
    const b = await run(llmItem('LlmCall', { prompt: 'one' }));
    const c = await run(llmItem('LlmCall', { prompt: 'two' }));
    const text = (o: typeof a) => (o.ok === true ? (o.output as { text: string }).text : null);
    expect(text(a)).toMatch(/^scripted answer [0-9a-f]{12}$/);
    expect(text(a)).toBe(text(b));
    expect(text(a)).not.toBe(text(c));
  });

  it('refuses a kind the llm lane does not run, ValidationFailed', async () => {
    const outcome = await run(llmItem('Tool', { toolName: 'echo' }));
    expect(outcome).toMatchObject({ ok: false, failureClass: 'ValidationFailed' });
  });
});
