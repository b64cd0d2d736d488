import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate as drizzleMigrate } from 'drizzle-orm/node-postgres/migrator';
import type pg from 'pg';

/** The committed migrations folder (libs/db/drizzle): schema changes, in order, each applied once. */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../drizzle', import.meta.url));

/**
 * The SQL functions folder (libs/db/sql/functions): the current body of every SQL function, one
 * file per function named after it, applied after the numbered migrations. A function changes by
 * editing its file, never by restating it in a migration, so the file is the function as it runs.
 */
export const FUNCTIONS_FOLDER = fileURLToPath(new URL('../sql/functions', import.meta.url));

/** Session advisory lock key that serialises migrations within one database. */
const MIGRATION_LOCK_KEY = 7_316_120_001;

/**
 * Applies the committed migrations at boot. Many replicas booting at once serialise on a
 * session advisory lock (scoped to the database), so the migrations run exactly once; the
 * others find them applied and return. A Postgres that refuses connections or is shutting
 * down or starting up (a restart) is retried with backoff for `boot.waitMs`.
 */
export async function migrate(pool: pg.Pool, boot: MigrateBootOptions = {}): Promise<void> {
  const deadline = Date.now() + (boot.waitMs ?? 0);
  for (let attempt = 1; ; attempt++) {
    try {
      return await migrateOnce(pool);
    } catch (err) {
      const delayMs = Math.min(2000, 100 * 2 ** Math.min(attempt, 5));
      if (!isTransientConnectError(err) || Date.now() + delayMs > deadline) throw err;
      boot.onRetry?.(err, attempt, delayMs);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}

/** What {@link migrateAtBoot} logs through (a pino logger fits). */
export interface BootLog {
  warn(obj: object, msg: string): void;
  fatal(obj: object, msg: string): void;
}

/**
 * A long-running service's boot migration: {@link migrate} waiting up to DATABASE_BOOT_WAIT_MS
 * (`waitMs`) with each retry logged. A Postgres still unusable after that is logged fatal and
 * ends the process with exit 1, as an invalid option does: the service cannot run without it.
 */
export async function migrateAtBoot(pool: pg.Pool, waitMs: number, log: BootLog): Promise<void> {
  try {
    await migrate(pool, {
      waitMs,
      onRetry: (err, attempt, delayMs) => log.warn({ err, attempt, delayMs }, 'Postgres not reachable yet; retrying'),
    });
  } catch (err) {
    log.fatal({ err }, `Postgres unusable at boot (waited up to DATABASE_BOOT_WAIT_MS=${waitMs} ms)`);
    process.exit(1);
  }
}

async function migrateOnce(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await drizzleMigrate(drizzle(client), { migrationsFolder: MIGRATIONS_FOLDER });
      await applyFunctions(client);
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } catch (err) {
    broken = true;
    throw err;
  } finally {
    // a client whose unlock may not have run is destroyed so the session lock dies with it
    client.release(broken);
  }
}

/** A file of the functions folder: the function's name (the file's) and its text. */
export interface FunctionSource {
  name: string;
  sql: string;
  sha256: string;
}

/** The functions folder's files, by name. */
export function functionSources(): FunctionSource[] {
  return readdirSync(FUNCTIONS_FOLDER)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .map((f) => {
      const sql = readFileSync(join(FUNCTIONS_FOLDER, f), 'utf8');
      return { name: f.slice(0, -'.sql'.length), sql, sha256: createHash('sha256').update(sql).digest('hex') };
    });
}

/**
 * Brings every SQL function to its file, in one transaction (a file that fails leaves all of them
 * as they were). Only the files whose hash differs from the one recorded in `sql_functions` run:
 * each is a `CREATE OR REPLACE`, so running one again is harmless, but replacing a current
 * function would make every other session replan the statements that call it. A change of a
 * function's arguments or result type needs a numbered migration that drops the old one first
 * (Postgres cannot replace across those). Files run in name order; plpgsql bodies are resolved at
 * call time, so only a `LANGUAGE sql` function that calls another must sort after it.
 */
async function applyFunctions(client: pg.PoolClient): Promise<void> {
  const recorded = await client.query<{ name: string; sha256: string }>('SELECT name, sha256 FROM sql_functions');
  const current = new Map(recorded.rows.map((r) => [r.name, r.sha256]));
  const stale = functionSources().filter((f) => current.get(f.name) !== f.sha256);
  if (stale.length === 0) return;
  await client.query('BEGIN');
  try {
    for (const f of stale) {
      await client.query(f.sql);
      await client.query(
        `INSERT INTO sql_functions (name, sha256) VALUES ($1, $2)
         ON CONFLICT (name) DO UPDATE SET sha256 = excluded.sha256, applied_at = now()`,
        [f.name, f.sha256],
      );
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/** How {@link migrate} waits for a Postgres that is not answering yet (restarting, starting up). */
export interface MigrateBootOptions {
  /** keep retrying a refused or shutting-down connection this long, ms (0: fail at once) */
  waitMs?: number;
  /** told of each failed try that will be retried */
  onRetry?: (err: unknown, attempt: number, delayMs: number) => void;
}

/** Node socket errors, SQLSTATEs (class 08, 57P01–57P03) and the pool's acquire timeout that mean "not reachable yet", not "wrong". */
const TRANSIENT_CONNECT_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EAI_AGAIN', 'EPIPE', '57P01', '57P02', '57P03', 'PoolTimeout']);

/** True when a connection failure is worth retrying at boot. */
export function isTransientConnectError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return /Connection terminated|timeout exceeded when trying to connect/i.test(String((err as Error | null)?.message));
  return TRANSIENT_CONNECT_CODES.has(code) || code.startsWith('08');
}

/** sha256 (first 16 hex chars) over the migration and function files: changes whenever one does. */
export function migrationsHash(): string {
  const h = createHash('sha256');
  const files = readdirSync(MIGRATIONS_FOLDER)
    .filter((f) => f.endsWith('.sql'))
    .sort();
  for (const f of files) h.update(f).update(readFileSync(join(MIGRATIONS_FOLDER, f)));
  h.update(readFileSync(join(MIGRATIONS_FOLDER, 'meta', '_journal.json')));
  for (const f of functionSources()) h.update(`functions/${f.name}`).update(f.sha256);
  return h.digest('hex').slice(0, 16);
}
