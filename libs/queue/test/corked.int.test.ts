/**
 * `corked` on a real Redis: the commands a caller issues in one turn leave through a corked
 * socket (one write) and still resolve in order with their own replies; the socket is uncorked
 * on the next tick; a connection that is not ready is left alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { testRedisUrl, uniquePrefix } from '@flowline/testing';
import { corked } from '../src/index';

const prefix = uniquePrefix();
let redis: Redis;
const socket = (r: Redis) => (r as unknown as { stream: { writableCorked: number } }).stream;

beforeAll(async () => {
  redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
  await redis.ping();
});
afterAll(async () => {
  await redis.del(`${prefix}:n`);
  redis.disconnect();
});

describe('corked', () => {
  it('sends one turn of commands through a corked socket, in order, each with its own reply', async () => {
    let corkedWhileIssuing = -1;
    const replies = await corked(redis, () => {
      const p = Promise.all([redis.incr(`${prefix}:n`), redis.incrby(`${prefix}:n`, 10), redis.get(`${prefix}:n`)]);
      corkedWhileIssuing = socket(redis).writableCorked;
      return p;
    });
    expect(corkedWhileIssuing).toBe(1);
    expect(replies).toEqual([1, 11, '11']);
    expect(socket(redis).writableCorked).toBe(0);
  });

  it('uncorks on the next tick even when the caller throws', async () => {
    expect(() =>
      corked(redis, () => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    await new Promise((r) => process.nextTick(r));
    expect(socket(redis).writableCorked).toBe(0);
    expect(await redis.ping()).toBe('PONG');
  });

  it('leaves a connection that is not ready alone', async () => {
    const lazy = new Redis(testRedisUrl(), { lazyConnect: true, maxRetriesPerRequest: null });
    expect(corked(lazy, () => lazy.status)).toBe('wait');
    lazy.disconnect();
  });
});
