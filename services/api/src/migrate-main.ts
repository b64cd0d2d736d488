/**
 * One-shot migration process (`node services/api/dist/migrate-main.js`): applies the
 * committed Postgres migrations and exits 0, or exits 1 when Postgres stays unusable for
 * DATABASE_BOOT_WAIT_MS. Compose's `migrate` service and the Kubernetes migration Job run
 * it before the other services start; it reads the API's options (same env, same checks).
 */
import { createPool, migrate } from '@flowline/db';
import { createLogger, loadConfig } from '@flowline/runtime';
import { apiConfigSchema } from './config';

const cfg = loadConfig(apiConfigSchema);
const logger = createLogger('migrate', { level: cfg.LOG_LEVEL });
const pool = createPool(cfg.DATABASE_URL, { applicationName: 'flowline-migrate' });
try {
  await migrate(pool, {
    waitMs: cfg.DATABASE_BOOT_WAIT_MS,
    onRetry: (err, attempt, delayMs) => logger.warn({ err: String(err), attempt, delayMs }, 'Postgres not reachable yet; retrying'),
  });
  logger.info('migrations applied');
  await pool.end();
} catch (err) {
  logger.fatal({ err: String(err) }, `Postgres unusable (waited up to DATABASE_BOOT_WAIT_MS=${cfg.DATABASE_BOOT_WAIT_MS} ms)`);
  await pool.end().catch(() => undefined);
  process.exit(1);
}
