/**
 * A run the retry budget ends, read back through the real app and the real dispatcher
 * (in-process; Postgres and Redis): with MAX_TOTAL_ATTEMPTS 0 a timed-out first attempt
 * cannot retry, the run fails AttemptsExhausted, and GET /v1/runs/{id}/blockers names the
 * spent budget on the node it left Pending instead of answering that nothing waits. No tool
 * worker runs, so the attempt times out on its deadline.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import { waitFor } from '@flowline/testing';
// The real dispatcher, run in-process (tests only; services never import each other).
import { createDispatcher, type Dispatcher } from '../../../services/dispatcher/src/dispatcher';
import { dispatcherConfigSchema } from '../../../services/dispatcher/src/config';
import { startHarness, type Harness } from '../../../services/api/test/harness';

let h: Harness;
let dispatcherRedis: Redis;
let dispatcher: Dispatcher | null = null;

beforeAll(async () => {
  h = await startHarness({ shardCount: 2, maxTotalAttempts: 0 });
  dispatcherRedis = new Redis(h.redisUrl, { maxRetriesPerRequest: null });
  const config = dispatcherConfigSchema.parse({
    DATABASE_URL: h.db.url,
    REDIS_URL: h.redisUrl,
    QUEUE_PREFIX: h.prefix,
    DISPATCHER_ID: 'budget-blockers-test',
    SHARD_COUNT: '2',
    DISPATCH_SWEEP_MS: '100',
    MAX_TOTAL_ATTEMPTS: '0',
  });
  dispatcher = createDispatcher({ config, pool: h.db.pool, redis: dispatcherRedis, log: pino({ level: 'silent' }) });
  await dispatcher.start();
});
afterAll(async () => {
  await dispatcher?.stop();
  dispatcherRedis?.disconnect();
  await h?.close();
});

describe('blockers of a run the retry budget ended', () => {
  it('names MAX_TOTAL_ATTEMPTS on the nodes the failure left Pending', async () => {
    const graph = {
      nodes: [
        { key: 'start', kind: 'Start' },
        { key: 't', kind: 'Tool', timeoutSeconds: 1, config: { toolName: 'echo', arguments: { x: 1 } } },
        { key: 'after', kind: 'Tool', config: { toolName: 'echo', arguments: { y: 1 } } },
        { key: 'end', kind: 'End', config: { outcome: 'done' } },
      ],
      edges: [
        { key: 'e1', from: 'start', to: 't' },
        { key: 'e2', from: 't', to: 'after' },
        { key: 'e3', from: 'after', to: 'end' },
      ],
    };
    const def = await h.call('POST', '/v1/definitions', { body: { name: 'budget', graph } });
    expect(def.status).toBe(201);
    const started = await h.call('POST', `/v1/definitions/${def.body.id}/runs`, { body: {} });
    const runId = started.body.runId as string;
    const run = await waitFor(
      async () => {
        const r = await h.call('GET', `/v1/runs/${runId}`);
        return r.body.run.status === 'Failed' ? r.body : null;
      },
      { timeoutMs: 20_000, description: 'the run fails on its spent retry budget' },
    );
    expect(run.run).toMatchObject({ failureClass: 'AttemptsExhausted' });
    expect(run.run.reason).toContain('MAX_TOTAL_ATTEMPTS');
    const res = await h.call('GET', `/v1/runs/${runId}/blockers`);
    expect(res.status).toBe(200);
    expect(res.body.blockers.map((b: { nodeKey: string; kind: string }) => [b.nodeKey, b.kind])).toEqual([
      ['after', 'budgetExhausted'],
      ['end', 'budgetExhausted'],
    ]);
    expect(res.body.blockers[0].details).toMatchObject({ budget: 'MAX_TOTAL_ATTEMPTS', limit: 0, spent: 0 });
  }, 40_000);
});
