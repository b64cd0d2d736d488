/**
 * Lane overhead per call: what a lane adds around the work itself, measured the same way
 * for both lanes, one call at a time, in this process.
 * - tool lane: BullMQ job → worker-tool → `echo` → the worker's outcome report on the wake
 *   channel (how a dispatcher learns it),
 *   minus the same `echo` invoked directly on the tool registry;
 * - LLM lane: BullMQ job → worker-llm (provider admission, activity feed, the job's
 *   admission report) → the fake OpenAI-compatible server answering at once → the outcome
 *   report, minus the same chat completion sent directly with the
 *   worker's own provider client.
 * Direct and lane calls alternate so drift (load, GC, JIT) falls on both alike. The
 * dispatcher's part of a hop is not in here: W1's hop breakdown covers it.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import type { Lane, WorkItem } from '@flowline/graph';
import {
  closeLaneQueues,
  createLaneQueues,
  enqueueWork,
  parseMessage,
  wakeChannel,
  wakeMessageSchema,
  type LaneQueues,
  type WorkReturn,
} from '@flowline/queue';
import { cleanupRedisPrefix, startFakeLlm, uniquePrefix } from '@flowline/testing';
import { createToolRegistry } from '@flowline/tools';
// The real lane workers, in-process (bench only; services never import each other).
import { createToolWorker } from '../../../services/worker-tool/src/worker';
import { createLlmWorker, createProviderRegistry } from '../../../services/worker-llm/src/index';
import { percentile } from './stats';

/** One lane's figures, ms per call. */
export interface LaneFigures {
  directP50Ms: number;
  directP99Ms: number;
  laneP50Ms: number;
  laneP99Ms: number;
  /** lane minus direct, at the same percentile */
  overheadP50Ms: number;
  overheadP99Ms: number;
}

export interface LanesResult {
  /** measured calls per lane (after `warmup` unmeasured ones) */
  calls: number;
  warmup: number;
  tool: LaneFigures;
  llm: LaneFigures;
  /** LLM-lane overhead ÷ tool-lane overhead */
  ratioP50: number;
  ratioP99: number;
  /** the admission limit the LLM lane ran under (per provider/model) */
  llmAdmissionLimit: number;
}

const LLM_ADMISSION_LIMIT = 64;

/** Work item of one lane with a fresh invocation id. */
function itemFor(lane: Lane): WorkItem {
  const upstream = { status: 'succeeded' as const, attempt: 1, branch: null, output: { input: {} } };
  return {
    lane,
    runId: randomUUID(),
    nodeKey: lane === 'tool' ? 'tool1' : 'llm1',
    kind: lane === 'tool' ? 'Tool' : 'LlmCall',
    invocationId: randomUUID(),
    attempt: 1,
    config: lane === 'tool' ? { toolName: 'echo', arguments: { hello: 'world' } } : { prompt: 'hi' },
    input: { run: { input: {} }, upstream: { start: upstream }, input: upstream },
    deadlineAt: Date.now() + 60_000,
    steering: [],
    outputSchema: null,
  };
}

/** Outcome reports of the lane workers, as a dispatcher receives them on the wake channel. */
class OutcomeReports {
  private readonly waiting = new Map<string, (ret: WorkReturn) => void>();

  constructor(private readonly sub: Redis) {
    sub.on('message', (_channel: string, raw: string) => {
      const ret = parseMessage(wakeMessageSchema, raw)?.ret;
      if (ret) this.waiting.get(ret.invocationId)?.(ret);
    });
  }

  /** Resolves with the outcome of `invocationId` (register before the job can finish). */
  next(invocationId: string): Promise<WorkReturn> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no outcome report for ${invocationId} within 30 s`)), 30_000);
      this.waiting.set(invocationId, (ret) => {
        clearTimeout(timer);
        this.waiting.delete(invocationId);
        resolve(ret);
      });
    });
  }
}

/** Enqueues one job and waits for its outcome report (as a dispatcher learns it). */
async function throughLane(queues: LaneQueues, reports: OutcomeReports, lane: Lane): Promise<number> {
  const item = itemFor(lane);
  const t0 = performance.now();
  const outcome = reports.next(item.invocationId);
  await enqueueWork(queues, [item]);
  const ret = await outcome;
  const ms = performance.now() - t0;
  if (!ret.outcome.ok) throw new Error(`${lane} lane call failed: ${JSON.stringify(ret.outcome)}`);
  return ms;
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

function figures(direct: number[], lane: number[]): LaneFigures {
  const f = {
    directP50Ms: percentile(direct, 50),
    directP99Ms: percentile(direct, 99),
    laneP50Ms: percentile(lane, 50),
    laneP99Ms: percentile(lane, 99),
  };
  return { ...f, overheadP50Ms: f.laneP50Ms - f.directP50Ms, overheadP99Ms: f.laneP99Ms - f.directP99Ms };
}

/** Measures both lanes against `redisUrl` under a prefix of their own (removed afterwards). */
export async function laneOverhead(redisUrl: string, calls: number, warmup = 30): Promise<LanesResult> {
  const prefix = uniquePrefix();
  const logger = pino({ level: 'silent' });
  const conn = () => new Redis(redisUrl, { maxRetriesPerRequest: null });
  const [producer, toolConn, llmConn, sub] = [conn(), conn(), conn(), conn()];
  const fake = await startFakeLlm({ fallback: { content: 'ok', usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } } });
  const registry = await createToolRegistry({});
  const providers = createProviderRegistry({ baseUrl: fake.url, defaultModel: 'bench', maxConcurrentCalls: LLM_ADMISSION_LIMIT });
  const toolWorker = createToolWorker({ redis: toolConn, registry, logger, prefix, concurrency: 16 });
  const llmWorker = createLlmWorker({ redis: llmConn, providers, tools: registry, logger, prefix, concurrency: 16 });
  const reports = new OutcomeReports(sub);
  const queues = createLaneQueues(producer, prefix);
  try {
    await Promise.all([toolWorker.start(), llmWorker.start(), sub.subscribe(wakeChannel(prefix))]);
    const target = await providers.resolve(null);
    const direct: Record<Lane, () => Promise<unknown>> = {
      tool: () =>
        registry.invoke('echo', { hello: 'world' }, { signal: new AbortController().signal, allowedUrls: [], runId: 'r', nodeKey: 'n', input: { run: { input: null }, upstream: {}, input: null }, attempt: 1, invocationId: randomUUID() }),
      llm: () =>
        target.provider.complete({ model: target.model, messages: [{ role: 'user', content: 'hi' }] }, { signal: new AbortController().signal }),
    };
    const measure = async (lane: Lane): Promise<LaneFigures> => {
      const d: number[] = [];
      const l: number[] = [];
      for (let i = 0; i < warmup + calls; i++) {
        const dm = await timed(direct[lane]);
        const lm = await throughLane(queues, reports, lane);
        if (i >= warmup) {
          d.push(dm);
          l.push(lm);
        }
      }
      return figures(d, l);
    };
    const tool = await measure('tool');
    const llm = await measure('llm');
    return {
      calls,
      warmup,
      tool,
      llm,
      ratioP50: llm.overheadP50Ms / tool.overheadP50Ms,
      ratioP99: llm.overheadP99Ms / tool.overheadP99Ms,
      llmAdmissionLimit: LLM_ADMISSION_LIMIT,
    };
  } finally {
    await Promise.allSettled([toolWorker.stop(), llmWorker.stop()]);
    await closeLaneQueues(queues);
    for (const c of [producer, toolConn, llmConn, sub]) c.disconnect();
    await fake.close();
    await cleanupRedisPrefix(prefix, redisUrl);
  }
}
