/**
 * A tool worker that stopped consuming goes unready: with its one slot (LANE_CONCURRENCY=1)
 * held by a call that does not end while another job waits, /readyz answers 503 with the
 * reason once WORKER_STALL_MS passed without a job taken or finished; when the call ends
 * (cancelled) the worker takes the waiting job and is ready again. A long call with nothing
 * waiting keeps it ready.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonObject, WorkItem } from '@flowline/graph';
import { closeLaneQueues, createLaneQueues, enqueueWork, publishCancellations } from '@flowline/queue';
import { createTestRedis, spawnService, waitFor, type TestRedis } from '@flowline/testing';

const rootDir = fileURLToPath(new URL('../..', import.meta.url));
const STALL_MS = 1_500;

function toolItem(config: JsonObject): WorkItem {
  return {
    lane: 'tool',
    runId: randomUUID(),
    nodeKey: 'tool1',
    kind: 'Tool',
    invocationId: randomUUID(),
    attempt: 1,
    config,
    input: { run: { input: {} }, upstream: {}, input: { status: 'succeeded', attempt: 1, branch: null, output: {} } },
    deadlineAt: Date.now() + 120_000,
    steering: [],
    outputSchema: null,
  };
}

async function readyz(port: number): Promise<{ status: number; body: { status?: string; reason?: string } }> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(5_000) });
    return { status: res.status, body: (await res.json()) as { status?: string; reason?: string } };
  } catch {
    return { status: 0, body: {} };
  }
}

let redis: TestRedis;
beforeAll(() => {
  redis = createTestRedis();
});
afterAll(async () => {
  await redis?.cleanup();
});

describe('a tool worker that stopped consuming', () => {
  it('answers /readyz 503 with the reason while jobs wait and none is taken for WORKER_STALL_MS, and 200 once it consumes again', async () => {
    const p = await spawnService({
      cwd: join(rootDir, 'services', 'worker-tool'),
      env: { REDIS_URL: redis.url, QUEUE_PREFIX: redis.prefix, OPS_PORT: '0', LANE_CONCURRENCY: '1', WORKER_STALL_MS: String(STALL_MS) },
      readyText: 'worker-tool ready',
      readyTimeoutMs: 60_000,
    });
    const client = new Redis(redis.url, { maxRetriesPerRequest: null });
    const queues = createLaneQueues(client, redis.prefix);
    try {
      const m = /"port":(\d+),"msg":"ops port listening/.exec(p.output());
      if (!m) throw new Error(`no ops port line in: ${p.output()}`);
      const port = Number(m[1]);
      expect((await readyz(port)).status).toBe(200);

      // the one slot taken by a call that does not end by itself; nothing waits
      const blocking = toolItem({ toolName: 'wait', arguments: { ms: 100_000 } });
      await enqueueWork(queues, [blocking]);
      await waitFor(async () => (await queues.tool.getJob(blocking.invocationId))?.processedOn !== undefined, { timeoutMs: 10_000, description: 'the blocking job taken' });
      await new Promise((r) => setTimeout(r, 2 * STALL_MS));
      expect((await readyz(port)).status, 'a long call with nothing waiting is no stall').toBe(200);

      // a job waits behind it: no progress for WORKER_STALL_MS → unready, saying why
      const waiting = toolItem({ toolName: 'echo', arguments: { ok: true } });
      await enqueueWork(queues, [waiting]);
      const unready = await waitFor(
        async () => {
          const r = await readyz(port);
          return r.status === 503 ? r : null;
        },
        { timeoutMs: 15_000, description: '/readyz 503 while a job waits behind a stuck slot' },
      );
      expect(unready.body.status).toBe('unready');
      expect(unready.body.reason).toMatch(/^no job taken or finished for \d+ ms while 1 wait \(WORKER_STALL_MS=1500\)$/);
      await waitFor(() => p.output().includes('worker stalled: unready'), { timeoutMs: 5_000, description: 'the stall logged' });

      // the stuck call ends (cancelled): the worker takes the waiting job and is ready again
      await publishCancellations(client, [{ invocationId: blocking.invocationId, reason: 'test' }], redis.prefix);
      await waitFor(async () => (await queues.tool.getJob(waiting.invocationId))?.finishedOn !== undefined, { timeoutMs: 10_000, description: 'the waiting job done' });
      await waitFor(async () => (await readyz(port)).status === 200, { timeoutMs: 10_000, description: '/readyz 200 once the worker consumes again' });
    } finally {
      await closeLaneQueues(queues);
      client.disconnect();
      p.child.kill('SIGTERM');
    }
    expect(await p.exited, p.output()).toBe(0);
  }, 90_000);
});
