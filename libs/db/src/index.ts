export * from './schema';
export { createPool } from './pool';
export type { Pool, PoolClient, PoolOptions } from './pool';
export { migrate, migrationsHash, MIGRATIONS_FOLDER } from './migrate';
export * from './store/definitions';
export * from './store/runs-api';
