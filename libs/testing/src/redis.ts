import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

/** The local Redis default. */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/** Redis for tests: `REDIS_URL` or the local default. */
export function testRedisUrl(): string {
  return process.env.REDIS_URL || DEFAULT_REDIS_URL;
}

/**
 * A BullMQ key prefix unique to one test file, hash-tagged (`{fl_t_<random>}`) so every
 * key of the file lands in one Redis Cluster slot.
 */
export function uniquePrefix(): string {
  return `{fl_t_${randomBytes(6).toString('hex')}}`;
}

/** Deletes every key starting with `prefix` (SCAN, never KEYS). Returns how many were deleted. */
export async function cleanupRedisPrefix(prefix: string, url: string = testRedisUrl()): Promise<number> {
  if (prefix.length < 4) throw new Error(`refusing to delete keys of the short prefix "${prefix}"`);
  const redis = new Redis(url, { maxRetriesPerRequest: 3, lazyConnect: true });
  await redis.connect();
  let deleted = 0;
  try {
    const pattern = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      cursor = next;
      if (keys.length) deleted += await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return deleted;
}

/** A per-file Redis namespace: url, prefix and its cleanup. */
export interface TestRedis {
  url: string;
  prefix: string;
  cleanup(): Promise<number>;
}

/** {@link testRedisUrl} + {@link uniquePrefix} + {@link cleanupRedisPrefix} in one value. */
export function createTestRedis(): TestRedis {
  const url = testRedisUrl();
  const prefix = uniquePrefix();
  return { url, prefix, cleanup: () => cleanupRedisPrefix(prefix, url) };
}
