import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Cluster } from 'ioredis';
import { createClient, type RunChange } from '@flowline/client';
import { canonicalWithTool, nodeOf, startE2eCluster, waitFor, type E2eCluster } from '@flowline/testing';

/**
 * The whole cluster on a 3-master Redis Cluster started by the test (REDIS_CLUSTER_NODES):
 * BullMQ lanes, shard wakes and workers' reports, change pings to a live subscriber and the
 * Socket.IO sharded adapter all run through it unchanged.
 */
describe('the canonical graph on a Redis Cluster', () => {
  let c: E2eCluster;
  let definitionId: string;

  beforeAll(async () => {
    const files = mkdtempSync(join(tmpdir(), 'flowline-e2e-'));
    writeFileSync(join(files, 'notes.md'), '# notes\nall good\n');
    c = await startE2eCluster({ redisCluster: true, dispatchers: 2, toolWorkers: 1, env: { TOOL_FILES_ROOT: files } });
    definitionId = await c.api.createDefinition('canonical', canonicalWithTool());
  }, 120_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') process.stdout.write(`${c.lines.slice(-80).join('\n')}\n`);
  });

  afterAll(async () => {
    await c?.close();
  });

  it('completes both branches, and a live subscriber sees the reviewed run finish through change pings', async () => {
    expect(c.redis).toBeInstanceOf(Cluster);
    const [reviewed, direct] = await Promise.all([
      c.api.startRun(definitionId, { requiresReview: true }),
      c.api.startRun(definitionId, { requiresReview: false }),
    ]);
    await c.api.waitForRun(reviewed, (v) => v.run.status === 'WaitingForApproval', 30_000, 'review waits');

    // the live client re-reads events only when a ping names a newer seq: seeing run.completed proves pings flow
    const live = createClient({ baseUrl: c.cluster.apiUrl });
    try {
      const changes: RunChange[] = [];
      const sub = live.subscribeRun(reviewed, 'latest', (ch) => changes.push(ch));
      await sub.ready;
      await c.api.decide(reviewed, 'review', 'Approve');
      await waitFor(() => changes.some((ch) => ch.events.some((e) => e.kind === 'run.completed')), {
        timeoutMs: 30_000,
        intervalMs: 100,
        description: 'run.completed delivered to the live subscriber',
      });
    } finally {
      live.close();
    }

    const [a, b] = await Promise.all([
      c.api.waitForRun(reviewed, (v) => v.run.status === 'Completed', 30_000, 'reviewed run completed'),
      c.api.waitForRun(direct, (v) => v.run.status === 'Completed', 30_000, 'direct run completed'),
    ]);
    expect(nodeOf(a, 'lookup')?.status).toBe('Skipped');
    expect(nodeOf(a, 'done')?.status).toBe('Succeeded');
    expect(nodeOf(b, 'review')?.status).toBe('Skipped');
    expect(nodeOf(b, 'lookup')?.status).toBe('Succeeded');
    expect(a.output).toMatchObject({ outcome: 'completed' });
    expect(b.output).toMatchObject({ outcome: 'completed' });
  }, 90_000);

  it('keeps every key of the queue prefix in the one slot of its hash tag, on one master', async () => {
    const cluster = c.redis as Cluster;
    const slot = Number(await cluster.cluster('KEYSLOT', c.queuePrefix));
    const holders: { node: string; keys: string[] }[] = [];
    for (const node of cluster.nodes('master')) {
      const keys = await node.keys(`${c.queuePrefix}*`);
      if (keys.length > 0) holders.push({ node: `${node.options.host}:${node.options.port}`, keys });
    }
    expect(holders).toHaveLength(1);
    const keys = holders[0]!.keys;
    // the lanes' BullMQ keys are there (the runs above went through them)
    expect(keys.some((k) => k.startsWith(`${c.queuePrefix}:node.tool:`))).toBe(true);
    const slots = new Set(await Promise.all(keys.slice(0, 50).map(async (k) => Number(await cluster.cluster('KEYSLOT', k)))));
    expect([...slots]).toEqual([slot]);
  }, 30_000);
});
