import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate as drizzleMigrate } from 'drizzle-orm/node-postgres/migrator';
import type pg from 'pg';

/** The committed migrations folder (libs/db/drizzle). */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../drizzle', import.meta.url));

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

async function migrateOnce(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await drizzleMigrate(drizzle(client), { migrationsFolder: MIGRATIONS_FOLDER });
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

/** How {@link migrate} waits for a Postgres that is not answering yet (restarting, starting up). */
export interface MigrateBootOptions {
  /** keep retrying a refused or shutting-down connection this long, ms (0: fail at once) */
  waitMs?: number;
  /** told of each failed try that will be retried */
  onRetry?: (err: unknown, attempt: number, delayMs: number) => void;
}

/** Node socket errors and SQLSTATEs (class 08, 57P01–57P03) that mean "not reachable yet", not "wrong". */
const TRANSIENT_CONNECT_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EAI_AGAIN', 'EPIPE', '57P01', '57P02', '57P03']);

/** True when a connection failure is worth retrying at boot. */
export function isTransientConnectError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return /Connection terminated|timeout exceeded when trying to connect/i.test(String((err as Error | null)?.message));
  return TRANSIENT_CONNECT_CODES.has(code) || code.startsWith('08');
}

/** sha256 (first 16 hex chars) over the migration files: changes whenever a migration does. */
export function migrationsHash(): string {
  const h = createHash('sha256');
  const files = readdirSync(MIGRATIONS_FOLDER)
    .filter((f) => f.endsWith('.sql'))
    .sort();
  for (const f of files) h.update(f).update(readFileSync(join(MIGRATIONS_FOLDER, f)));
  h.update(readFileSync(join(MIGRATIONS_FOLDER, 'meta', '_journal.json')));
  return h.digest('hex').slice(0, 16);
}
