/**
 * GET /v1/runs/{id}/blockers through the real app, the real dispatcher (in-process), Postgres
 * and Redis: each stuck state is constructed for real (no tool worker runs, so lane jobs wait;
 * LANE_WINDOW_TOOL 2, so a third job is held in the dispatch window; MAX_CONCURRENT_RUNS 3; the dispatcher stopped to orphan the shards) and its blocker read back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import { waitFor } from '@flowline/testing';
// The real dispatcher, run in-process (tests only; services never import each other).
import { createDispatcher, type Dispatcher } from '../../../services/dispatcher/src/dispatcher';
import { dispatcherConfigSchema } from '../../../services/dispatcher/src/config';
import { KEYS, pauseGraph, startHarness, type Harness } from '../../../services/api/test/harness';

const SHARD_COUNT = 4;
const SLOTS = 3;

/** Start → t(Tool echo) → End. */
const toolGraph = {
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 't', kind: 'Tool', config: { toolName: 'echo', arguments: { x: 1 } } },
    { key: 'end', kind: 'End', config: { outcome: 'done' } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 't' },
    { key: 'e2', from: 't', to: 'end' },
  ],
};

let h: Harness;
let dispatcherRedis: Redis;
let dispatcher: Dispatcher | null = null;

beforeAll(async () => {
  h = await startHarness({ shardCount: SHARD_COUNT, maxConcurrentRuns: SLOTS });
  dispatcherRedis = new Redis(h.redisUrl, { maxRetriesPerRequest: null });
  const config = dispatcherConfigSchema.parse({
    DATABASE_URL: h.db.url,
    REDIS_URL: h.redisUrl,
    QUEUE_PREFIX: h.prefix,
    DISPATCHER_ID: 'blockers-test',
    SHARD_COUNT: String(SHARD_COUNT),
    SHARD_LEASE_MS: '1500',
    DISPATCH_SWEEP_MS: '100',
    MAX_CONCURRENT_RUNS: String(SLOTS),
    LANE_WINDOW_TOOL: '2',
  });
  dispatcher = createDispatcher({ config, pool: h.db.pool, redis: dispatcherRedis, log: pino({ level: 'silent' }) });
  await dispatcher.start();
});
afterAll(async () => {
  await dispatcher?.stop();
  dispatcherRedis?.disconnect();
  await h?.close();
});

async function define(graph: unknown): Promise<string> {
  const res = await h.call('POST', '/v1/definitions', { body: { name: `g-${Math.random()}`, graph } });
  expect(res.status).toBe(201);
  return res.body.id as string;
}
async function start(defId: string): Promise<string> {
  const res = await h.call('POST', `/v1/definitions/${defId}/runs`, { body: {} });
  expect(res.status).toBe(202);
  return res.body.runId as string;
}
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are asserted member by member
async function blockersOf(runId: string): Promise<Record<string, any>> {
  const res = await h.call('GET', `/v1/runs/${runId}/blockers`);
  expect(res.status).toBe(200);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return Object.fromEntries(res.body.blockers.map((b: any) => [b.nodeKey, b]));
}
async function until(runId: string, key: string, kind: string) {
  let last: unknown = null;
  await waitFor(async () => ((last = (await blockersOf(runId))[key]) as { kind?: string } | undefined)?.kind === kind, {
    timeoutMs: 20_000,
    description: `${key} blocked by ${kind} (last: ${JSON.stringify(last)})`,
  });
  return (await blockersOf(runId))[key];
}

describe('GET /v1/runs/{id}/blockers', () => {
  it('answers 404 for an unknown run, a malformed id and another tenant’s run', async () => {
    expect((await h.call('GET', '/v1/runs/00000000-0000-4000-8000-000000000000/blockers')).status).toBe(404);
    expect((await h.call('GET', '/v1/runs/nope/blockers')).status).toBe(404);
    const runId = await start(await define(pauseGraph()));
    expect((await h.call('GET', `/v1/runs/${runId}/blockers`, { token: KEYS.b })).status).toBe(404);
    await h.call('POST', `/v1/runs/${runId}/cancel`, { body: {} });
  });

  it('reports gate on a parked Pause and upstream behind it, then breakpoint and runPaused once decided', async () => {
    const runId = await start(await define(pauseGraph()));
    const gate = await until(runId, 'gate', 'gate');
    expect(gate).toMatchObject({ status: 'WaitingForApproval', details: { decisionKind: 'Approve', scope: 'run' } });
    expect(Date.parse(gate.since)).not.toBeNaN();
    expect((await blockersOf(runId))['yes']).toMatchObject({ kind: 'upstream', status: 'Pending', details: { waitingOn: ['gate'] } });

    expect((await h.call('PUT', `/v1/runs/${runId}/breakpoints`, { body: { nodeKeys: ['yes'] } })).status).toBe(200);
    expect((await h.call('POST', `/v1/runs/${runId}/nodes/gate/decide`, { body: { operationId: 'op-1', decision: 'Approve' } })).status).toBe(202);
    await until(runId, 'yes', 'breakpoint');
    expect((await blockersOf(runId))['no']).toBeUndefined(); // skipped: terminal nodes have no blocker

    expect((await h.call('POST', `/v1/runs/${runId}/pause`)).status).toBe(202);
    expect((await h.call('PUT', `/v1/runs/${runId}/breakpoints`, { body: { nodeKeys: [] } })).status).toBe(200);
    await until(runId, 'yes', 'runPaused');
    await h.call('POST', `/v1/runs/${runId}/resume`);
    await waitFor(async () => (await h.call('GET', `/v1/runs/${runId}`)).body.run.status === 'Completed', { timeoutMs: 20_000, description: 'completed' });
    const done = await h.call('GET', `/v1/runs/${runId}/blockers`);
    expect(done.body).toMatchObject({ status: 'Completed', blockers: [] });
  }, 60_000);

  it('reports laneBacklog on the lane and held in the dispatch window with position and depth, runSlot with the tenant usage, and shardOwner once no dispatcher holds the shard', async () => {
    const def = await define(toolGraph);
    const first = await start(def);
    const b1 = await until(first, 't', 'laneBacklog');
    expect(b1).toMatchObject({ status: 'Queued', details: { window: 'lane', position: 1, depth: 1 } });
    expect((await blockersOf(first))['end']).toMatchObject({ kind: 'upstream', details: { waitingOn: ['t'] } });
    const second = await start(def);
    const b2 = await until(second, 't', 'laneBacklog');
    // LANE_WINDOW_TOOL 2: both jobs are on the lane
    expect(b2.details).toMatchObject({ window: 'lane', position: 2, depth: 2 });

    // the lane holds LANE_WINDOW_TOOL (2) waiting jobs: the third is held in the dispatch window
    const third = await start(def);
    const b3 = await until(third, 't', 'laneBacklog');
    expect(b3.details).toMatchObject({ window: 'held', position: 1, depth: 1 });

    // every slot held by a Running run: the next two wait for a slot, the later behind the earlier
    const fourth = await start(def);
    const fifth = await start(def);
    expect((await blockersOf(fourth))['start']).toMatchObject({ kind: 'runSlot', status: 'Pending', details: { live: SLOTS, limit: SLOTS, ahead: 0 } });
    expect((await blockersOf(fifth))['t']).toMatchObject({ kind: 'runSlot', details: { ahead: 1 } });

    await dispatcher!.stop();
    dispatcher = null;
    const orphan = await until(first, 't', 'shardOwner');
    expect(orphan.details).toMatchObject({ owner: null });
    expect(typeof orphan.details.shard).toBe('number');
  }, 60_000);
});
