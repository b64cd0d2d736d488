/**
 * Bulk migration (`POST /v1/runs/bulk` with `action: "migrate"`) through the real app, the real
 * dispatcher and tool worker (in-process), Postgres and Redis; the job is worked by the
 * dispatcher's bulk runner (`processBulkJob`) called step by step, so the canary and
 * error-rate pauses are observed between claims. The 1,000-run version with a dispatcher
 * kill is tests/e2e/bulk-migrate.e2e.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import { claimBulkJob } from '@flowline/db';
import { pauseMigrationPair, waitFor } from '@flowline/testing';
import { processBulkJob, type BulkRunnerDeps } from '../../../services/dispatcher/src/bulk-jobs';
import { KEYS, startHarness, type Harness } from '../../../services/api/test/harness';
import { startInProcessLanes, type InProcessLanes } from './in-process-lanes';
import { defineGraph, runFinished, updateGraph, type Body } from './run-calls';

const SHARD_COUNT = 4;
/** v1: start → p → q → end; v2: q removed, `after` (an echo Tool) added after p: runs parked on p move, runs parked on q cannot */
const { before: v1, after: v2 } = pauseMigrationPair();

let h: Harness;
let lanes: InProcessLanes | null = null;
let redis: Redis;
let deps: BulkRunnerDeps;

beforeAll(async () => {
  h = await startHarness({ shardCount: SHARD_COUNT });
  lanes = await startInProcessLanes(h, { id: 'bulk-migrate-test', shardCount: SHARD_COUNT, toolWorker: true, env: { MAX_CONCURRENT_RUNS: '1000' } });
  redis = new Redis(h.redisUrl, { maxRetriesPerRequest: null });
  deps = { pool: h.db.pool, redis, queuePrefix: h.prefix, shardCount: SHARD_COUNT, owner: 'bulk-migrate-test', batchSize: 3, leaseMs: 5000, batchPauseMs: 0, errorRateMinRuns: 5, log: pino({ level: 'silent' }) };
});
afterAll(async () => {
  await lanes?.stop();
  redis?.disconnect();
  await h?.close();
});

const status = async (runId: string) => (await h.call('GET', `/v1/runs/${runId}`)).body as Body;
async function parkedOn(runId: string, key: string): Promise<void> {
  await waitFor(async () => (await status(runId)).nodeRuns.some((n: Body) => n.nodeKey === key && n.status === 'WaitingForApproval'), {
    timeoutMs: 20_000, intervalMs: 50, description: `run ${runId} parked on ${key}`,
  });
}
const approve = (runId: string, key: string) => h.call('POST', `/v1/runs/${runId}/nodes/${key}/decide`, { body: { operationId: randomUUID(), decision: 'Approve' } });
async function startParked(defId: string, n: number, on: 'p' | 'q'): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await h.call('POST', `/v1/definitions/${defId}/runs`, { body: { input: {} } });
    expect(res.status).toBe(202);
    ids.push(res.body.runId as string);
  }
  for (const id of ids) await parkedOn(id, 'p');
  if (on === 'q') {
    for (const id of ids) expect((await approve(id, 'p')).status).toBe(202);
    for (const id of ids) await parkedOn(id, 'q');
  }
  return ids;
}
/** A definition at v2 with `onP` runs parked on p and `onQ` on q, all started on v1. */
async function fixture(onP: number, onQ: number) {
  const defId = await defineGraph(h, v1, 'bulk-migrate');
  const p = await startParked(defId, onP, 'p');
  const q = await startParked(defId, onQ, 'q');
  await updateGraph(h, defId, v2, 1);
  return { defId, p, q };
}
const migratedEvents = async (runId: string) =>
  ((await h.call('GET', `/v1/runs/${runId}/events?limit=200`)).body.events as Body[]).filter((e) => e.kind === 'run.migrated');
/** Claims the job and works it until it pauses or finishes (the dispatcher's runner, one claim). */
async function work(bulkId: string): Promise<Body> {
  const job = await claimBulkJob(h.db.pool, deps.owner, deps.leaseMs);
  expect(job?.id).toBe(bulkId);
  await processBulkJob(deps, job!);
  return (await h.call('GET', `/v1/bulk-jobs/${bulkId}`)).body as Body;
}

describe('a bulk migrate', () => {
  it('migrates its canary share, pauses until resumed, then moves every compatible run once and lists the others with reasons', async () => {
    const { defId, p, q } = await fixture(8, 2);
    const sub = await h.call('POST', '/v1/runs/bulk', { body: { action: 'migrate', filter: { definitionId: defId }, toVersion: 2, canaryPercent: 25 } });
    expect(sub.status, JSON.stringify(sub.body)).toBe(202);
    expect(sub.body.count).toBe(10);
    const bulkId = sub.body.bulkId as string;

    const canary = await work(bulkId);
    // 25 % of 10 rounds up to 3: the first batch, cut at the canary's edge
    expect(canary).toMatchObject({ status: 'Paused', pauseReason: 'canary', total: 10, migrate: { toVersion: 2, canaryPercent: 25, maxErrorRate: null } });
    expect(canary.done + canary.failed).toBe(3);
    // a paused job is not claimed
    expect(await claimBulkJob(h.db.pool, deps.owner, deps.leaseMs)).toBeNull();

    const resumed = await h.call('POST', `/v1/bulk-jobs/${bulkId}/resume`);
    expect(resumed.status).toBe(200);
    expect(resumed.body).toMatchObject({ status: 'Running', pauseReason: null });
    const again = await h.call('POST', `/v1/bulk-jobs/${bulkId}/resume`);
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'BulkJobNotPaused' });

    const done = await work(bulkId);
    expect(done).toMatchObject({ status: 'Completed', total: 10, done: 8, failed: 2 });
    for (const id of p) expect(await migratedEvents(id)).toHaveLength(1);
    for (const id of q) expect(await migratedEvents(id)).toHaveLength(0);

    const refused = await h.call('GET', `/v1/bulk-jobs/${bulkId}/runs?outcome=refused`);
    expect(refused.status).toBe(200);
    expect(refused.body.items.map((r: Body) => r.runId).sort()).toEqual([...q].sort());
    for (const r of refused.body.items as Body[]) {
      expect(r).toMatchObject({ outcome: 'refused', reason: 'incompatible' });
      expect(r.details).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'NodeMissing', nodeKey: 'q' })]));
    }
    // a page of the applied ones, then the rest
    const page = await h.call('GET', `/v1/bulk-jobs/${bulkId}/runs?outcome=applied&limit=5`);
    expect(page.body.items).toHaveLength(5);
    const rest = await h.call('GET', `/v1/bulk-jobs/${bulkId}/runs?outcome=applied&limit=5&cursor=${page.body.nextCursor}`);
    expect(rest.body).toMatchObject({ items: expect.any(Array), nextCursor: null });
    expect([...page.body.items, ...rest.body.items].map((r: Body) => r.runId).sort()).toEqual([...p].sort());

    // a migrated run completes through the node v2 added; a refused one is still on v1, parked on q
    expect((await approve(p[0]!, 'p')).status).toBe(202);
    const fin = await runFinished(h, p[0]!);
    expect(fin.run.status).toBe('Completed');
    expect(fin.nodeRuns.find((n: Body) => n.nodeKey === 'after')).toMatchObject({ status: 'Succeeded' });
    const untouched = await h.db.pool.query('SELECT definition_version FROM runs WHERE id = $1', [q[0]]);
    expect(untouched.rows[0].definition_version).toBe(1);
  }, 60_000);

  it('counts a run moved before its batch was recorded (a crashed dispatcher) as nothing left to do, migrated once', async () => {
    const { defId, p } = await fixture(4, 0);
    const sub = await h.call('POST', '/v1/runs/bulk', { body: { action: 'migrate', filter: { definitionId: defId }, toVersion: 2 } });
    // the migration a crashed dispatcher committed without recording its batch
    expect((await h.call('POST', `/v1/runs/${p[0]}/migrate`, { body: { toVersion: 2, dryRun: false } })).body.executed).toBe(true);
    const done = await work(sub.body.bulkId as string);
    expect(done).toMatchObject({ status: 'Completed', done: 4, failed: 0 });
    const outcomes = await h.call('GET', `/v1/bulk-jobs/${sub.body.bulkId}/runs`);
    expect(outcomes.body.items.find((r: Body) => r.runId === p[0])).toMatchObject({ outcome: 'noop' });
    for (const id of p) expect(await migratedEvents(id)).toHaveLength(1);
  }, 60_000);

  it('pauses when the share of failed migrations exceeds maxErrorRate, and measures afresh after a resume', async () => {
    const { defId } = await fixture(2, 8);
    const sub = await h.call('POST', '/v1/runs/bulk', { body: { action: 'migrate', filter: { definitionId: defId }, toVersion: 2, maxErrorRate: 0.2 } });
    const bulkId = sub.body.bulkId as string;
    // batches of 3, at least 5 runs before the rate counts: at 6 processed, at least 4 failed
    const paused = await work(bulkId);
    expect(paused).toMatchObject({ status: 'Paused', pauseReason: 'errorRate' });
    expect(paused.done + paused.failed).toBe(6);
    expect((await h.call('POST', `/v1/bulk-jobs/${bulkId}/resume`)).status).toBe(200);
    // 4 runs left: fewer than the minimum sample since the resume, so the job finishes
    expect(await work(bulkId)).toMatchObject({ status: 'Completed', done: 2, failed: 8 });
  }, 60_000);

  it('refuses a bad request with keyed errors, and answers 404 for another tenant', async () => {
    const defId = await defineGraph(h, v1, 'bulk-migrate');
    await updateGraph(h, defId, v2, 1);
    const bad = async (body: unknown) => {
      const res = await h.call('POST', '/v1/runs/bulk', { body });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      return (res.body.error.details as Body[]).map((d) => d.key).sort();
    };
    expect(await bad({ action: 'migrate', filter: { status: 'Running' } })).toEqual(['filter.definitionId', 'toVersion']);
    expect(await bad({ action: 'migrate', filter: { definitionId: defId }, toVersion: 1 })).toEqual(['toVersion']);
    expect(await bad({ action: 'migrate', filter: { definitionId: defId }, toVersion: 2, canaryPercent: 100, maxErrorRate: 1 })).toEqual(['canaryPercent', 'maxErrorRate']);
    expect(await bad({ action: 'cancel', filter: { definitionId: defId }, toVersion: 2 })).toEqual(['toVersion']);
    const unknownDef = await h.call('POST', '/v1/runs/bulk', { body: { action: 'migrate', filter: { definitionId: randomUUID() }, toVersion: 2 } });
    expect(unknownDef.status).toBe(404);
    const sub = await h.call('POST', '/v1/runs/bulk', { body: { action: 'migrate', filter: { definitionId: defId }, toVersion: 2, dryRun: true } });
    expect(sub.body).toEqual({ count: 0 });
    const job = await h.call('POST', '/v1/runs/bulk', { body: { action: 'migrate', filter: { definitionId: defId }, toVersion: 2 } });
    expect((await h.call('POST', `/v1/bulk-jobs/${job.body.bulkId}/resume`, { token: KEYS.b })).status).toBe(404);
    expect((await h.call('GET', `/v1/bulk-jobs/${job.body.bulkId}/runs`, { token: KEYS.b })).status).toBe(404);
    expect((await h.call('GET', `/v1/bulk-jobs/${job.body.bulkId}/runs?cursor=nope`)).status).toBe(400);
  });
});
