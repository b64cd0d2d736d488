import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createPool, migrate, migrationsHash, type Pool } from '@flowline/db';
import { resolveDatabaseUrl } from './containers';

/** A database of its own for one test file. */
export interface TestDatabase {
  /** connection string of the per-file database */
  url: string;
  /** a pool on it (ended by `drop`) */
  pool: Pool;
  /** ends the pool and drops the database */
  drop(): Promise<void>;
}

/** Session advisory lock (on the admin database) serialising template creation and clones. */
const TEMPLATE_LOCK_KEY = 7_316_120_002;

/** Replaces the database name of a connection string. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/**
 * Creates a fresh, migrated database for one test file: `flowline_t_<random>`, cloned from
 * the template `flowline_tpl_<migrations hash>`. The template is built once per machine per
 * migration set; parallel workers serialise on an advisory lock, and the template appears
 * under its final name only after migrating completed (built as `…_tmp`, then renamed), so a
 * crashed builder never leaves a half-migrated template behind.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = await resolveDatabaseUrl();
  const template = `flowline_tpl_${migrationsHash()}`;
  const name = `flowline_t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK_KEY]);
    try {
      await ensureTemplate(admin, adminUrl, template);
      await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
    } finally {
      await admin.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK_KEY]);
    }
  } finally {
    await admin.end();
  }
  const url = withDatabase(adminUrl, name);
  const pool = createPool(url, { max: 10, applicationName: 'flowline-test', refuseNestedConnections: true });
  let dropped = false;
  return {
    url,
    pool,
    async drop() {
      if (dropped) return;
      dropped = true;
      await pool.end();
      await dropDatabase(adminUrl, name);
    },
  };
}

async function ensureTemplate(admin: pg.Client, adminUrl: string, template: string): Promise<void> {
  const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
  if (found.rowCount) return;
  const tmp = `${template}_tmp`;
  await admin.query(`DROP DATABASE IF EXISTS "${tmp}" WITH (FORCE)`);
  await admin.query(`CREATE DATABASE "${tmp}"`);
  const pool = createPool(withDatabase(adminUrl, tmp), { max: 1, applicationName: 'flowline-test-template' });
  try {
    await migrate(pool);
  } finally {
    await pool.end();
  }
  await admin.query(`ALTER DATABASE "${tmp}" RENAME TO "${template}"`);
  await admin.query(`ALTER DATABASE "${template}" WITH IS_TEMPLATE true`);
  await dropStaleTemplates(admin, template);
}

/**
 * Drops templates of other migration sets. Safe: every clone happens under the same lock as
 * this call, so no one is copying them; a template still in use elsewhere fails to drop and stays.
 */
async function dropStaleTemplates(admin: pg.Client, keep: string): Promise<void> {
  const stale = await admin.query<{ datname: string }>(
    `SELECT datname FROM pg_database WHERE datname LIKE 'flowline\\_tpl\\_%' AND datname NOT LIKE '%\\_tmp' AND datname <> $1`,
    [keep],
  );
  for (const { datname } of stale.rows) {
    try {
      await admin.query(`ALTER DATABASE "${datname}" WITH IS_TEMPLATE false`);
      await admin.query(`DROP DATABASE IF EXISTS "${datname}"`);
    } catch {
      // in use or already gone: left for a later run
    }
  }
}

/** Drops the templates of other migration sets (under the template lock). */
export async function pruneStaleTemplates(): Promise<void> {
  const adminUrl = await resolveDatabaseUrl();
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK_KEY]);
    try {
      await dropStaleTemplates(admin, `flowline_tpl_${migrationsHash()}`);
    } finally {
      await admin.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK_KEY]);
    }
  } finally {
    await admin.end();
  }
}

async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}
