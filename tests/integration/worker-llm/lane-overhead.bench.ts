/**
 * `npm run bench -w @flowline/worker-llm`: lane overhead per call, measured exactly as the root
 * `npm run bench -- --only lanes` measures it (tests/bench/lib/lanes.ts: the LLM lane
 * against the fake OpenAI-compatible server answering at once, beside the tool lane),
 * then LLM-lane throughput with many jobs in flight. Needs Redis (REDIS_URL or the
 * local default).
 */
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { QueueEvents } from 'bullmq';
import { closeLaneQueues, createLaneQueues, enqueueWork, queueNameFor } from '@flowline/queue';
import { cleanupRedisPrefix, startFakeLlm, testRedisUrl, uniquePrefix } from '@flowline/testing';
import { createToolRegistry } from '@flowline/tools';
import { createProviderRegistry } from '../../../services/worker-llm/src/providers/registry';
import { createLlmWorker } from '../../../services/worker-llm/src/worker';
import { llmItem } from '../../../services/worker-llm/test/helpers';
import { laneOverhead } from '../../bench/lib/lanes';
import { renderLanes } from '../../bench/lib/report';

const SEQUENTIAL = Number(process.env.BENCH_CALLS ?? 200);
const PARALLEL = Number(process.env.BENCH_PARALLEL_CALLS ?? 500);

const url = testRedisUrl();
// first, alone: the per-call figures (both lanes, their own workers and prefix)
const lanes = await laneOverhead(url, SEQUENTIAL);
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
  const items = Array.from({ length: PARALLEL }, () => llmItem('LlmCall', { prompt: 'hi' }));
  const t0 = performance.now();
  await enqueueWork(queues, items);
  await Promise.all(items.map(async (item) => (await queues.llm.getJob(item.invocationId))!.waitUntilFinished(events, 60_000)));
  const seconds = (performance.now() - t0) / 1000;

  console.log(renderLanes(lanes).join('\n'));
  console.log(`LLM lane throughput: ${(PARALLEL / seconds).toFixed(0)} calls/s (${PARALLEL} jobs, concurrency 16, admission limit 64)`);
} finally {
  await worker.stop();
  await closeLaneQueues(queues);
  await events.close();
  await Promise.all([redis.quit(), producer.quit()]);
  await fake.close();
  await cleanupRedisPrefix(prefix, url);
}
