import { randomBytes } from 'node:crypto';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
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
