import { afterAll, describe, expect, it } from 'vitest';
import { migrationsHash } from '@flowline/db';
import { createTestDatabase, pruneStaleTemplates, type TestDatabase } from './pg';

describe('createTestDatabase', () => {
  const dbs: TestDatabase[] = [];
  afterAll(async () => {
    await Promise.all(dbs.map((d) => d.drop()));
  });

  it('gives each caller its own migrated database, even when created concurrently', async () => {
    const [a, b] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    dbs.push(a, b);
    expect(a.url).not.toBe(b.url);
    await a.pool.query(`INSERT INTO dispatchers (id) VALUES ('only-in-a')`);
    const inA = await a.pool.query('SELECT count(*)::int AS n FROM dispatchers');
    const inB = await b.pool.query('SELECT count(*)::int AS n FROM dispatchers');
    expect(inA.rows[0].n).toBe(1);
    expect(inB.rows[0].n).toBe(0);
  });

  it('drops the database on drop()', async () => {
    const db = await createTestDatabase();
    const name = new URL(db.url).pathname.slice(1);
    await db.drop();
    const other = await createTestDatabase();
    dbs.push(other);
    const r = await other.pool.query('SELECT count(*)::int AS n FROM pg_database WHERE datname = $1', [name]);
    expect(r.rows[0].n).toBe(0);
  });

  it('drops templates of other migration sets and keeps the current one', async () => {
    const db = await createTestDatabase();
    dbs.push(db);
    const stale = 'flowline_tpl_0000stale0000000';
    await db.pool.query(`DROP DATABASE IF EXISTS "${stale}"`);
    await db.pool.query(`CREATE DATABASE "${stale}" IS_TEMPLATE true`);
    await pruneStaleTemplates();
    const r = await db.pool.query('SELECT datname FROM pg_database WHERE datname = ANY($1)', [
      [stale, `flowline_tpl_${migrationsHash()}`],
    ]);
    expect(r.rows.map((x) => x.datname)).toEqual([`flowline_tpl_${migrationsHash()}`]);
  });
});
