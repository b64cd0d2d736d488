/**
 * `npm run bench` (this workspace): LLM-lane overhead per call with the fake
 * OpenAI-compatible server answering at once. Reports the p50/p95 of a direct provider
 * call, of the same call through the lane (enqueue → worker → admission → provider →
 * return value), their difference, and lane throughput with many jobs in flight.
 * Needs Redis (REDIS_URL or the local default).
 */
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { QueueEvents } from 'bullmq';
import { closeLaneQueues, createLaneQueues, enqueueWork, queueNameFor } from '@flowline/queue';
import { cleanupRedisPrefix, startFakeLlm, testRedisUrl, uniquePrefix } from '@flowline/testing';
import { createToolRegistry } from '@flowline/tools';
import { createProviderRegistry } from '../src/providers/registry';
import { createLlmWorker } from '../src/worker';
import { llmItem } from './helpers';

const SEQUENTIAL = Number(process.env.BENCH_CALLS ?? 200);
const PARALLEL = Number(process.env.BENCH_PARALLEL_CALLS ?? 500);

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const ms = (n: number) => `${n.toFixed(2)} ms`;

const url = testRedisUrl();
const prefix = uniquePrefix();
const fake = await startFakeLlm({ fallback: { content: 'ok', usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } } });
const redis = new Redis(url, { maxRetriesPerRequest: null });
const producer = new Redis(url, { maxRetriesPerRequest: null });
const events = new QueueEvents(queueNameFor('llm'), { connection: new Redis(url, { maxRetriesPerRequest: null }), prefix });
const providers = createProviderRegistry({ baseUrl: fake.url, defaultModel: 'bench', maxConcurrentCalls: 64 });
const worker = createLlmWorker({
  redis,
  providers,
  tools: await createToolRegistry({}),
  logger: pino({ level: 'silent' }),
  prefix,
  concurrency: 16,
});
await worker.start();
await events.waitUntilReady();
const queues = createLaneQueues(producer, prefix);
// one waitUntilFinished listener per job in the throughput phase
queues.llm.setMaxListeners(PARALLEL + 16);

try {
  const target = providers.resolve(null);
  const direct: number[] = [];
  for (let i = 0; i < SEQUENTIAL; i++) {
    const t0 = performance.now();
    await target.provider.complete({ model: target.model, messages: [{ role: 'user', content: 'hi' }] }, { signal: new AbortController().signal });
    direct.push(performance.now() - t0);
  }
  const lane: number[] = [];
  for (let i = 0; i < SEQUENTIAL; i++) {
    const item = llmItem('LlmCall', { prompt: 'hi' });
    const t0 = performance.now();
    await enqueueWork(queues, [item]);
    const job = await queues.llm.getJob(item.invocationId);
    await job!.waitUntilFinished(events, 10_000);
    lane.push(performance.now() - t0);
  }
  const items = Array.from({ length: PARALLEL }, () => llmItem('LlmCall', { prompt: 'hi' }));
  const t0 = performance.now();
  await enqueueWork(queues, items);
  await Promise.all(items.map(async (item) => (await queues.llm.getJob(item.invocationId))!.waitUntilFinished(events, 60_000)));
  const seconds = (performance.now() - t0) / 1000;

  console.log(`LLM lane overhead (fake server answering at once, ${SEQUENTIAL} sequential calls)`);
  console.log(`  direct provider call   p50 ${ms(pct(direct, 50))}  p95 ${ms(pct(direct, 95))}`);
  console.log(`  through the lane       p50 ${ms(pct(lane, 50))}  p95 ${ms(pct(lane, 95))}`);
  console.log(`  lane overhead per call p50 ${ms(pct(lane, 50) - pct(direct, 50))}`);
  console.log(`  throughput             ${(PARALLEL / seconds).toFixed(0)} calls/s (${PARALLEL} jobs, concurrency 16, admission limit 64)`);
} finally {
  await worker.stop();
  await closeLaneQueues(queues);
  await events.close();
  await Promise.all([redis.quit(), producer.quit()]);
  await fake.close();
  await cleanupRedisPrefix(prefix, url);
}
