export { createTestDatabase, pruneStaleTemplates, withDatabase } from './pg';
export type { TestDatabase } from './pg';
export { resolveDatabaseUrl, DEFAULT_DATABASE_URL } from './containers';
export { testRedisUrl, uniquePrefix, cleanupRedisPrefix, createTestRedis, DEFAULT_REDIS_URL } from './redis';
export type { TestRedis } from './redis';
export { waitFor } from './wait-for';
export type { WaitForOptions } from './wait-for';
export * from './fake-llm';
