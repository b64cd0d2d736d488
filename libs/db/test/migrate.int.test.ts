import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveDatabaseUrl, withDatabase } from '@flowline/testing';
import { createPool, migrate, MIGRATIONS_FOLDER } from '../src';

describe('migrate', () => {
  let adminUrl: string;
  const name = `flowline_m_${randomBytes(5).toString('hex')}`;

  beforeAll(async () => {
    adminUrl = await resolveDatabaseUrl();
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    await admin.end();
  });

  afterAll(async () => {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  });

  it('applies every migration exactly once when many replicas boot at the same time', async () => {
    const pools = Array.from({ length: 4 }, () => createPool(withDatabase(adminUrl, name), { max: 2 }));
    try {
      await Promise.all(pools.map((p) => migrate(p)));
      await migrate(pools[0]!);
      const journal = JSON.parse(readFileSync(join(MIGRATIONS_FOLDER, 'meta', '_journal.json'), 'utf8')) as {
        entries: unknown[];
      };
      const applied = await pools[0]!.query('SELECT count(*) AS n FROM drizzle.__drizzle_migrations');
      expect(applied.rows[0].n).toBe(journal.entries.length);
      const fn = await pools[0]!.query(`SELECT count(*) AS n FROM pg_proc WHERE proname = 'flowline_apply'`);
      expect(fn.rows[0].n).toBe(1);
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });
});
