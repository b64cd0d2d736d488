import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, insertRunRows, runRowCounts, type TestDatabase } from '@flowline/testing';
import { pruneExpiredRuns, tenantsWithTerminalRuns, withRetentionLock } from './retention';

const DAY = 86_400_000;
const NOW = Date.now();
const ago = (days: number) => new Date(NOW - days * DAY);
const CUTOFF = ago(7);

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

const gone = { runs: 0, events: 0, node_runs: 0, intents: 0, messages: 0, agent_steps: 0 };
const kept = { runs: 1, events: 2, node_runs: 2, intents: 1, messages: 1, agent_steps: 1 };

async function expectRows(ids: readonly string[], expected: typeof gone) {
  const counts = await runRowCounts(db.pool, ids);
  for (const id of ids) expect({ id, ...counts.get(id) }).toEqual({ id, ...expected });
}

describe('pruneExpiredRuns', () => {
  it('deletes at most `limit` runs per batch, oldest finished first, with every row naming them', async () => {
    const t = 'batch';
    // finished 20, 19, … 14 days ago: all expired at a 7-day cutoff
    const expired: string[] = [];
    for (let d = 20; d >= 14; d--) expired.push(await insertRunRows(db.pool, { tenantId: t, status: 'Completed', finishedAt: ago(d) }));
    const fresh = await insertRunRows(db.pool, { tenantId: t, status: 'Completed', finishedAt: ago(6) });

    const first = await pruneExpiredRuns(db.pool, t, CUTOFF, 3);
    expect(first).toEqual({ runs: 3, events: 6, nodeRuns: 6, intents: 3, messages: 3, conversations: 0 });
    await expectRows(expired.slice(0, 3), gone);
    await expectRows([...expired.slice(3), fresh], kept);

    expect((await pruneExpiredRuns(db.pool, t, CUTOFF, 3)).runs).toBe(3);
    await expectRows(expired.slice(3, 6), gone);
    expect((await pruneExpiredRuns(db.pool, t, CUTOFF, 3)).runs).toBe(1);
    expect((await pruneExpiredRuns(db.pool, t, CUTOFF, 3)).runs).toBe(0);
    await expectRows(expired, gone);
    await expectRows([fresh], kept);
  });

  it("deletes a pruned run's signals, consumed or not, and keeps a kept run's", async () => {
    const t = 'signals';
    const expired = await insertRunRows(db.pool, { tenantId: t, status: 'Completed', finishedAt: ago(9) });
    const fresh = await insertRunRows(db.pool, { tenantId: t, status: 'Completed', finishedAt: ago(1) });
    for (const [runId, req, consumed] of [[expired, 'a', true], [expired, 'b', false], [fresh, 'c', false]] as const) {
      await db.pool.query(
        `INSERT INTO run_signals (run_id, tenant_id, channel, payload, request_id, consumed_at) VALUES ($1, $2, 'review', '{}', $3, $4)`,
        [runId, t, req, consumed ? new Date() : null],
      );
    }
    await pruneExpiredRuns(db.pool, t, CUTOFF, 10);
    const left = await db.pool.query('SELECT request_id FROM run_signals WHERE tenant_id = $1 ORDER BY request_id', [t]);
    expect(left.rows).toEqual([{ request_id: 'c' }]);
  });

  it('takes only terminal runs of the tenant finished strictly before the cutoff', async () => {
    const t = 'exact';
    const pruned = [
      await insertRunRows(db.pool, { tenantId: t, status: 'Completed', finishedAt: ago(8) }),
      await insertRunRows(db.pool, { tenantId: t, status: 'Failed', finishedAt: ago(30) }),
      await insertRunRows(db.pool, { tenantId: t, status: 'Cancelled', finishedAt: ago(400) }),
    ];
    const survivors = [
      await insertRunRows(db.pool, { tenantId: t, status: 'Completed', finishedAt: CUTOFF }),
      await insertRunRows(db.pool, { tenantId: t, status: 'Failed', finishedAt: ago(1) }),
      // live runs, however old (a finished_at on a live run is not a reason either)
      await insertRunRows(db.pool, { tenantId: t, status: 'Running', finishedAt: null }),
      await insertRunRows(db.pool, { tenantId: t, status: 'Pending', finishedAt: null }),
      await insertRunRows(db.pool, { tenantId: t, status: 'Cancelling', finishedAt: null }),
      await insertRunRows(db.pool, { tenantId: t, status: 'WaitingForApproval', finishedAt: null }),
      // another tenant's expired run
      await insertRunRows(db.pool, { tenantId: 'exact-other', status: 'Completed', finishedAt: ago(100) }),
    ];
    await db.pool.query(`UPDATE runs SET finished_at = $2 WHERE id = $1`, [survivors[3], ago(90)]);

    expect((await pruneExpiredRuns(db.pool, t, CUTOFF, 100)).runs).toBe(3);
    await expectRows(pruned, gone);
    await expectRows(survivors, kept);
  });

  it('keeps a run tied to a live or kept parent or to a live child', async () => {
    const t = 'family';
    const liveParent = await insertRunRows(db.pool, { tenantId: t, status: 'Running', finishedAt: null });
    const childOfLive = await insertRunRows(db.pool, { tenantId: t, status: 'Completed', finishedAt: ago(50), parentRunId: liveParent });
    const keptParent = await insertRunRows(db.pool, { tenantId: t, status: 'Completed', finishedAt: ago(2) });
    const childOfKept = await insertRunRows(db.pool, { tenantId: t, status: 'Completed', finishedAt: ago(50), parentRunId: keptParent });
    const parentOfLive = await insertRunRows(db.pool, { tenantId: t, status: 'Cancelled', finishedAt: ago(50) });
    const liveChild = await insertRunRows(db.pool, { tenantId: t, status: 'Cancelling', finishedAt: null, parentRunId: parentOfLive });
    const expiredParent = await insertRunRows(db.pool, { tenantId: t, status: 'Failed', finishedAt: ago(40) });
    const childOfExpired = await insertRunRows(db.pool, { tenantId: t, status: 'Failed', finishedAt: ago(41), parentRunId: expiredParent });

    expect((await pruneExpiredRuns(db.pool, t, CUTOFF, 100)).runs).toBe(2);
    await expectRows([expiredParent, childOfExpired], gone);
    await expectRows([liveParent, childOfLive, keptParent, childOfKept, parentOfLive, liveChild], kept);
  });

  it('unbinds a conversation bound to a pruned run and deletes its messages', async () => {
    const t = 'chat';
    const old = await insertRunRows(db.pool, { tenantId: t, status: 'Completed', finishedAt: ago(10), conversationId: 'c1' });
    const other = await insertRunRows(db.pool, { tenantId: t, status: 'Completed', finishedAt: ago(9), conversationId: 'c2' });
    await db.pool.query(`UPDATE conversations SET bound_run_id = NULL WHERE tenant_id = $1 AND id = 'c2'`, [t]);
    const recent = await insertRunRows(db.pool, { tenantId: t, status: 'Completed', finishedAt: ago(1), conversationId: 'c3' });

    expect(await pruneExpiredRuns(db.pool, t, CUTOFF, 100)).toMatchObject({ runs: 2, messages: 2, conversations: 1 });
    const convs = await db.pool.query<{ id: string; bound_run_id: string | null }>(
      `SELECT id, bound_run_id FROM conversations WHERE tenant_id = $1 ORDER BY id`,
      [t],
    );
    expect(convs.rows).toEqual([
      { id: 'c1', bound_run_id: null },
      { id: 'c2', bound_run_id: null },
      { id: 'c3', bound_run_id: recent },
    ]);
    await expectRows([old, other], gone);
    await expectRows([recent], kept);
  });

  it('skips a run row another transaction holds instead of waiting for it', async () => {
    const t = 'locked';
    const held = await insertRunRows(db.pool, { tenantId: t, status: 'Completed', finishedAt: ago(30) });
    const free = await insertRunRows(db.pool, { tenantId: t, status: 'Completed', finishedAt: ago(20) });
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT 1 FROM runs WHERE id = $1 FOR UPDATE', [held]);
      expect((await pruneExpiredRuns(db.pool, t, CUTOFF, 100)).runs).toBe(1);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    await expectRows([free], gone);
    await expectRows([held], kept);
    expect((await pruneExpiredRuns(db.pool, t, CUTOFF, 100)).runs).toBe(1);
    await expectRows([held], gone);
  });

  it('finds expired runs on the partial index of terminal runs by tenant and finish time', async () => {
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL enable_seqscan = off');
      const plan = await client.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN SELECT id FROM runs WHERE tenant_id = 'x' AND status IN ('Completed', 'Failed', 'Cancelled') AND finished_at < now() ORDER BY finished_at LIMIT 10`,
      );
      expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).toContain('runs_tenant_terminal_finished_idx');
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
  });

  it('refuses a limit that is not a positive integer', async () => {
    await expect(pruneExpiredRuns(db.pool, 'x', CUTOFF, 0)).rejects.toThrow('limit must be a positive integer');
  });
});

describe('tenantsWithTerminalRuns', () => {
  it('lists each tenant holding a terminal run once, in order, and no tenant with only live runs', async () => {
    await insertRunRows(db.pool, { tenantId: 'only-live', status: 'Running', finishedAt: null });
    await insertRunRows(db.pool, { tenantId: 'zz-two', status: 'Completed', finishedAt: ago(1) });
    await insertRunRows(db.pool, { tenantId: 'zz-two', status: 'Failed', finishedAt: ago(2) });
    const tenants = await tenantsWithTerminalRuns(db.pool);
    expect(tenants).not.toContain('only-live');
    expect(tenants.filter((x) => x === 'zz-two')).toHaveLength(1);
    expect(tenants).toEqual([...tenants].sort());
    const all = await db.pool.query<{ tenant_id: string }>(
      `SELECT DISTINCT tenant_id FROM runs WHERE status IN ('Completed', 'Failed', 'Cancelled') ORDER BY tenant_id`,
    );
    expect(tenants).toEqual(all.rows.map((r) => r.tenant_id));
  });
});

describe('withRetentionLock', () => {
  it('lets one holder prune at a time and frees the lock after', async () => {
    let inner: unknown = 'not run';
    const outer = await withRetentionLock(db.pool, async () => {
      inner = await withRetentionLock(db.pool, async () => 'second');
      return 'first';
    });
    expect(outer).toBe('first');
    expect(inner).toBeNull();
    expect(await withRetentionLock(db.pool, async () => 'again')).toBe('again');
  });
});
