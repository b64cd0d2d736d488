import { randomBytes } from 'node:crypto';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveDatabaseUrl, withDatabase } from '@flowline/testing';
import { createPool, functionSources, migrate, MIGRATIONS_FOLDER } from '../src';

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

  it('leaves the database with exactly the functions of the functions folder, each with its file\'s body', async () => {
    const pool = createPool(withDatabase(adminUrl, name), { max: 1 });
    try {
      await migrate(pool);
      const { rows } = await pool.query<{ name: string; body: string }>(
        `SELECT p.proname AS name, p.prosrc AS body
           FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
          WHERE n.nspname = 'public'
            AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')
          ORDER BY p.proname`,
      );
      const files = functionSources();
      expect(rows.map((r) => r.name)).toEqual(files.map((f) => f.name));
      for (const f of files) {
        // the body as Postgres stores it is the text between the file's dollar quotes
        const body = /\$\$([\s\S]*)\$\$/.exec(f.sql)?.[1];
        expect(rows.find((r) => r.name === f.name)?.body, f.name).toBe(body);
      }
    } finally {
      await pool.end();
    }
  });

  it('re-applies a function whose file differs from what the database recorded, and replaces none that is current', async () => {
    const pool = createPool(withDatabase(adminUrl, name), { max: 1 });
    const procRow = async (fn: string) =>
      (await pool.query<{ x: string; src: string }>(`SELECT xmin::text AS x, prosrc AS src FROM pg_proc WHERE proname = $1`, [fn])).rows[0]!;
    try {
      await migrate(pool);
      // someone's hand edit, or a database that ran an older file
      await pool.query(`CREATE OR REPLACE FUNCTION flowline_ms(t timestamptz) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$ SELECT 0::bigint $$`);
      await pool.query(`UPDATE sql_functions SET sha256 = 'older' WHERE name = 'flowline_ms'`);
      const untouched = await procRow('flowline_apply');
      await migrate(pool);
      expect((await procRow('flowline_ms')).src).toContain(`AT TIME ZONE 'UTC'`);
      expect(await procRow('flowline_apply')).toEqual(untouched);
    } finally {
      await pool.end();
    }
  });

  it('keeps function bodies out of the migrations written since the functions folder exists', () => {
    const journal = JSON.parse(readFileSync(join(MIGRATIONS_FOLDER, 'meta', '_journal.json'), 'utf8')) as {
      entries: { idx: number; tag: string }[];
    };
    const since = journal.entries.filter((e) => e.idx >= 17);
    expect(since.length).toBeGreaterThan(0);
    for (const e of since) {
      expect(readFileSync(join(MIGRATIONS_FOLDER, `${e.tag}.sql`), 'utf8'), e.tag).not.toMatch(/create\s+(or\s+replace\s+)?function/i);
    }
  });

  /** A free local port nothing listens on (yet). */
  async function freePort(): Promise<number> {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    return port;
  }

  it('waits for a Postgres that refuses connections at boot, then migrates once it answers', async () => {
    const target = new URL(withDatabase(adminUrl, name));
    const port = await freePort();
    const via = new URL(target.toString());
    via.port = String(port);
    via.hostname = '127.0.0.1';
    const pool = createPool(via.toString(), { max: 1 });
    const retries: number[] = [];
    const sockets = new Set<Socket>();
    let proxy: Server | null = null;
    try {
      const booting = migrate(pool, { waitMs: 30_000, onRetry: (_err, attempt) => retries.push(attempt) });
      // nothing listens on the port: the first tries are refused; then a proxy to the real Postgres opens it
      while (retries.length < 2) await new Promise((resolve) => setTimeout(resolve, 20));
      proxy = createServer((inbound) => {
        const outbound = connect(Number(target.port || 5432), target.hostname);
        for (const s of [inbound, outbound]) {
          sockets.add(s);
          s.on('error', () => s.destroy());
        }
        inbound.pipe(outbound).pipe(inbound);
      });
      await new Promise<void>((resolve) => proxy!.listen(port, '127.0.0.1', resolve));
      await booting;
      expect(retries.length).toBeGreaterThanOrEqual(2);
      const fn = await pool.query(`SELECT count(*)::int AS n FROM pg_proc WHERE proname = 'flowline_apply'`);
      expect(fn.rows[0].n).toBe(1);
    } finally {
      await pool.end();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
    }
  });

  it('gives up on a refused connection without waiting when waitMs is 0, and never retries a non-connection error', async () => {
    const port = await freePort();
    const refused = createPool(`postgres://postgres@127.0.0.1:${port}/${name}`, { max: 1 });
    let retried = 0;
    try {
      await expect(migrate(refused, { onRetry: () => retried++ })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    } finally {
      await refused.end();
    }
    const missing = createPool(withDatabase(adminUrl, `${name}_absent`), { max: 1 });
    try {
      // 3D000 invalid_catalog_name: a wrong database is a mistake, not a restart
      await expect(migrate(missing, { waitMs: 30_000, onRetry: () => retried++ })).rejects.toMatchObject({ code: '3D000' });
    } finally {
      await missing.end();
    }
    expect(retried).toBe(0);
  });
});
