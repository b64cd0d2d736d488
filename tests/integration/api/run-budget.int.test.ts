/**
 * Run budgets (issue #16) through the cluster: the real API app, two real dispatchers sharing
 * the shards, each with its metrics on a real ops port, the real LLM worker with its built-in scripted provider (model
 * "scripted", priced by MODEL_PRICES at $1 per token so cost = tokens), real Postgres and Redis.
 * Each budget kind ends a run Failed/BudgetExceeded with the reason, the usage reads on the run
 * detail and in the events, and the dispatcher's metrics move.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Server as HttpServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve } from '@hono/node-server';
import { Redis } from 'ioredis';
import pino from 'pino';
import { createTestDatabase, createTestRedis, waitFor, type TestDatabase, type TestRedis } from '@flowline/testing';
import { createToolRegistry } from '@flowline/tools';
import { createClient, isApiRequestError, type FlowlineClient, type RunDetail } from '@flowline/client';
import { createMetricsRegistry, startOpsServer, type OpsServer } from '@flowline/runtime';
// The real services, run in-process (tests only; services never import each other).
import { createDispatcher } from '../../../services/dispatcher/src/dispatcher';
import { dispatcherConfigSchema } from '../../../services/dispatcher/src/config';
import { createDispatcherMetrics } from '../../../services/dispatcher/src/metrics';
import { createLlmWorker, createProviderRegistry } from '../../../services/worker-llm/src/index';
import { createApp } from '../../../services/api/src/app';
import { KEYS, pauseGraph } from '../../../services/api/test/harness';

const SHARD_COUNT = 4;
const TENANT = 'tenantA';
const logger = pino({ level: 'silent' });
const PRICES = JSON.stringify({ scripted: { inputPerMTok: 1_000_000, outputPerMTok: 1_000_000 } });

let db: TestDatabase;
let tr: TestRedis;
const opsServers: OpsServer[] = [];
let api: FlowlineClient;
const closers: Array<() => Promise<void>> = [];

/** Start → LlmCall a → LlmCall b → LlmCall c → End (each one attempt), with an optional graph budget. */
function calls(budget?: Record<string, unknown>, keys = ['a', 'b', 'c']) {
  const order = ['start', ...keys, 'end'];
  return {
    ...(budget ? { budget } : {}),
    nodes: [
      { key: 'start', kind: 'Start' },
      ...keys.map((k) => ({ key: k, kind: 'LlmCall', maxAttempts: 1, config: { prompt: `say ${k}` } })),
      { key: 'end', kind: 'End', config: { outcome: 'done' } },
    ],
    edges: order.slice(1).map((k, i) => ({ key: `e${i}`, from: order[i], to: k })),
  };
}

/**
 * Start → LlmCalls a, b, c side by side → End (All): one call is the shortest way to the End,
 * so a budget of 2 attempts passes validation, yet a run needs all three.
 */
function fanOut(budget: Record<string, unknown>) {
  const keys = ['a', 'b', 'c'];
  return {
    budget,
    nodes: [
      { key: 'start', kind: 'Start' },
      ...keys.map((k) => ({ key: k, kind: 'LlmCall', maxAttempts: 1, config: { prompt: `say ${k}` } })),
      { key: 'end', kind: 'End', config: { outcome: 'done' } },
    ],
    edges: keys.flatMap((k) => [
      { key: `s${k}`, from: 'start', to: k },
      { key: `${k}e`, from: k, to: 'end' },
    ]),
  };
}

async function startRun(graph: unknown, body: Record<string, unknown> = {}): Promise<string> {
  const def = await api.definitions.create({ name: `budget-${Math.random().toString(36).slice(2, 8)}`, graph });
  return (await api.runs.start(def.id, body)).runId;
}

async function ended(runId: string): Promise<RunDetail> {
  return waitFor(
    async () => {
      const d = await api.runs.get(runId);
      return ['Completed', 'Failed', 'Cancelled'].includes(d.run.status) ? d : null;
    },
    { timeoutMs: 30_000, description: `run ${runId} ended` },
  );
}

async function runEvent(runId: string, kind: string) {
  const page = await api.runs.events(runId, { afterSeq: 0 });
  return page.events.find((e) => e.kind === kind);
}

/** Both dispatchers' /metrics, one after the other (a run is counted by whichever owned its shard). */
async function metrics(): Promise<string> {
  const texts = await Promise.all(opsServers.map(async (o) => (await fetch(`http://127.0.0.1:${o.port}/metrics`)).text()));
  return texts.join('\n');
}

function sample(text: string, name: string, labels: Record<string, string>): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

beforeAll(async () => {
  db = await createTestDatabase();
  tr = createTestRedis();
  const apiRedis = new Redis(tr.url, { maxRetriesPerRequest: 3 });
  const tools = await createToolRegistry({});
  const app = createApp({
    pool: db.pool,
    redis: apiRedis,
    apiKeys: new Map([[KEYS.a, TENANT]]),
    limits: { maxNodesPerDefinition: 200, maxRunInputBytes: 65_536, eventReplayLimit: 100, shardCount: SHARD_COUNT, streamPollMs: 50, maxSteersPerNode: 5 },
    tools: { catalog: () => tools.catalog(), parserCatalog: () => tools.asParserCatalog() },
    queuePrefix: tr.prefix,
    logger,
  });
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as HttpServer;
  if (!server.listening) await once(server, 'listening');
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    apiRedis.disconnect();
  });
  api = createClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, apiKey: KEYS.a });

  const workerRedis = new Redis(tr.url, { maxRetriesPerRequest: null });
  const worker = createLlmWorker({ redis: workerRedis, providers: createProviderRegistry({}), tools, logger, prefix: tr.prefix, concurrency: 4, shutdownGraceMs: 500 });
  await worker.start();
  closers.push(async () => {
    await worker.stop();
    workerRedis.disconnect();
  });

  // two dispatchers sharing the shards, each with its metrics on its own ops port
  for (const id of ['budget-a', 'budget-b']) {
    const registry = createMetricsRegistry();
    const ops = await startOpsServer({ port: 0, registry, ready: async () => true, logger });
    opsServers.push(ops);
    closers.push(() => ops.close());
    const dispatcherRedis = new Redis(tr.url, { maxRetriesPerRequest: null });
    const config = dispatcherConfigSchema.parse({
      DATABASE_URL: db.url,
      REDIS_URL: tr.url,
      QUEUE_PREFIX: tr.prefix,
      DISPATCHER_ID: id,
      SHARD_COUNT: String(SHARD_COUNT),
      SHARD_LEASE_MS: '1500',
      DISPATCH_SWEEP_MS: '100',
      MODEL_PRICES: PRICES,
    });
    const dispatcher = createDispatcher({ config, pool: db.pool, redis: dispatcherRedis, log: logger, metrics: createDispatcherMetrics(registry, () => null) });
    await dispatcher.start();
    closers.push(async () => {
      await dispatcher.stop();
      dispatcherRedis.disconnect();
    });
  }
}, 60_000);

afterAll(async () => {
  api?.close();
  for (const c of closers.reverse()) await c().catch(() => undefined);
  await tr?.cleanup();
  await db?.drop();
});

describe('run budgets through the cluster', () => {
  it('completes a run within its budget and shows its usage and budget on the run detail and its run.completed event', async () => {
    const runId = await startRun(calls({ maxTokens: 100_000 }, ['a']), { budget: { maxCostUsd: 100_000 } });
    const d = await ended(runId);
    expect(d.run.status).toBe('Completed');
    expect(d.run.budget).toEqual({ maxTokens: 100_000, maxCostUsd: 100_000 });
    expect(d.run.usage!.tokens).toBeGreaterThan(0);
    expect(d.run.usage).toMatchObject({ attempts: 1, unpricedTokens: 0, costUsd: d.run.usage!.tokens, tokens: d.run.usage!.inputTokens + d.run.usage!.outputTokens });
    expect((await runEvent(runId, 'run.completed'))?.detail).toMatchObject({ usage: d.run.usage, runBudget: d.run.budget });
  }, 40_000);

  it('fails a run past maxTokens BudgetExceeded after the call that went past it, and counts it in the metrics', async () => {
    const before = await metrics();
    const runId = await startRun(calls({ maxTokens: 3 }));
    const d = await ended(runId);
    expect(d.run).toMatchObject({ status: 'Failed', failureClass: 'BudgetExceeded' });
    expect(d.run.reason).toBe(`budget maxTokens 3 exceeded: ${d.run.usage!.tokens} tokens used`);
    expect(d.run.usage!.tokens).toBeGreaterThan(3);
    expect(d.nodeRuns.find((n) => n.nodeKey === 'a')?.status).toBe('Succeeded');
    expect(d.nodeRuns.find((n) => n.nodeKey === 'b')?.status).toBe('Pending');
    expect((await runEvent(runId, 'run.failed'))?.detail).toMatchObject({ class: 'BudgetExceeded', budget: 'maxTokens', limit: 3, used: d.run.usage!.tokens });
    await waitFor(async () => sample(await metrics(), 'flowline_runs_budget_exceeded_total', { tenant: TENANT, budget: 'maxTokens' }) === 1, { timeoutMs: 5_000 });
    const after = await metrics();
    const moved = (name: string) => sample(after, name, { tenant: TENANT }) - sample(before, name, { tenant: TENANT });
    expect(moved('flowline_run_tokens_total')).toBe(d.run.usage!.tokens);
    expect(moved('flowline_run_cost_usd_total')).toBeCloseTo(d.run.usage!.costUsd, 6);
  }, 40_000);

  it('fails a run past the maxCostUsd of its start request BudgetExceeded', async () => {
    const runId = await startRun(calls(), { budget: { maxCostUsd: 2 } });
    const d = await ended(runId);
    expect(d.run.budget).toEqual({ maxCostUsd: 2 });
    expect(d.run).toMatchObject({ status: 'Failed', failureClass: 'BudgetExceeded', reason: `budget maxCostUsd 2 exceeded: ${d.run.usage!.costUsd} USD used` });
    await waitFor(async () => sample(await metrics(), 'flowline_runs_budget_exceeded_total', { tenant: TENANT, budget: 'maxCostUsd' }) === 1, { timeoutMs: 5_000 });
  }, 40_000);

  it('fails an idle run (waiting on a person) when its wall-clock runs out, cancelling the gate', async () => {
    const runId = await startRun(pauseGraph(), { budget: { maxWallClockMs: 400 } });
    const d = await ended(runId);
    expect(d.run).toMatchObject({ status: 'Failed', failureClass: 'BudgetExceeded' });
    expect(d.run.reason).toMatch(/^budget maxWallClockMs 400 exceeded: \d+ ms used$/);
    expect(d.nodeRuns.find((n) => n.nodeKey === 'gate')?.status).toBe('Cancelled');
    await waitFor(async () => sample(await metrics(), 'flowline_runs_budget_exceeded_total', { tenant: TENANT, budget: 'maxWallClockMs' }) === 1, { timeoutMs: 5_000 });
  }, 40_000);

  it('fails a run BudgetExceeded instead of queueing the attempt past the stricter maxAttempts', async () => {
    const runId = await startRun(fanOut({ maxAttempts: 2 }), { budget: { maxAttempts: 10 } });
    const d = await ended(runId);
    expect(d.run.budget).toEqual({ maxAttempts: 2 });
    expect(d.run).toMatchObject({ status: 'Failed', failureClass: 'BudgetExceeded', reason: 'budget maxAttempts 2 exceeded: 3 attempts needed' });
    expect(d.run.usage?.attempts).toBe(2);
    // a, b spent the budget; c was never queued
    expect(d.nodeRuns.find((n) => n.nodeKey === 'c')).toMatchObject({ status: 'Pending', attempt: 0 });
    await waitFor(async () => sample(await metrics(), 'flowline_runs_budget_exceeded_total', { tenant: TENANT, budget: 'maxAttempts' }) === 1, { timeoutMs: 5_000 });
  }, 40_000);

  it("rolls a child run's usage into its parent's when the child ends, and fails the parent past its budget", async () => {
    const child = await api.definitions.create({ name: 'budget-child', graph: calls(undefined, ['x']) });
    const parentGraph = {
      budget: { maxTokens: 1 },
      nodes: [
        { key: 'start', kind: 'Start' },
        { key: 'sub', kind: 'Subworkflow', config: { definitionId: child.id } },
        { key: 'end', kind: 'End', config: { outcome: 'done' } },
      ],
      edges: [{ key: 'e1', from: 'start', to: 'sub' }, { key: 'e2', from: 'sub', to: 'end' }],
    };
    const runId = await startRun(parentGraph);
    const d = await ended(runId);
    const childRunId = d.nodeRuns.find((n) => n.nodeKey === 'sub')?.childRunId;
    const c = await api.runs.get(childRunId!);
    expect(c.run).toMatchObject({ status: 'Completed', budget: null });
    expect(c.run.usage!.tokens).toBeGreaterThan(1);
    expect(d.run).toMatchObject({ status: 'Failed', failureClass: 'BudgetExceeded', reason: `budget maxTokens 1 exceeded: ${c.run.usage!.tokens} tokens used` });
    expect(d.run.usage).toEqual({ ...c.run.usage, attempts: 1 + c.run.usage!.attempts });
  }, 40_000);

  it('refuses a bad budget with keyed 400s: BudgetInvalid on start, GraphInvalid on the definition', async () => {
    const def = await api.definitions.create({ name: 'budget-refusals', graph: calls(undefined, ['a']) });
    const err = await api.runs.start(def.id, { budget: { maxTokens: 0, maxCostUsd: 'lots', seconds: 5 } as never }).catch((e: unknown) => e);
    expect(isApiRequestError(err)).toBe(true);
    if (!isApiRequestError(err)) return;
    expect(err.status).toBe(400);
    expect(err.code).toBe('BudgetInvalid');
    expect(err.details).toEqual([
      { key: 'budget.maxTokens', message: 'budget.maxTokens must be a positive integer' },
      { key: 'budget.maxCostUsd', message: 'budget.maxCostUsd must be a number ≥ 0' },
      { key: 'budget', message: "budget has an unknown member 'seconds' (allowed: maxTokens, maxCostUsd, maxWallClockMs, maxAttempts)" },
    ]);
    const notObject = await api.runs.start(def.id, { budget: 5 as never }).catch((e: unknown) => e);
    expect(isApiRequestError(notObject) && notObject.code).toBe('BudgetInvalid');
    const badGraph = await api.definitions.create({ name: 'bad-budget', graph: calls({ maxWallClockMs: -5 }) }).catch((e: unknown) => e);
    expect(isApiRequestError(badGraph) && badGraph.code).toBe('GraphInvalid');
    expect(isApiRequestError(badGraph) && JSON.stringify(badGraph.details)).toContain('budget.maxWallClockMs must be a positive integer');
    // a maxAttempts no completing run fits in (three calls in a line need three): refused on the graph and on the start
    const unreachable = await api.definitions.create({ name: 'unreachable', graph: calls({ maxAttempts: 2 }) }).catch((e: unknown) => e);
    expect(isApiRequestError(unreachable) && unreachable.code).toBe('GraphInvalid');
    expect(isApiRequestError(unreachable) && JSON.stringify(unreachable.details)).toContain('budget.maxAttempts (2) is below the 3 attempts');
    const line = await api.definitions.create({ name: 'line', graph: calls() });
    const tooSmall = await api.runs.start(line.id, { budget: { maxAttempts: 2 } }).catch((e: unknown) => e);
    expect(isApiRequestError(tooSmall) && [tooSmall.status, tooSmall.code, JSON.stringify(tooSmall.details)]).toEqual([
      400,
      'BudgetInvalid',
      expect.stringContaining('"key":"budget.maxAttempts"'),
    ]);
    expect((await api.runs.start(line.id, { budget: { maxAttempts: 3 } })).runId).toEqual(expect.any(String));
  }, 40_000);
});

describe('MODEL_PRICES at boot', () => {
  const base = { DATABASE_URL: 'postgres://x/y', REDIS_URL: 'redis://x' };
  it('is refused unless it is JSON of model → { inputPerMTok, outputPerMTok } with prices ≥ 0', () => {
    const issues = (MODEL_PRICES: string) => {
      const r = dispatcherConfigSchema.safeParse({ ...base, MODEL_PRICES });
      return r.success ? [] : r.error.issues.map((i) => i.message);
    };
    expect(issues('{"gpt-4o-mini":{"inputPerMTok":0.15,"outputPerMTok":0.6}}')).toEqual([]);
    expect(issues('{}')).toEqual([]);
    expect(issues('not json')[0]).toMatch(/^MODEL_PRICES is not JSON/);
    expect(issues('{"m":{"inputPerMTok":-1,"outputPerMTok":1}}')).toEqual(['MODEL_PRICES.m.inputPerMTok must be a number ≥ 0 (USD per million tokens)']);
    expect(issues('[1]')[0]).toMatch(/^MODEL_PRICES must be a JSON object/);
    expect(dispatcherConfigSchema.parse(base).MODEL_PRICES).toBe('{}');
  });
});
