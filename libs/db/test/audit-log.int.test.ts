/**
 * The audit log's store: a request's entry is written by the first transaction it commits (and
 * by none that rolls back), the chainer gives committed rows contiguous sequences under
 * concurrent writers and passes, waits for a row's answer up to the grace, and verify proves
 * the chain.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@flowline/testing';
import {
  chainAudit,
  chainAuditFully,
  insertAuditRow,
  recordAuditOutcome,
  rollback,
  runWithAuditEntry,
  verifyAudit,
  withTransaction,
  type AuditEntry,
} from '../src';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.drop());

const entry = (tenant: string, requestId: string): AuditEntry => ({
  tenant,
  principal: 'key:abc',
  keyPrefix: null,
  action: 'definition.update',
  resourceType: 'definition',
  resourceId: 'd1',
  requestId,
  clientAddress: '127.0.0.1',
  patch: [{ op: 'replace', path: '/name', value: 'n' }],
  rowId: null,
  claimed: false,
  closed: false,
});
const rowsOf = async (tenant: string) => (await db.pool.query(`SELECT * FROM audit_log WHERE tenant_id = $1 ORDER BY id`, [tenant])).rows;

describe('the request entry and transactions', () => {
  it('is written once, by the first transaction that commits, together with its change', async () => {
    await db.pool.query(`CREATE TABLE audited_change (v int)`);
    const e = entry('tx', 'r1');
    await runWithAuditEntry(e, async () => {
      // a body that throws: neither the change nor the row stays
      await expect(withTransaction(db.pool, async (tx) => {
        await tx.query(`INSERT INTO audited_change VALUES (1)`);
        throw new Error('refused');
      })).rejects.toThrow('refused');
      expect(await rowsOf('tx')).toHaveLength(0);
      // a body that rolls back: nothing either
      await withTransaction(db.pool, async (tx) => {
        await tx.query(`INSERT INTO audited_change VALUES (2)`);
        return rollback(null);
      });
      expect(await rowsOf('tx')).toHaveLength(0);
      expect(e.rowId).toBeNull();
      await withTransaction(db.pool, async (tx) => tx.query(`INSERT INTO audited_change VALUES (3)`));
      await withTransaction(db.pool, async (tx) => tx.query(`INSERT INTO audited_change VALUES (4)`));
    });
    const rows = await rowsOf('tx');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ request_id: 'r1', status: null, seq: null, action: 'definition.update', principal: 'key:abc' });
    expect(Number(rows[0].id)).toBe(e.rowId);
    expect((await db.pool.query(`SELECT v FROM audited_change ORDER BY v`)).rows.map((r) => r.v)).toEqual([3, 4]);
  });

  it('writes nothing outside a request, and nothing once the request closed its entry', async () => {
    await withTransaction(db.pool, async (tx) => tx.query(`SELECT 1`));
    const e = { ...entry('closed', 'r2'), closed: true };
    await runWithAuditEntry(e, () => withTransaction(db.pool, async (tx) => tx.query(`SELECT 1`)));
    expect(await rowsOf('closed')).toHaveLength(0);
  });
});

describe('chaining', () => {
  it('waits for the answer up to the grace, then chains without it', async () => {
    const id = await insertAuditRow(db.pool, entry('grace', 'g1'), null, null);
    expect(await chainAudit(db.pool, 'grace', 3600)).toBe(0);
    await recordAuditOutcome(db.pool, id, 200, null, null);
    expect(await chainAudit(db.pool, 'grace', 3600)).toBe(1);
    await insertAuditRow(db.pool, entry('grace', 'g2'), null, null);
    await new Promise((r) => setTimeout(r, 1100));
    expect(await chainAudit(db.pool, 'grace', 1)).toBe(1);
    const rows = await rowsOf('grace');
    expect(rows.map((r) => [Number(r.seq), r.status])).toEqual([[1, 200], [2, null]]);
    // a chained row's outcome is sealed
    await recordAuditOutcome(db.pool, Number(rows[1].id), 500, 'Late', null);
    expect((await rowsOf('grace'))[1].status).toBeNull();
    expect(await verifyAudit(db.pool, 'grace')).toMatchObject({ ok: true, checked: 2, headSeq: 2 });
  });

  it('gives contiguous sequences under concurrent writers and chain passes', async () => {
    const writers = Array.from({ length: 8 }, (_, w) =>
      (async () => {
        for (let i = 0; i < 25; i++) {
          await insertAuditRow(db.pool, entry('busy', `w${w}-${i}`), 201, null);
          if (i % 5 === 0) await chainAudit(db.pool, 'busy', 60, 7);
        }
      })(),
    );
    await Promise.all(writers);
    await chainAuditFully(db.pool, 'busy', 60, 50);
    const seqs = (await rowsOf('busy')).map((r) => Number(r.seq)).sort((a, b) => a - b);
    expect(seqs).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(await verifyAudit(db.pool, 'busy')).toMatchObject({ ok: true, checked: 200, pending: 0 });
  });
});
