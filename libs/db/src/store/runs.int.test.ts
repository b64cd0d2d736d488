import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@flowline/testing';
import { insertDefinition } from './definitions';
import { createRun, shardOfRun, type CreateRunParams } from './run-create';
import { listRunEvents } from './run-reads';
import { recordDecision, requestCancel } from './intents';

let db: TestDatabase;
let defId: string;
beforeAll(async () => {
  db = await createTestDatabase();
  const d = await insertDefinition(db.pool, {
    id: randomUUID(),
    tenantId: 't1',
    name: 'd',
    description: null,
    kind: 'Standard',
    graphJson: '{}',
    planGraphJson: '{}',
    graphHash: 'h',
    nodeCount: 2,
  });
  defId = d.id;
});
afterAll(async () => {
  await db.drop();
});

const params = (over: Partial<CreateRunParams> = {}): CreateRunParams => ({
  tenantId: 't1',
  definitionId: defId,
  requestId: null,
  conversationId: null,
  shardCount: 8,
  prepare: () => ({
    inputJson: '{"n":1}',
    nodes: [
      { key: 'start', kind: 'Start', attemptLimit: 1 },
      { key: 'gate', kind: 'Pause', attemptLimit: 1 },
    ],
  }),
  ...over,
});

describe('the runs store (create, read, intents)', () => {
  it('derives a stable shard in range from the run id', () => {
    const id = randomUUID();
    expect(shardOfRun(id, 8)).toBe(shardOfRun(id, 8));
    const shards = new Set(Array.from({ length: 200 }, () => shardOfRun(randomUUID(), 8)));
    expect([...shards].every((s) => s >= 0 && s < 8)).toBe(true);
    expect(shards.size).toBe(8);
  });

  it('rolls the whole creation back when prepare refuses, leaving no run behind', async () => {
    await expect(
      createRun(db.pool, params({ requestId: 'refused', prepare: () => { throw new Error('bad input'); } })),
    ).rejects.toThrow('bad input');
    const rows = await db.pool.query(`SELECT 1 FROM runs WHERE request_id = 'refused'`);
    expect(rows.rowCount).toBe(0);
    const again = await createRun(db.pool, params({ requestId: 'refused' }));
    expect(again.kind).toBe('created');
  });

  it('reports an absent or other-tenant definition without writing', async () => {
    expect(await createRun(db.pool, params({ definitionId: randomUUID() }))).toEqual({ kind: 'definitionNotFound' });
    expect(await createRun(db.pool, params({ tenantId: 't2' }))).toEqual({ kind: 'definitionNotFound' });
  });

  it('records a decision once: the compare-and-set refuses a second one, a wrong state and another tenant', async () => {
    const created = await createRun(db.pool, params());
    if (created.kind !== 'created') throw new Error('expected a new run');
    const runId = created.runId;
    expect(await recordDecision(db.pool, 't1', runId, 'gate', 'op', '{"decision":"Approve"}')).toBeNull();
    await db.pool.query(`UPDATE node_runs SET status = 'WaitingForApproval' WHERE run_id = $1 AND node_key = 'gate'`, [runId]);
    expect(await recordDecision(db.pool, 't2', runId, 'gate', 'op', '{"decision":"Approve"}')).toBeNull();
    expect(await recordDecision(db.pool, 't1', runId, 'gate', 'op', '{"decision":"Approve"}')).toEqual({ shard: created.shard });
    expect(await recordDecision(db.pool, 't1', runId, 'gate', 'op2', '{"decision":"Reject"}')).toBeNull();
    const intents = await db.pool.query(`SELECT kind FROM intents WHERE run_id = $1`, [runId]);
    expect(intents.rows).toEqual([{ kind: 'decide' }]);
  });

  it('cancels only live runs and answers null for another tenant', async () => {
    const created = await createRun(db.pool, params());
    if (created.kind !== 'created') throw new Error('expected a new run');
    expect(await requestCancel(db.pool, 't2', created.runId, null)).toBeNull();
    expect(await requestCancel(db.pool, 't1', created.runId, 'why')).toEqual({ outcome: 'cancelling', shard: created.shard });
    expect(await requestCancel(db.pool, 't1', created.runId, 'again')).toEqual({ outcome: 'noop', shard: created.shard });
    const row = await db.pool.query(`SELECT cancel_reason FROM runs WHERE id = $1`, [created.runId]);
    expect(row.rows[0].cancel_reason).toBe('why');
  });

  it('pages events exclusively after afterSeq and flags truncation from one extra row', async () => {
    const created = await createRun(db.pool, params());
    if (created.kind !== 'created') throw new Error('expected a new run');
    await db.pool.query(
      `INSERT INTO events (run_id, seq, kind) SELECT $1, s, 'node.queued' FROM generate_series(2, 3) s`,
      [created.runId],
    );
    const first = await listRunEvents(db.pool, created.runId, 0, 2);
    expect(first.events.map((e) => e.seq)).toEqual([1, 2]);
    expect(first.truncated).toBe(true);
    const rest = await listRunEvents(db.pool, created.runId, 2, 2);
    expect(rest.events.map((e) => e.seq)).toEqual([3]);
    expect(rest.truncated).toBe(false);
  });
});
