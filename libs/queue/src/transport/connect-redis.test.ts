import { describe, expect, it } from 'vitest';
import { Cluster, Redis } from 'ioredis';
import { connectRedis, duplicateConnection } from './connect-redis';

describe('connectRedis (no connection made: lazyConnect)', () => {
  it('takes a cluster client’s credentials and TLS from REDIS_URL, its nodes from the seeds', () => {
    const c = connectRedis(
      { url: 'rediss://flow:p%40ss@ignored.example:6380', clusterNodes: [{ host: 'redis-0', port: 7000 }, { host: 'redis-1', port: 7001 }] },
      { lazyConnect: true, maxRetriesPerRequest: null, enableOfflineQueue: false },
    ) as Cluster;
    expect(c).toBeInstanceOf(Cluster);
    expect(c.options.lazyConnect).toBe(true);
    expect(c.options.enableOfflineQueue).toBe(false);
    expect(c.options.shardedSubscribers).toBe(false);
    expect(c.options.redisOptions).toMatchObject({ username: 'flow', password: 'p@ss', tls: {}, maxRetriesPerRequest: null });
    expect(duplicateConnection(c, { shardedSubscribers: true }).options).toMatchObject({ shardedSubscribers: true, redisOptions: { password: 'p@ss' } });
  });

  it('sends no credentials or TLS of its own for a plain redis: URL without userinfo', () => {
    const c = connectRedis({ url: 'redis://127.0.0.1:6379', clusterNodes: [{ host: '127.0.0.1', port: 7000 }] }, { lazyConnect: true }) as Cluster;
    expect(c.options.redisOptions).not.toHaveProperty('password');
    expect(c.options.redisOptions).not.toHaveProperty('tls');
  });

  it('opens one server at REDIS_URL, options included, when no seeds are given', () => {
    const r = connectRedis({ url: 'redis://127.0.0.1:6390/2' }, { lazyConnect: true, maxRetriesPerRequest: 3 }) as Redis;
    expect(r).toBeInstanceOf(Redis);
    expect(r.options).toMatchObject({ port: 6390, db: 2, lazyConnect: true, maxRetriesPerRequest: 3 });
    expect(duplicateConnection(r, { maxRetriesPerRequest: 1 }).options).toMatchObject({ port: 6390, maxRetriesPerRequest: 1 });
  });
});
