import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@flowline/testing';
import { dueRuns, findRunsWithInflightWork, reconcileInlineRunning, setWake } from '../src';
import { insertDefinition, insertRun } from './fixtures';

let db: TestDatabase;
let defId: string;
beforeAll(async () => {
  db = await createTestDatabase();
  defId = await insertDefinition(db.pool);
});
afterAll(() => db.drop());

describe('dueRuns and setWake', () => {
  it('finds runs whose wake has come in the given shards, most overdue first', async () => {
    const ago = (ms: number) => new Date(Date.now() - ms);
    const older = await insertRun(db.pool, defId, { shard: 10, wakeAt: ago(60_000) });
    const newer = await insertRun(db.pool, defId, { shard: 11, wakeAt: ago(1_000) });
    await insertRun(db.pool, defId, { shard: 10, wakeAt: new Date(Date.now() + 3_600_000) });
    await insertRun(db.pool, defId, { shard: 10, wakeAt: null });
    await insertRun(db.pool, defId, { shard: 12, wakeAt: ago(120_000) });
    expect(await dueRuns(db.pool, [10, 11], 10)).toEqual([older, newer]);
    expect(await dueRuns(db.pool, [10, 11], 1)).toEqual([older]);
    expect(await dueRuns(db.pool, [], 10)).toEqual([]);
  });

  it('makes runs due without postponing an earlier wake', async () => {
    const idle = await insertRun(db.pool, defId, { shard: 20, wakeAt: null });
    const early = await insertRun(db.pool, defId, { shard: 20, wakeAt: new Date(Date.now() - 5_000) });
    const later = Date.now() + 3_600_000;
    expect(await setWake(db.pool, [idle, early], later)).toBe(2);
    const r = await db.pool.query('SELECT id, wake_at FROM runs WHERE id = ANY($1)', [[idle, early]]);
    const wake = Object.fromEntries(r.rows.map((x) => [x.id, x.wake_at.getTime()]));
    expect(wake[idle]).toBe(later);
    expect(wake[early]).toBeLessThan(Date.now());
    await setWake(db.pool, [idle]);
    expect(await dueRuns(db.pool, [20], 10)).toEqual(expect.arrayContaining([idle, early]));
  });
});

describe('reconciliation', () => {
  it('lists Queued and Running node rows of the given shards', async () => {
    const runId = await insertRun(db.pool, defId, { shard: 30, status: 'Running' });
    await insertRun(db.pool, defId, { shard: 31, status: 'Running' });
    const inv = randomUUID();
    await db.pool.query(
      `UPDATE node_runs SET status = 'Queued', attempt = 1, invocation_id = $2, queued_at = to_timestamp(1800000000.5)
       WHERE run_id = $1 AND node_key = 'tool'`,
      [runId, inv],
    );
    await db.pool.query(
      `UPDATE node_runs SET status = 'Running', attempt = 1 WHERE run_id = (SELECT id FROM runs WHERE shard = 31) AND node_key = 'tool'`,
    );
    expect(await findRunsWithInflightWork(db.pool, [30])).toEqual([
      {
        runId,
        nodeKey: 'tool',
        kind: 'Tool',
        status: 'Queued',
        invocationId: inv,
        attempt: 1,
        queuedAt: 1_800_000_000_500,
        deadlineAt: null,
      },
    ]);
  });

  it('returns inline nodes left Running to Pending and wakes their runs with a new version', async () => {
    const runId = await insertRun(db.pool, defId, { shard: 40, status: 'Running' });
    await db.pool.query(
      `UPDATE node_runs SET status = 'Running' WHERE run_id = $1 AND node_key IN ('start', 'tool')`,
      [runId],
    );
    expect(await reconcileInlineRunning(db.pool, [40])).toEqual([{ runId, nodeKey: 'start' }]);
    const n = await db.pool.query(
      'SELECT node_key, status FROM node_runs WHERE run_id = $1 ORDER BY node_key',
      [runId],
    );
    expect(n.rows).toEqual([
      { node_key: 'end', status: 'Pending' },
      { node_key: 'start', status: 'Pending' },
      { node_key: 'tool', status: 'Running' },
    ]);
    const r = await db.pool.query('SELECT version, wake_at <= now() AS due FROM runs WHERE id = $1', [runId]);
    expect(r.rows[0]).toEqual({ version: 1, due: true });
    expect(await reconcileInlineRunning(db.pool, [40])).toEqual([]);
  });
});
