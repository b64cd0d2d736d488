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
 * others find them applied and return.
 */
export async function migrate(pool: pg.Pool): Promise<void> {
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
