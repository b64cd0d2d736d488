/**
 * The connection factory against a real 3-master Redis Cluster (started here) and the shared
 * single Redis: `connectRedis` opens the right client, `duplicateConnection` keeps the target,
 * and the protocol's keys and signals work unchanged on the cluster — lane jobs in the
 * prefix's slot, batched wakes (pipelined PUBLISH) and pings heard by a subscriber that may sit
 * on any node.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cluster, Redis } from 'ioredis';
import type { WorkItem } from '@flowline/graph';
import { startRedisCluster, testRedisUrl, uniquePrefix, waitFor, type RedisClusterServer } from '@flowline/testing';
import {
  closeLaneQueues,
  connectRedis,
  createLaneQueues,
  duplicateConnection,
  enqueueWork,
  isClusterConnection,
  laneJobKey,
  publishChangePings,
  publishWakes,
  runChangesChannel,
  wakeChannelOf,
  type RedisConnection,
} from '../src/index';

describe('connectRedis', () => {
  let server: RedisClusterServer;
  let redis: RedisConnection;

  beforeAll(async () => {
    server = await startRedisCluster();
    redis = connectRedis({ url: 'redis://127.0.0.1:1', clusterNodes: server.nodes }, { maxRetriesPerRequest: null });
  }, 60_000);

  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });

  it('opens one server for a URL alone, and a cluster client when seed nodes are given', async () => {
    const single = connectRedis({ url: testRedisUrl() }, { lazyConnect: true });
    expect(single).toBeInstanceOf(Redis);
    expect(isClusterConnection(single)).toBe(false);
    single.disconnect();
    expect(connectRedis({ url: testRedisUrl(), clusterNodes: [] }, { lazyConnect: true })).toBeInstanceOf(Redis);
    expect(redis).toBeInstanceOf(Cluster);
    expect(isClusterConnection(redis)).toBe(true);
    expect(await redis.ping()).toBe('PONG');
  });

  it('duplicates a cluster connection as a cluster client with the overridden per-command options', async () => {
    const dup = duplicateConnection(redis, { maxRetriesPerRequest: 2 });
    try {
      expect(dup).toBeInstanceOf(Cluster);
      expect((dup as Cluster).options.redisOptions?.maxRetriesPerRequest).toBe(2);
      expect(await dup.ping()).toBe('PONG');
    } finally {
      dup.disconnect();
    }
  });

  it('adds lane jobs on a cluster, their keys in the slot of the prefix hash tag', async () => {
    const prefix = uniquePrefix();
    const queues = createLaneQueues(redis, prefix);
    try {
      const items: WorkItem[] = ['tool', 'llm'].map((lane) => ({
        lane: lane as WorkItem['lane'], runId: randomUUID(), nodeKey: 'n', kind: lane === 'tool' ? 'Tool' : 'LlmCall', invocationId: randomUUID(), attempt: 1,
        config: {}, input: { run: { input: null }, upstream: {}, input: null }, deadlineAt: 1, steering: [], outputSchema: null,
      }));
      await enqueueWork(queues, items);
      const cluster = redis as Cluster;
      const slot = Number(await cluster.cluster('KEYSLOT', prefix));
      for (const item of items) {
        const key = laneJobKey(item.lane, item.invocationId, prefix);
        expect(await redis.exists(key)).toBe(1);
        expect(Number(await cluster.cluster('KEYSLOT', key))).toBe(slot);
      }
    } finally {
      await closeLaneQueues(queues);
    }
  });

  it('delivers batched shard wakes and change pings to a subscriber of the cluster', async () => {
    const prefix = uniquePrefix();
    const sub = duplicateConnection(redis);
    const got: { channel: string; raw: string }[] = [];
    try {
      sub.on('message', (channel: string, raw: string) => got.push({ channel, raw }));
      const runs = ['run-a', 'run-b', 'run-c', 'run-d'];
      const channels = [...new Set(runs.map((r) => wakeChannelOf(r, 4, prefix)))];
      await sub.subscribe(...channels, runChangesChannel('run-a', prefix));
      await publishWakes(redis, runs.map((runId) => ({ runId })), prefix, 4);
      await publishChangePings(redis, [{ runId: 'run-a', seq: 2, kind: 'node' }, { runId: 'run-a', seq: 3, kind: 'run' }], prefix);
      await waitFor(() => got.length >= 6, { timeoutMs: 10_000, description: '4 wakes and 2 pings' });
      expect(got.slice(0, 4).map((g) => [g.channel, JSON.parse(g.raw) as unknown])).toEqual(runs.map((runId) => [wakeChannelOf(runId, 4, prefix), { runId }]));
      expect(got.slice(4).map((g) => g.channel)).toEqual([runChangesChannel('run-a', prefix), runChangesChannel('run-a', prefix)]);
    } finally {
      sub.disconnect();
    }
  });
});
