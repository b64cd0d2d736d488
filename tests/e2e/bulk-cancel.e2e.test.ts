/**
 * Bulk cancel of 1,000 runs by filter (issue #17) through the whole cluster: the dry-run
 * count equals the job's total and its final done count, the dispatcher working the job is
 * killed (SIGKILL) mid-way, and the other dispatcher takes the job over from its last
 * recorded batch and finishes it; every matched run ends Cancelled with its usual events,
 * runs outside the filter are untouched, and resubmitting the request answers the same job.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startE2eCluster, waitFor, type E2eCluster } from '@flowline/testing';

const RUNS = 1000;
const gate = {
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

describe('a bulk cancel of 1,000 runs', () => {
  let c: E2eCluster;

  beforeAll(async () => {
    c = await startE2eCluster({
      dispatchers: 2,
      toolWorkers: 0,
      // small batches with a pause between them leave a window to kill the job's dispatcher mid-way
      env: { BULK_BATCH_SIZE: '50', BULK_BATCH_PAUSE_MS: '100', BULK_LEASE_MS: '2000', BULK_POLL_MS: '200', MAX_CONCURRENT_RUNS: '2000' },
    });
  }, 90_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') process.stdout.write(`${c.lines.slice(-60).join('\n')}\n`);
  });

  afterAll(async () => {
    await c?.close();
  });

  it('survives the kill of the dispatcher working it: the other one resumes from the cursor and every matched run is cancelled once', async () => {
    const client = c.api.client;
    const batch = randomUUID().slice(0, 8);
    const definitionId = await c.api.createDefinition('bulk-gate', gate);
    const ids: string[] = [];
    // 1,000 starts, 40 at a time
    for (let i = 0; i < RUNS; i += 40) {
      const chunk = await Promise.all(
        Array.from({ length: Math.min(40, RUNS - i) }, () => client.runs.start(definitionId, { requestId: randomUUID(), input: {}, metadata: { batch } })),
      );
      ids.push(...chunk.map((r) => r.runId));
    }
    const bystander = (await client.runs.start(definitionId, { input: {}, metadata: { batch: `${batch}-other` } })).runId;
    const filter = { metadata: { batch } };

    const dry = await client.runs.bulk({ action: 'cancel', filter, dryRun: true });
    expect(dry).toEqual({ count: RUNS });
    const requestId = `bulk-${batch}`;
    const sub = await client.runs.bulk({ action: 'cancel', filter, requestId });
    expect(sub).toEqual({ bulkId: expect.any(String), count: RUNS });

    // mid-way: some batches recorded, most not
    const mid = await waitFor(
      async () => {
        const j = await client.runs.bulkProgress(sub.bulkId);
        return j.done >= 100 && j.done <= RUNS / 2 ? j : false;
      },
      { timeoutMs: 60_000, intervalMs: 25, description: 'bulk job part-way' },
    );
    expect(mid.status).toBe('Running');
    const owner = (await c.db.pool.query<{ lease_owner: string }>('select lease_owner from bulk_jobs where id = $1', [sub.bulkId])).rows[0]!.lease_owner;
    expect(owner).toMatch(/^dispatcher-[12]$/);
    await c.cluster.kill(owner, 'SIGKILL');

    const done = await waitFor(
      async () => {
        const j = await client.runs.bulkProgress(sub.bulkId);
        return j.status === 'Completed' || j.status === 'Failed' ? j : false;
      },
      { timeoutMs: 60_000, intervalMs: 200, description: 'bulk job finished by the survivor' },
    );
    expect(done).toMatchObject({ bulkId: sub.bulkId, action: 'cancel', status: 'Completed', total: RUNS, done: RUNS, failed: 0 });
    const row = (await c.db.pool.query<{ claims: number; lease_owner: string | null }>('select claims, lease_owner from bulk_jobs where id = $1', [sub.bulkId])).rows[0]!;
    expect(row.claims).toBeGreaterThanOrEqual(2);
    const outcomes = await c.db.pool.query<{ outcome: string; n: number }>(
      'select outcome, count(*)::int as n from bulk_job_runs where bulk_id = $1 group by outcome',
      [sub.bulkId],
    );
    // each run processed once; a run whose verb the killed dispatcher applied but did not record reads noop on replay
    expect(outcomes.rows.reduce((n, r) => n + r.n, 0)).toBe(RUNS);
    expect(outcomes.rows.every((r) => r.outcome === 'applied' || r.outcome === 'noop')).toBe(true);

    // every matched run ends Cancelled (the survivor owns every shard by now), the bystander waits on
    await waitFor(
      async () => {
        const r = await c.db.pool.query<{ n: number }>(`select count(*)::int as n from runs where metadata @> $1::jsonb and status = 'Cancelled'`, [JSON.stringify(filter.metadata)]);
        return r.rows[0]!.n === RUNS;
      },
      { timeoutMs: 60_000, intervalMs: 250, description: 'every matched run Cancelled' },
    );
    expect((await client.runs.get(bystander)).run.status).not.toMatch(/Cancel/);
    const listed = await client.runs.list({ metadata: [`batch:${batch}`], status: ['Cancelled'], limit: 200 });
    expect(listed.items).toHaveLength(200);
    expect(listed.nextCursor).not.toBeNull();
    // a run's usual verb events, the job named in the cancel's reason
    const events = await client.runs.allEvents(ids[0]!);
    const cancelled = events.find((e) => e.kind === 'run.cancelled');
    expect(cancelled?.detail).toMatchObject({ reason: `bulk cancel ${sub.bulkId}` });
    expect(events.filter((e) => e.kind === 'run.cancelled')).toHaveLength(1);

    // nothing live is left to match; the same request again is the same job
    expect(await client.runs.bulk({ action: 'cancel', filter, dryRun: true })).toEqual({ count: 0 });
    expect(await client.runs.bulk({ action: 'cancel', filter, requestId })).toEqual(sub);
  }, 180_000);
});
