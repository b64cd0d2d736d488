import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closeLaneQueues, createLaneQueues, enqueueWork, type LaneQueues } from '@flowline/queue';
import { cleanupRedisPrefix, startFakeLlm, testRedisUrl, uniquePrefix, waitFor, type FakeLlmServer, type ServiceProcess } from '@flowline/testing';
import { llmItem, returnValueOf, spawnLlmWorker } from './helpers';

const url = testRedisUrl();

/** A port nothing listens on (yet). */
async function unusedPort(): Promise<number> {
  const probe = await startFakeLlm();
  const port = probe.port;
  await probe.close();
  return port;
}

describe('worker-llm with LLM_BASE_URL and no LLM_MODEL (the provider’s GET /models names the model)', () => {
  const prefix = uniquePrefix();
  let producer: Redis;
  let queues: LaneQueues;
  const started: ServiceProcess[] = [];
  const fakes: FakeLlmServer[] = [];

  beforeAll(() => {
    producer = new Redis(url, { maxRetriesPerRequest: null });
    queues = createLaneQueues(producer, prefix);
  });

  afterEach(async () => {
    for (const w of started.splice(0)) {
      if (w.child.exitCode === null && w.child.signalCode === null) {
        w.child.kill('SIGTERM');
        await w.exited;
      }
    }
    for (const f of fakes.splice(0)) await f.close();
  });

  afterAll(async () => {
    await closeLaneQueues(queues);
    await producer.quit();
    await cleanupRedisPrefix(prefix, url);
  });

  async function worker(baseUrl: string, ready = true): Promise<ServiceProcess> {
    const w = await spawnLlmWorker(
      { REDIS_URL: url, QUEUE_PREFIX: prefix, LLM_BASE_URL: baseUrl, LLM_MODEL: '', LLM_MODELS_RETRY_MIN_MS: '50', LLM_MODELS_RETRY_MAX_MS: '200' },
      ready,
    );
    started.push(w);
    return w;
  }

  async function fake(opts: Parameters<typeof startFakeLlm>[0]): Promise<FakeLlmServer> {
    const f = await startFakeLlm(opts);
    fakes.push(f);
    return f;
  }

  /** Runs an LlmCall without a model pin and answers its outcome. */
  async function unpinnedCall() {
    const item = llmItem('LlmCall', { prompt: 'hello' });
    await enqueueWork(queues, [item]);
    return (await returnValueOf(queues, item.invocationId)).outcome;
  }

  it('uses the one model the provider serves, logged at boot', async () => {
    const f = await fake({ models: ['only-model'], replies: [{ content: 'hi there' }] });
    const w = await worker(f.url);
    expect(w.output()).toMatch(/"model":"only-model".*using the only model the provider serves/);
    expect(await unpinnedCall()).toMatchObject({ ok: true, output: { text: 'hi there' } });
    expect(f.requests.at(-1)?.body.model).toBe('only-model');
  });

  it('stops at boot naming LLM_MODEL and the ids when the provider serves several models', async () => {
    const f = await fake({ models: ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta'] });
    const w = await worker(f.url, false);
    expect(await w.exited).toBe(1);
    expect(w.output()).toContain('invalid configuration:');
    expect(w.output()).toContain('LLM_MODEL: unset, and the provider at LLM_BASE_URL serves 6 models (alpha, beta, gamma, delta, epsilon, … 1 more)');
    expect(w.output()).not.toContain('worker-llm ready');
  });

  it('fails a call retryably (NodeFailed) while the provider lists no model, then uses the model once it lists one', async () => {
    const f = await fake({ models: [], replies: [{ content: 'now' }] });
    const w = await worker(f.url);
    expect(w.output()).toContain('lists no model yet');
    expect(await unpinnedCall()).toMatchObject({ ok: false, failureClass: 'NodeFailed', reason: expect.stringMatching(/lists no model/) });
    f.setModels(['loaded-model']);
    await waitFor(() => w.output().includes('using the only model'), { timeoutMs: 10_000, description: 'model discovered in the background' });
    expect(await unpinnedCall()).toMatchObject({ ok: true, output: { text: 'now' } });
    expect(f.requests.at(-1)?.body.model).toBe('loaded-model');
  });

  it('boots before its provider, fails calls retryably as provider unavailable meanwhile, and finds the model once the provider starts', async () => {
    const port = await unusedPort();
    const w = await worker(`http://127.0.0.1:${port}/v1`);
    expect(w.output()).toContain('does not answer GET /models yet');
    expect(await unpinnedCall()).toMatchObject({ ok: false, failureClass: 'NodeFailed', reason: expect.stringMatching(/provider is unavailable/) });
    const f = await fake({ port, models: ['late-model'], replies: [{ content: 'late answer' }] });
    await waitFor(() => w.output().includes('using the only model'), { timeoutMs: 10_000, description: 'model discovered in the background' });
    expect(await unpinnedCall()).toMatchObject({ ok: true, output: { text: 'late answer' } });
    expect(f.requests.at(-1)?.body.model).toBe('late-model');
  });

  it('shuts down with exit 1 when a provider that started after it serves several models', async () => {
    const port = await unusedPort();
    const w = await worker(`http://127.0.0.1:${port}/v1`);
    await fake({ port, models: ['one', 'two'] });
    expect(await w.exited).toBe(1);
    expect(w.output()).toContain('serves 2 models (one, two): set LLM_MODEL to one of them');
  });
});
