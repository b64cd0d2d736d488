import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeLaneQueues, createLaneQueues, enqueueWork, type LaneQueues } from '@flowline/queue';
import { cleanupRedisPrefix, startFakeLlm, testRedisUrl, uniquePrefix, waitFor, type FakeLlmServer } from '@flowline/testing';
import { createAdmission } from '../src/admission';
import { LlmError } from '../src/errors';
import { llmItem, returnValueOf } from './helpers';

const prefix = uniquePrefix();
const url = testRedisUrl();
const serviceDir = fileURLToPath(new URL('..', import.meta.url));

interface Started {
  child: ChildProcess;
  exited: Promise<number | null>;
  output: () => string;
}

async function startWorker(env: Record<string, string>): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: serviceDir,
    // debug: the per-invocation line ('llm invocation finished') is written at debug
    env: { ...process.env, REDIS_URL: url, QUEUE_PREFIX: prefix, LOG_LEVEL: 'debug', SHUTDOWN_GRACE_MS: '2000', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await waitFor(() => output.includes('worker-llm ready'), { timeoutMs: 30_000, description: `worker ready; output so far: ${output}` });
  return { child, exited, output: () => output };
}

describe('provider admission shared through Redis', () => {
  let redis: Redis;

  beforeAll(() => {
    redis = new Redis(url, { maxRetriesPerRequest: null });
  });

  afterAll(async () => {
    await redis.quit();
    await cleanupRedisPrefix(prefix, url);
  });

  it('frees the slot of a holder that died once its lease expires', async () => {
    const admission = createAdmission({ redis, prefix, pollMs: 20 });
    const limits = { maxConcurrentCalls: 1, tokensPerMinute: 0 };
    // A worker killed mid-call leaves its lease behind, never renewed and never released.
    await redis.zadd(`${prefix}:llm:slots:p/dead`, Date.now() + 300, 'ghost');
    let waited = false;
    const lease = await admission.acquire('p/dead', limits, new AbortController().signal, () => (waited = true));
    expect(waited).toBe(true);
    expect(await redis.zrange(`${prefix}:llm:slots:p/dead`, 0, -1)).toHaveLength(1);
    await lease.release(null);
    expect(await redis.zcard(`${prefix}:llm:slots:p/dead`)).toBe(0);
  });

  it('makes callers wait out a cool-down and aborts a waiting caller with its signal class', async () => {
    const admission = createAdmission({ redis, prefix, pollMs: 20 });
    const limits = { maxConcurrentCalls: 0, tokensPerMinute: 0 };
    await admission.coolDown('p/cool', 60_000);
    const controller = new AbortController();
    let waitMs = 0;
    const pending = admission.acquire('p/cool', limits, controller.signal, (ms) => (waitMs = ms));
    await waitFor(() => waitMs > 0, { description: 'the caller is waiting' });
    controller.abort(new LlmError('Cancelled', 'the invocation was cancelled'));
    await expect(pending).rejects.toMatchObject({ failureClass: 'Cancelled' });
    expect(waitMs).toBeGreaterThan(50_000);
  });

  it('holds a caller past a spent tokens-per-minute budget', async () => {
    const admission = createAdmission({ redis, prefix, pollMs: 20 });
    const limits = { maxConcurrentCalls: 0, tokensPerMinute: 100 };
    const first = await admission.acquire('p/tpm', limits, new AbortController().signal);
    await first.release(150);
    const controller = new AbortController();
    let waited = false;
    const pending = admission.acquire('p/tpm', limits, controller.signal, () => (waited = true));
    await waitFor(() => waited, { description: 'the caller is waiting for the next minute' });
    controller.abort(new LlmError('Timeout', 'the attempt deadline passed'));
    await expect(pending).rejects.toMatchObject({ failureClass: 'Timeout' });
  });

  describe('two worker processes', () => {
    let fake: FakeLlmServer;
    let producer: Redis;
    let queues: LaneQueues;
    const workers: Started[] = [];

    beforeAll(async () => {
      fake = await startFakeLlm({ fallback: { content: 'answer', delayMs: 150 } });
      producer = new Redis(url, { maxRetriesPerRequest: null });
      queues = createLaneQueues(producer, prefix);
      const env = { LLM_BASE_URL: fake.url, LLM_MODEL: 'shared-model', LLM_MAX_CONCURRENT_CALLS: '2', LANE_CONCURRENCY: '3' };
      workers.push(...(await Promise.all([startWorker(env), startWorker(env)])));
    });

    afterAll(async () => {
      for (const w of workers) w.child.kill('SIGTERM');
      await Promise.all(workers.map((w) => w.exited));
      await closeLaneQueues(queues);
      await producer.quit();
      await fake.close();
    });

    it('never lets more than 2 calls reach the provider at once with a shared limit of 2', async () => {
      const items = Array.from({ length: 10 }, () => llmItem('LlmCall', { prompt: 'hi' }));
      await enqueueWork(queues, items);
      for (const item of items) {
        expect((await returnValueOf(queues, item.invocationId, 30_000)).outcome).toMatchObject({ ok: true, output: { text: 'answer' } });
      }
      // both processes took part: each logged finished invocations
      for (const w of workers) expect(w.output()).toContain('llm invocation finished');
      expect(fake.requests).toHaveLength(10);
      expect(fake.maxInFlight()).toBe(2);
    });

    it('exits 0 on SIGTERM', async () => {
      const w = workers.pop()!;
      w.child.kill('SIGTERM');
      expect(await w.exited).toBe(0);
    });
  });
});
