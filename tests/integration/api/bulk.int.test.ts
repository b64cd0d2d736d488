/**
 * Run metadata, run search and bulk actions by filter (issue #17) through the real app, the
 * real dispatcher, its bulk runner and a tool worker (in-process), Postgres and Redis.
 * The 1,000-run cancel surviving a dispatcher kill is tests/e2e/bulk-cancel.e2e.test.ts.
 */
import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import { waitFor } from '@flowline/testing';
import { createToolRegistry } from '@flowline/tools';
// The real dispatcher, bulk runner and tool worker, run in-process (tests only; services never import each other).
import { createDispatcher, type Dispatcher } from '../../../services/dispatcher/src/dispatcher';
import { dispatcherConfigSchema } from '../../../services/dispatcher/src/config';
import { processBulkJob, startBulkRunner, type BulkRunnerDeps } from '../../../services/dispatcher/src/bulk-jobs';
import { claimBulkJob, recordBulkBatch, requestCancel } from '@flowline/db';
import { createToolWorker, type ToolWorker } from '../../../services/worker-tool/src/worker';
import { KEYS, startHarness, type Harness } from '../../../services/api/test/harness';

const SHARD_COUNT = 4;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are asserted member by member
type Body = Record<string, any>;

const gateGraph = {
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 'gate', kind: 'Pause', config: { prompt: 'go?', allowedDecisions: ['Approve'] } },
    { key: 'end', kind: 'End', config: { outcome: 'done' } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 'gate' },
    { key: 'e2', from: 'gate', to: 'end' },
  ],
};
/** Start → t(test_fail until attempt `until`, one attempt per budget) → End. */
const failGraph = (until: number) => ({
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 't', kind: 'Tool', maxAttempts: 1, config: { toolName: 'test_fail', arguments: { untilAttempt: until } } },
    { key: 'end', kind: 'End', config: { outcome: 'done' } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 't' },
    { key: 'e2', from: 't', to: 'end' },
  ],
});
const echoGraph = (label: string) => ({
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 't', kind: 'Tool', config: { toolName: 'echo', arguments: { label } } },
    { key: 'end', kind: 'End', config: { outcome: 'done' } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 't' },
    { key: 'e2', from: 't', to: 'end' },
  ],
});

let h: Harness;
let laneRedis: Redis;
let dispatcher: Dispatcher | null = null;
let worker: ToolWorker | null = null;
let bulk: { stop(): Promise<void> } | null = null;
let runnerDeps: Omit<BulkRunnerDeps, 'owner'> & { pollMs: number };

beforeAll(async () => {
  h = await startHarness({ shardCount: SHARD_COUNT, maxBulkRuns: 50, metadata: { maxKeys: 4, maxValueChars: 32 } });
  laneRedis = new Redis(h.redisUrl, { maxRetriesPerRequest: null });
  const config = dispatcherConfigSchema.parse({
    DATABASE_URL: h.db.url,
    REDIS_URL: h.redisUrl,
    QUEUE_PREFIX: h.prefix,
    DISPATCHER_ID: 'bulk-test',
    SHARD_COUNT: String(SHARD_COUNT),
    SHARD_LEASE_MS: '1500',
    DISPATCH_SWEEP_MS: '100',
    MAX_CONCURRENT_RUNS: '1000',
  });
  const log = pino({ level: 'silent' });
  dispatcher = createDispatcher({ config, pool: h.db.pool, redis: laneRedis, log });
  await dispatcher.start();
  runnerDeps = { pool: h.db.pool, redis: laneRedis, queuePrefix: h.prefix, shardCount: SHARD_COUNT, batchSize: 3, leaseMs: 5000, batchPauseMs: 0, errorRateMinRuns: 5, pollMs: 100, log };
  bulk = startBulkRunner({ ...runnerDeps, owner: 'bulk-test' });
  const registry = await createToolRegistry({ testTools: true });
  worker = createToolWorker({ redis: laneRedis, registry, logger: log, prefix: h.prefix, shardCount: SHARD_COUNT, concurrency: 4, shutdownGraceMs: 200 });
  await worker.start();
});
afterAll(async () => {
  await bulk?.stop();
  await worker?.stop();
  await dispatcher?.stop();
  laneRedis?.disconnect();
  await h?.close();
});

async function define(graph: unknown, token: string = KEYS.a): Promise<string> {
  const res = await h.call('POST', '/v1/definitions', { body: { name: `bulk-${randomUUID()}`, graph }, token });
  expect(res.status).toBe(201);
  return res.body.id as string;
}
async function start(defId: string, metadata?: unknown, token: string = KEYS.a): Promise<string> {
  const res = await h.call('POST', `/v1/definitions/${defId}/runs`, { body: { input: {}, ...(metadata !== undefined ? { metadata } : {}) }, token });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.runId as string;
}
async function run(runId: string, token: string = KEYS.a): Promise<Body> {
  return (await h.call('GET', `/v1/runs/${runId}`, { token })).body as Body;
}
async function until(runId: string, pred: (d: Body) => boolean, what: string): Promise<Body> {
  return waitFor(
    async () => {
      const d = await run(runId);
      return pred(d) ? d : false;
    },
    { timeoutMs: 20_000, intervalMs: 50, description: `run ${runId}: ${what}` },
  );
}
const waiting = (id: string) => until(id, (d) => d.run.status === 'WaitingForApproval', 'waiting on its gate');
const finished = (id: string) => until(id, (d) => ['Completed', 'Failed', 'Cancelled'].includes(d.run.status), 'finished');
async function ids(query: string, token: string = KEYS.a): Promise<string[]> {
  const res = await h.call('GET', `/v1/runs?limit=200&${query}`, { token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.items as Body[]).map((r) => r.id as string).sort();
}
async function bulkCall(body: unknown, token: string = KEYS.a, headers?: Record<string, string>) {
  return h.call('POST', '/v1/runs/bulk', { body, token, ...(headers ? { headers } : {}) });
}
async function jobDone(bulkId: string, token: string = KEYS.a): Promise<Body> {
  return waitFor(
    async () => {
      const res = await h.call('GET', `/v1/bulk-jobs/${bulkId}`, { token });
      return res.body.status === 'Completed' || res.body.status === 'Failed' ? res.body : false;
    },
    { timeoutMs: 20_000, intervalMs: 50, description: `bulk job ${bulkId} finished` },
  );
}

describe('run metadata', () => {
  it('is stored at start, returned on the summary and in lists, and kept by a fork', async () => {
    const def = await define(echoGraph('m'));
    const id = await start(def, { batch: 'b1', 'team.name': 'x-y' });
    const done = await finished(id);
    expect(done.run.metadata).toEqual({ batch: 'b1', 'team.name': 'x-y' });
    const list = await h.call('GET', `/v1/runs?definitionId=${def}`);
    expect(list.body.items[0].metadata).toEqual({ batch: 'b1', 'team.name': 'x-y' });
    const fork = await h.call('POST', `/v1/runs/${id}/fork`, { body: { fromNodeKey: 't' } });
    expect(fork.status).toBe(202);
    expect((await run(fork.body.runId)).run.metadata).toEqual({ batch: 'b1', 'team.name': 'x-y' });
    const plain = await start(def);
    expect((await run(plain)).run.metadata).toEqual({});
  });

  it('refuses a bad key, a long value, too many keys and a non-string value with 400 MetadataInvalid naming the key', async () => {
    const def = await define(echoGraph('bad'));
    for (const [metadata, key] of [
      [{ 'bad key': 'x' }, 'metadata.bad key'],
      [{ long: 'v'.repeat(33) }, 'metadata.long'],
      [{ a: '1', b: '2', c: '3', d: '4', e: '5' }, 'metadata'],
      [{ n: 1 }, 'metadata.n'],
      [['x'], 'metadata'],
    ] as const) {
      const res = await h.call('POST', `/v1/definitions/${def}/runs`, { body: { metadata } });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('MetadataInvalid');
      expect(res.body.error.details).toContainEqual(expect.objectContaining({ key }));
    }
    expect((await h.call('GET', `/v1/runs?definitionId=${def}`)).body.items).toEqual([]);
  });
});

describe('run search', () => {
  it('filters by metadata (every pair), status (several), failure class, definition version, created and finished ranges', async () => {
    const tag = randomUUID().slice(0, 8);
    const def = await define(failGraph(99));
    const failed = await start(def, { tag, kind: 'fail' });
    const f = await finished(failed);
    expect(f.run.status).toBe('Failed');
    const put = await h.call('PUT', `/v1/definitions/${def}`, { body: { graph: failGraph(1), version: 1 } });
    expect(put.status).toBe(200);
    const ok = await start(def, { tag, kind: 'ok' });
    const o = await finished(ok);
    expect(o.run.status).toBe('Completed');
    const gateDef = await define(gateGraph);
    const live = await start(gateDef, { tag, kind: 'live' });
    await waiting(live);

    expect(await ids(`metadata=tag:${tag}`)).toEqual([failed, ok, live].sort());
    expect(await ids(`metadata=tag:${tag}&metadata=kind:ok`)).toEqual([ok]);
    expect(await ids(`metadata=tag:${tag}&metadata=kind:none`)).toEqual([]);
    expect(await ids(`metadata=tag:${tag}&status=Failed,Completed`)).toEqual([failed, ok].sort());
    expect(await ids(`metadata=tag:${tag}&status=Failed&status=WaitingForApproval`)).toEqual([failed, live].sort());
    expect(await ids(`metadata=tag:${tag}&failureClass=${f.run.failureClass}`)).toEqual([failed]);
    expect(f.run.failureClass).not.toBe('None');
    expect(await ids(`definitionId=${def}&definitionVersion=1`)).toEqual([failed]);
    expect(await ids(`definitionId=${def}&definitionVersion=2`)).toEqual([ok]);
    // created: [failed.createdAt, ok.createdAt) holds the failed run only
    expect(await ids(`metadata=tag:${tag}&createdAfter=${f.run.createdAt}&createdBefore=${o.run.createdAt}`)).toEqual([failed]);
    expect(await ids(`metadata=tag:${tag}&createdAfter=${o.run.createdAt}`)).toEqual([ok, live].sort());
    // finished ranges never match the live run
    expect(await ids(`metadata=tag:${tag}&finishedAfter=${f.run.finishedAt}`)).toEqual([failed, ok].sort());
    expect(await ids(`metadata=tag:${tag}&finishedBefore=${o.run.finishedAt}`)).toEqual([failed]);
    // another tenant sees none of them
    expect(await ids(`metadata=tag:${tag}`, KEYS.b)).toEqual([]);
  });

  it('pages a filtered list with the keyset cursor', async () => {
    const tag = randomUUID().slice(0, 8);
    const def = await define(gateGraph);
    const all = [];
    for (let i = 0; i < 5; i++) all.push(await start(def, { page: tag }));
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: { body: Body } = await h.call('GET', `/v1/runs?limit=2&metadata=page:${tag}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      seen.push(...res.body.items.map((r: Body) => r.id));
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(seen).toHaveLength(5);
    expect([...seen].sort()).toEqual([...all].sort());
    expect(seen).toEqual([...all].reverse());
  });

  it('answers a keyed 400 for each bad filter value', async () => {
    for (const [q, key] of [
      ['status=Done', 'status'],
      ['failureClass=Oops', 'failureClass'],
      ['definitionVersion=0', 'definitionVersion'],
      ['definitionVersion=x', 'definitionVersion'],
      ['metadata=novalue', 'metadata'],
      ['metadata=bad%20key:x', 'metadata.bad key'],
      ['createdAfter=yesterday', 'createdAfter'],
      ['createdBefore=2026-01-01', 'createdBefore'],
      ['finishedAfter=2026-13-01T00:00:00Z', 'finishedAfter'],
      ['finishedBefore=1', 'finishedBefore'],
    ] as const) {
      const res = await h.call('GET', `/v1/runs?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body.error.code).toBe('ValidationFailed');
      expect(res.body.error.details, q).toContainEqual(expect.objectContaining({ key }));
    }
  });
});

describe('POST /v1/runs/bulk', () => {
  it('cancels the live runs a filter matches: the dry-run count is the job total and the final done count; other runs are untouched', async () => {
    const tag = randomUUID().slice(0, 8);
    const def = await define(gateGraph);
    const target = [];
    for (let i = 0; i < 7; i++) target.push(await start(def, { batch: tag }));
    const other = await start(def, { batch: `${tag}-other` });
    for (const id of [...target, other]) await waiting(id);

    const dry = await bulkCall({ action: 'cancel', filter: { metadata: { batch: tag } }, dryRun: true });
    expect(dry.status).toBe(200);
    expect(dry.body).toEqual({ count: 7 });
    expect((await run(target[0]!)).run.status).toBe('WaitingForApproval');

    const sub = await bulkCall({ action: 'cancel', filter: { metadata: { batch: tag } }, requestId: `cancel-${tag}` });
    expect(sub.status).toBe(202);
    expect(sub.body).toEqual({ bulkId: expect.any(String), count: 7 });
    const job = await jobDone(sub.body.bulkId);
    expect(job).toMatchObject({ bulkId: sub.body.bulkId, action: 'cancel', status: 'Completed', total: 7, done: 7, failed: 0 });
    for (const id of target) {
      const d = await finished(id);
      expect(d.run.status).toBe('Cancelled');
      const events = (await h.call('GET', `/v1/runs/${id}/events`)).body.events as Body[];
      expect(events.map((e) => e.kind)).toContain('run.cancelled');
    }
    expect((await run(other)).run.status).toBe('WaitingForApproval');
    // each cancel intent the job wrote names the principal that submitted it
    const principals = await h.db.pool.query(`SELECT DISTINCT principal FROM intents WHERE run_id = ANY($1::uuid[]) AND kind = 'cancel'`, [target]);
    expect(principals.rows).toEqual([{ principal: `key:${createHash('sha256').update(KEYS.a, 'utf8').digest('hex').slice(0, 16)}` }]);

    // the same request again: the same job, nothing new
    const again = await bulkCall({ action: 'cancel', filter: { metadata: { batch: tag } }, requestId: `cancel-${tag}` });
    expect(again.status).toBe(202);
    expect(again.body).toEqual(sub.body);
    const header = await bulkCall({ action: 'cancel', filter: { metadata: { batch: tag } } }, KEYS.a, { 'idempotency-key': `cancel-${tag}` });
    expect(header.body).toEqual(sub.body);
    // the id used for another action
    const reused = await bulkCall({ action: 'resume', filter: { metadata: { batch: tag } }, requestId: `cancel-${tag}` });
    expect(reused.status).toBe(409);
    expect(reused.body.error.code).toBe('RequestIdReused');
    // the filter now matches no live run
    expect((await bulkCall({ action: 'cancel', filter: { metadata: { batch: tag } }, dryRun: true })).body).toEqual({ count: 0 });
  });

  it('retries the failed nodes of the Failed runs a filter matches; the runs complete', async () => {
    const tag = randomUUID().slice(0, 8);
    const def = await define(failGraph(2));
    const runs = [await start(def, { r: tag }), await start(def, { r: tag })];
    for (const id of runs) expect((await finished(id)).run.status).toBe('Failed');
    const sub = await bulkCall({ action: 'retry-failed', filter: { metadata: { r: tag }, status: 'Failed' } });
    expect(sub.status).toBe(202);
    expect(sub.body.count).toBe(2);
    expect(await jobDone(sub.body.bulkId)).toMatchObject({ status: 'Completed', total: 2, done: 2, failed: 0 });
    for (const id of runs) expect((await until(id, (d) => d.run.status === 'Completed', 'completed after retry')).run.status).toBe('Completed');
  });

  it('resumes the paused runs and forks the runs a filter matches', async () => {
    const tag = randomUUID().slice(0, 8);
    const def = await define(gateGraph);
    const runs = [await start(def, { p: tag }), await start(def, { p: tag }), await start(def, { p: tag })];
    for (const id of runs) await waiting(id);
    for (const id of runs.slice(0, 2)) expect((await h.call('POST', `/v1/runs/${id}/pause`)).status).toBe(202);
    expect((await bulkCall({ action: 'resume', filter: { metadata: { p: tag } }, dryRun: true })).body).toEqual({ count: 2 });
    const resume = await bulkCall({ action: 'resume', filter: { metadata: { p: tag } } });
    expect(await jobDone(resume.body.bulkId)).toMatchObject({ status: 'Completed', total: 2, done: 2 });
    for (const id of runs) expect((await run(id)).run.paused).toBe(false);

    const fork = await bulkCall({ action: 'fork', filter: { metadata: { p: tag } }, fromNodeKey: 'gate' });
    expect(fork.status).toBe(202);
    expect(fork.body.count).toBe(3);
    expect(await jobDone(fork.body.bulkId)).toMatchObject({ status: 'Completed', total: 3, done: 3, failed: 0 });
    const forks = (await h.call('GET', `/v1/runs?limit=200&metadata=p:${tag}`)).body.items.filter((r: Body) => r.forkedFrom !== null);
    expect(forks.map((r: Body) => r.forkedFrom.runId).sort()).toEqual([...runs].sort());
    expect(forks.every((r: Body) => r.forkedFrom.nodeKey === 'gate' && r.metadata.p === tag)).toBe(true);
  });

  it('re-applies a batch a crashed dispatcher left unrecorded: each run acted on once, counted once, and the stale owner cannot record', async () => {
    await bulk?.stop();
    try {
      const tag = randomUUID().slice(0, 8);
      const def = await define(gateGraph);
      const runs = [];
      for (let i = 0; i < 4; i++) runs.push(await start(def, { crash: tag }));
      for (const id of runs) await waiting(id);
      const sub = await bulkCall({ action: 'cancel', filter: { metadata: { crash: tag } } });
      expect(sub.body.count).toBe(4);
      expect((await h.call('GET', `/v1/bulk-jobs/${sub.body.bulkId}`)).body.status).toBe('Pending');
      // the first claimant applies the verb to two runs (as its batch does), then dies before recording them
      const first = await claimBulkJob(h.db.pool, 'crashed', 1);
      expect(first?.id).toBe(sub.body.bulkId);
      const ordered = [...runs].sort();
      for (const id of ordered.slice(0, 2)) expect((await requestCancel(h.db.pool, 'tenantA', id, `bulk cancel ${sub.body.bulkId}`))?.outcome).toBe('cancelling');
      // its 1 ms lease is over: a second dispatcher takes the job and works it to the end
      const second = await waitFor(() => claimBulkJob(h.db.pool, 'second', 5000), { timeoutMs: 5000, intervalMs: 20, description: 'job claimable again' });
      expect(second).toMatchObject({ id: sub.body.bulkId, claims: 2 });
      const done = await processBulkJob({ ...runnerDeps, owner: 'second' }, second!);
      expect(done).toMatchObject({ status: 'Completed', total: 4, done: 4, failed: 0, claims: 2 });
      const outcomes = await h.db.pool.query('select run_id, outcome from bulk_job_runs where bulk_id = $1 order by run_id', [sub.body.bulkId]);
      expect(outcomes.rows.map((r) => r.outcome)).toEqual(['noop', 'noop', 'applied', 'applied']);
      // the stale owner's late record is refused, and counts nothing
      expect(await recordBulkBatch(h.db.pool, sub.body.bulkId, 'crashed', 5000, [{ runId: ordered[0]!, outcome: 'applied', reason: null }], ordered[0]!)).toBeNull();
      expect((await h.call('GET', `/v1/bulk-jobs/${sub.body.bulkId}`)).body).toMatchObject({ status: 'Completed', done: 4, failed: 0 });
      for (const id of runs) {
        await until(id, (d) => d.run.status === 'Cancelled', 'cancelled');
        const kinds = ((await h.call('GET', `/v1/runs/${id}/events`)).body.events as Body[]).map((e) => e.kind);
        expect(kinds.filter((k) => k === 'run.cancelled')).toHaveLength(1);
        const intents = await h.db.pool.query(`select count(*)::int as n from intents where run_id = $1 and kind = 'cancel'`, [id]);
        expect(intents.rows[0].n).toBe(1);
      }
    } finally {
      bulk = startBulkRunner({ ...runnerDeps, owner: 'bulk-test' });
    }
  });

  it('counts a run the action no longer applies to as failed: a fork refused on it', async () => {
    const tag = randomUUID().slice(0, 8);
    const def = await define(gateGraph);
    const id = await start(def, { nf: tag });
    await waiting(id);
    const res = await bulkCall({ action: 'fork', filter: { metadata: { nf: tag } }, fromNodeKey: 'nope' });
    expect(res.status).toBe(202);
    expect(await jobDone(res.body.bulkId)).toMatchObject({ status: 'Failed', total: 1, done: 0, failed: 1 });
  });

  it("answers 404 for another tenant's job and an unknown one, and counts only the caller's runs", async () => {
    const tag = randomUUID().slice(0, 8);
    const defB = await define(gateGraph, KEYS.b);
    const b = await start(defB, { t: tag }, KEYS.b);
    await waitFor(async () => (await run(b, KEYS.b)).run.status === 'WaitingForApproval', { timeoutMs: 20_000, intervalMs: 50, description: 'b waiting' });
    expect((await bulkCall({ action: 'cancel', filter: { metadata: { t: tag } }, dryRun: true })).body).toEqual({ count: 0 });
    const sub = await bulkCall({ action: 'cancel', filter: { metadata: { t: tag } } }, KEYS.b);
    expect(sub.body.count).toBe(1);
    expect((await h.call('GET', `/v1/bulk-jobs/${sub.body.bulkId}`)).status).toBe(404);
    expect((await h.call('GET', `/v1/bulk-jobs/${randomUUID()}`, { token: KEYS.b })).status).toBe(404);
    expect((await h.call('GET', '/v1/bulk-jobs/not-a-uuid', { token: KEYS.b })).status).toBe(404);
    expect((await jobDone(sub.body.bulkId, KEYS.b)).done).toBe(1);
  });

  it('answers keyed 400s for a bad action, filter or fork options, and BulkTooLarge over MAX_BULK_RUNS', async () => {
    for (const [body, key] of [
      [{ action: 'delete', filter: { status: 'Failed' } }, 'action'],
      [{ action: 'cancel', filter: {} }, 'filter'],
      [{ action: 'cancel' }, 'filter'],
      [{ action: 'cancel', filter: { metdata: { a: 'b' } } }, 'filter'],
      [{ action: 'cancel', filter: { status: 'Done' } }, 'filter.status'],
      [{ action: 'cancel', filter: { definitionId: 'x' } }, 'filter.definitionId'],
      [{ action: 'cancel', filter: { metadata: { 'a b': 'x' } } }, 'filter.metadata.a b'],
      [{ action: 'cancel', filter: { createdAfter: 'soon' } }, 'filter.createdAfter'],
      [{ action: 'fork', filter: { status: 'Failed' } }, 'fromNodeKey'],
      [{ action: 'cancel', filter: { status: 'Failed' }, fromNodeKey: 'x' }, 'fromNodeKey'],
    ] as const) {
      const res = await bulkCall(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('ValidationFailed');
      expect(res.body.error.details, JSON.stringify(body)).toContainEqual(expect.objectContaining({ key: expect.stringContaining(key) }));
    }
    const tag = randomUUID().slice(0, 8);
    const def = await define(gateGraph);
    const many = await Promise.all(Array.from({ length: 51 }, () => start(def, { big: tag })));
    expect(many).toHaveLength(51);
    for (const dryRun of [true, false]) {
      const res = await bulkCall({ action: 'fork', filter: { metadata: { big: tag } }, fromNodeKey: 'gate', dryRun });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('BulkTooLarge');
    }
    const jobs = await h.db.pool.query('select count(*)::int as n from bulk_jobs where filter @> $1::jsonb', [JSON.stringify({ metadata: { big: tag } })]);
    expect(jobs.rows[0].n).toBe(0);
  });
});
