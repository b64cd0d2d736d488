import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@flowline/testing';
import { createPool, type Pool } from '../pool';
import { insertDefinition } from './definitions';
import { sendMessage } from './conversations';
import { createRun, type CreateRunParams } from './run-create';
import { NestedConnectionError, rollback, withTransaction } from './transaction';

let db: TestDatabase;
/** a pool of TWO connections that gives up waiting for one after 2 s: a nested connection deadlocks it at once */
let small: Pool;
let defId: string;
beforeAll(async () => {
  db = await createTestDatabase();
  small = createPool(db.url, { max: 2, connectionTimeoutMs: 2000, refuseNestedConnections: true });
  const d = await insertDefinition(db.pool, {
    id: randomUUID(),
    tenantId: 't1',
    name: 'd',
    description: null,
    kind: 'Chat',
    graphJson: '{}',
    planGraphJson: '{"kind":"Chat","nodes":[]}',
    graphHash: 'h',
    nodeCount: 1,
  });
  defId = d.id;
});
afterAll(async () => {
  await small?.end();
  await db?.drop();
});

const params = (over: Partial<CreateRunParams> = {}): CreateRunParams => ({
  tenantId: 't1',
  definitionId: defId,
  requestId: null,
  conversationId: null,
  shardCount: 8,
  prepare: () => ({ inputJson: '{}', nodes: [{ key: 'start', kind: 'Start', attemptLimit: 1 }] }),
  ...over,
});

describe('withTransaction', () => {
  it('commits what the body wrote and answers its value', async () => {
    const id = randomUUID();
    const out = await withTransaction(db.pool, async (tx) => {
      await tx.query(`INSERT INTO conversations (tenant_id, id, created_at, updated_at) VALUES ('t1', $1, now(), now())`, [id]);
      return 'done';
    });
    expect(out).toBe('done');
    expect((await db.pool.query(`SELECT 1 FROM conversations WHERE id = $1`, [id])).rowCount).toBe(1);
  });

  it('rolls back and answers the value of a rollback, and rolls back and rethrows what the body throws', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    const insert = `INSERT INTO conversations (tenant_id, id, created_at, updated_at) VALUES ('t1', $1, now(), now())`;
    const answered = await withTransaction(db.pool, async (tx) => {
      await tx.query(insert, [a]);
      return rollback('refused');
    });
    expect(answered).toBe('refused');
    await expect(
      withTransaction(db.pool, async (tx) => {
        await tx.query(insert, [b]);
        throw new Error('bad');
      }),
    ).rejects.toThrow('bad');
    expect((await db.pool.query(`SELECT 1 FROM conversations WHERE id = ANY($1)`, [[a, b]])).rowCount).toBe(0);
  });

  it('refuses a second connection of its pool asked for inside a transaction body, in both pg styles', async () => {
    await expect(withTransaction(db.pool, async () => db.pool.query('SELECT 1'))).rejects.toBeInstanceOf(NestedConnectionError);
    await expect(withTransaction(db.pool, async () => db.pool.connect())).rejects.toBeInstanceOf(NestedConnectionError);
    const viaCallback = await withTransaction(db.pool, () => new Promise<unknown>((resolve) => db.pool.connect((err) => resolve(err))));
    expect(viaCallback).toBeInstanceOf(NestedConnectionError);
    // outside a body, and after one ended, the pool serves as usual
    expect((await db.pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    expect((await small.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });
});

describe('run creation on a pool of two connections', () => {
  it('answers 30 concurrent creations with one requestId: one run, every answer naming it', async () => {
    const out = await Promise.all(Array.from({ length: 30 }, () => createRun(small, params({ requestId: 'burst' }))));
    const ids = new Set(out.map((r) => ('runId' in r ? r.runId : null)));
    expect(ids.size).toBe(1);
    expect(out.filter((r) => r.kind === 'created')).toHaveLength(1);
    expect(out.filter((r) => r.kind === 'replayed')).toHaveLength(29);
    expect((await db.pool.query(`SELECT 1 FROM runs WHERE request_id = 'burst'`)).rowCount).toBe(1);
  });

  it('answers 30 concurrent creations on one conversation: one run, the others busy naming it', async () => {
    const out = await Promise.all(Array.from({ length: 30 }, () => createRun(small, params({ conversationId: 'c-burst' }))));
    const created = out.filter((r) => r.kind === 'created');
    expect(created).toHaveLength(1);
    const runId = created[0]!.runId;
    expect(out.filter((r) => r.kind === 'runBusy' && r.runId === runId)).toHaveLength(29);
  });

  it('answers 30 concurrent chat sends with one requestId: one run and message, every answer naming them', async () => {
    const send = () =>
      sendMessage(small, {
        tenantId: 't1',
        conversationId: 'c-send',
        definitionId: defId,
        requestId: 'send-burst',
        text: 'hi',
        attachments: [],
        shardCount: 8,
        prepare: () => ({ inputJson: '{"text":"hi"}', nodes: [{ key: 'start', kind: 'Start', attemptLimit: 1 }] }),
      });
    const out = await Promise.all(Array.from({ length: 30 }, send));
    const pairs = new Set(out.map((r) => ('messageId' in r ? `${r.runId}/${r.messageId}` : r.kind)));
    expect(pairs.size).toBe(1);
    expect(out.filter((r) => r.kind === 'created')).toHaveLength(1);
    expect((await db.pool.query(`SELECT 1 FROM messages WHERE conversation_id = 'c-send'`)).rowCount).toBe(1);
  });
});
