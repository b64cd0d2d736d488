import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRedisPrefix, testRedisUrl, uniquePrefix } from './redis';

describe('redis test helpers', () => {
  const redis = new Redis(testRedisUrl());
  afterAll(() => redis.disconnect());

  it('hash-tags unique prefixes', () => {
    const a = uniquePrefix();
    expect(a).toMatch(/^\{fl_t_[0-9a-f]{12}\}$/);
    expect(uniquePrefix()).not.toBe(a);
  });

  it('deletes the keys of its prefix and leaves other keys alone', async () => {
    const mine = uniquePrefix();
    const other = uniquePrefix();
    await redis.set(`${mine}:q:1`, 'x');
    await redis.set(`${mine}:q:2`, 'y');
    await redis.set(`${other}:q:1`, 'z');
    expect(await cleanupRedisPrefix(mine)).toBe(2);
    expect(await redis.exists(`${mine}:q:1`, `${mine}:q:2`)).toBe(0);
    expect(await redis.get(`${other}:q:1`)).toBe('z');
    await cleanupRedisPrefix(other);
  });
});
