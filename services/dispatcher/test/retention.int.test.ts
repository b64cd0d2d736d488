import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withRetentionLock } from '@flowline/db';
import { createTestDatabase, insertRunRows, runRowCounts, type TestDatabase } from '@flowline/testing';
import { dispatcherConfigSchema } from '../src/config';
import { prunePass, retentionPolicyOf, startRetention, type RetentionDeps } from '../src/retention';

const DAY = 86_400_000;
const ago = (days: number) => new Date(Date.now() - days * DAY);
const log = pino({ level: process.env.TEST_LOG_LEVEL ?? 'warn' });

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

function deps(over: Partial<RetentionDeps> = {}): RetentionDeps & { pruned: [string, number][] } {
  const pruned: [string, number][] = [];
  return {
    pool: db.pool,
    policy: { defaultDays: 7, tenantDays: { keep: 0 } },
    batchSize: 2,
    batchPauseMs: 0,
    log,
    metrics: { pruned: (t, n) => pruned.push([t, n]) },
    pruned,
    ...over,
  };
}

describe('the retention pass', () => {
  it('skips the pass while another replica holds the lock, then prunes in batches and reports each to the metrics', async () => {
    const expired = [
      await insertRunRows(db.pool, { tenantId: 'p1', status: 'Completed', finishedAt: ago(9) }),
      await insertRunRows(db.pool, { tenantId: 'p1', status: 'Failed', finishedAt: ago(10) }),
      await insertRunRows(db.pool, { tenantId: 'p1', status: 'Cancelled', finishedAt: ago(11) }),
    ];
    const kept = [
      await insertRunRows(db.pool, { tenantId: 'p1', status: 'Completed', finishedAt: ago(5) }),
      await insertRunRows(db.pool, { tenantId: 'keep', status: 'Completed', finishedAt: ago(500) }),
    ];
    const d = deps();
    const whileHeld = await withRetentionLock(db.pool, () => prunePass(d));
    expect(whileHeld).toBeNull();
    expect((await runRowCounts(db.pool, expired)).get(expired[0]!)!.runs).toBe(1);

    const pass = await prunePass(d);
    expect(pass).toMatchObject({ tenants: 1, batches: 2, byTenant: { p1: 3 } });
    expect(pass!.totals.runs).toBe(3);
    expect(d.pruned).toEqual([
      ['p1', 2],
      ['p1', 1],
    ]);
    const counts = await runRowCounts(db.pool, [...expired, ...kept]);
    expect(expired.map((id) => counts.get(id)!.runs)).toEqual([0, 0, 0]);
    expect(kept.map((id) => counts.get(id)!.runs)).toEqual([1, 1]);
  });

  it('ends a pass early when asked to stop', async () => {
    const id = await insertRunRows(db.pool, { tenantId: 'p2', status: 'Completed', finishedAt: ago(30) });
    const pass = await prunePass(deps({ stopping: () => true }));
    expect(pass).toMatchObject({ batches: 0 });
    expect((await runRowCounts(db.pool, [id])).get(id)!.runs).toBe(1);
  });

  it('starts no loop when no tenant has a retention', () => {
    expect(startRetention({ ...deps({ policy: { defaultDays: 0, tenantDays: { a: 0 } } }), intervalMs: 1000 })).toBeNull();
  });

  it('reads the policy from the validated options', () => {
    const c = dispatcherConfigSchema.parse({ RETENTION_DAYS: '14', TENANT_RETENTION_DAYS: 'a=1,b=0' });
    expect(retentionPolicyOf(c)).toEqual({ defaultDays: 14, tenantDays: { a: 1, b: 0 } });
    expect(dispatcherConfigSchema.safeParse({ RETENTION_DAYS: '-1' }).success).toBe(false);
    expect(dispatcherConfigSchema.safeParse({ RETENTION_BATCH_SIZE: '0' }).success).toBe(false);
    const bad = dispatcherConfigSchema.safeParse({ TENANT_RETENTION_DAYS: 'a=1,a=2' });
    expect(bad.success).toBe(false);
    expect(JSON.stringify(bad.error?.issues)).toContain("tenant 'a' is listed twice");
  });
});
