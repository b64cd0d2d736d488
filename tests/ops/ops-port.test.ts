/**
 * The ops port (OPS_PORT) of the real dispatcher and worker processes: /livez, /readyz,
 * /metrics; the lane backlog gauges KEDA scales on move when a job waits; a worker whose
 * Redis is cut goes unready.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeLaneQueues, createLaneQueues } from '@flowline/queue';
import { createTestDatabase, createTestRedis, spawnService, waitFor, type ServiceProcess, type TestDatabase, type TestRedis } from '@flowline/testing';

const rootDir = fileURLToPath(new URL('../..', import.meta.url));

function opsPortOf(p: ServiceProcess): number {
  const m = /"port":(\d+),"msg":"ops port listening/.exec(p.output());
  if (!m) throw new Error(`no ops port line in: ${p.output()}`);
  return Number(m[1]);
}

async function get(port: number, path: string): Promise<{ status: number; text: string }> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(10_000) });
    return { status: res.status, text: await res.text() };
  } catch {
    return { status: 0, text: '' };
  }
}

function gauge(text: string, name: string, lane: string): number | null {
  const m = new RegExp(`^${name}\\{lane="${lane}"\\} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : null;
}

let db: TestDatabase;
let redis: TestRedis;
beforeAll(async () => {
  db = await createTestDatabase();
  redis = createTestRedis();
});
afterAll(async () => {
  await redis?.cleanup();
  await db?.drop();
});

describe('dispatcher ops port', () => {
  it('serves /livez, /readyz and the lane backlog gauges, which move when a job waits in the lane', async () => {
    const p = await spawnService({
      cwd: join(rootDir, 'services', 'dispatcher'),
      env: { DATABASE_URL: db.url, REDIS_URL: redis.url, QUEUE_PREFIX: redis.prefix, OPS_PORT: '0', DISPATCHER_ID: 'ops-port-test' },
      readyText: 'dispatcher started',
      readyTimeoutMs: 60_000,
    });
    const client = new Redis(redis.url, { maxRetriesPerRequest: null });
    const queues = createLaneQueues(client, redis.prefix);
    try {
      const port = opsPortOf(p);
      expect((await get(port, '/livez')).status).toBe(200);
      expect((await get(port, '/readyz')).status).toBe(200);
      const before = (await get(port, '/metrics')).text;
      expect(before).toContain('process_cpu_seconds_total');
      expect(gauge(before, 'flowline_lane_queue_depth', 'tool')).toBe(0);
      // the stuck-run watchdog's counter is exported from the start, one series per invariant
      expect(before).toMatch(/^flowline_watchdog_stuck_runs_total\{invariant="runningPastDeadline"\} 0$/m);
      expect(before).toMatch(/^flowline_watchdog_stuck_runs_total\{invariant="dueNotTicked"\} 0$/m);
      expect(gauge(before, 'flowline_lane_oldest_wait_seconds', 'tool')).toBe(0);

      // two waiting jobs, one of them in the prioritized set a wait-list length misses
      await queues.tool.add('ops-test', {} as never, { jobId: 'ops-test-1' });
      await queues.tool.add('ops-test', {} as never, { jobId: 'ops-test-2', priority: 5 });
      const after = await waitFor(
        async () => {
          const text = (await get(port, '/metrics')).text;
          return (gauge(text, 'flowline_lane_oldest_wait_seconds', 'tool') ?? 0) > 0 ? text : null;
        },
        { timeoutMs: 20_000, description: 'the tool lane backlog to show on /metrics' },
      );
      expect(gauge(after, 'flowline_lane_queue_depth', 'tool')).toBe(2);
      expect(gauge(after, 'flowline_lane_queue_depth', 'llm')).toBe(0);
    } finally {
      await closeLaneQueues(queues);
      client.disconnect();
      p.child.kill('SIGTERM');
    }
    expect(await p.exited, p.output()).toBe(0);
  }, 120_000);
});

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

describe('worker ops port', () => {
  it('a worker whose Redis is cut goes unready, and ready again when it returns', async () => {
    const redisPort = await freePort();
    const startRedis = (): ChildProcess => spawn('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    let server = startRedis();
    const url = `redis://127.0.0.1:${redisPort}`;
    await waitFor(async () => {
      const c = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      c.on('error', () => undefined);
      try {
        await c.connect();
        return (await c.ping()) === 'PONG';
      } catch {
        return false;
      } finally {
        c.disconnect();
      }
    }, { timeoutMs: 10_000, description: 'the private redis-server' });
    const p = await spawnService({
      cwd: join(rootDir, 'services', 'worker-tool'),
      env: { REDIS_URL: url, QUEUE_PREFIX: '{ops-port-test}', OPS_PORT: '0', READY_CHECK_TIMEOUT_MS: '500' },
      readyText: 'worker-tool ready',
      readyTimeoutMs: 60_000,
    });
    try {
      const port = opsPortOf(p);
      expect((await get(port, '/readyz')).status).toBe(200);
      server.kill('SIGKILL');
      await waitFor(async () => (await get(port, '/readyz')).status === 503, { timeoutMs: 15_000, description: '/readyz 503 with Redis gone' });
      expect((await get(port, '/livez')).status).toBe(200);
      server = startRedis();
      await waitFor(async () => (await get(port, '/readyz')).status === 200, { timeoutMs: 30_000, description: '/readyz 200 with Redis back' });
    } finally {
      p.child.kill('SIGKILL');
      server.kill('SIGKILL');
    }
  }, 120_000);
});

/**
 * A TCP proxy to `upstreamPort` on loopback; `cut()` blackholes it (every byte either way is
 * dropped, connections stay open: a network partition, not a refused connection).
 */
async function startBlackholeProxy(upstreamPort: number): Promise<{ port: number; cut(): void; close(): Promise<void> }> {
  let cut = false;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(upstreamPort, '127.0.0.1');
    for (const [from, to] of [[client, upstream], [upstream, client]] as const) {
      sockets.add(from);
      from.on('data', (chunk) => {
        if (!cut) to.write(chunk);
      });
      from.on('error', () => undefined);
      from.on('close', () => to.destroy());
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    cut: () => {
      cut = true;
    },
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('worker readiness behind a network cut', () => {
  it('a worker whose Redis connection is blackholed answers /readyz 503 within its check timeout, /livez still 200', async () => {
    const upstreamPort = Number(new URL(redis.url).port || 6379);
    const proxy = await startBlackholeProxy(upstreamPort);
    const p = await spawnService({
      cwd: join(rootDir, 'services', 'worker-tool'),
      env: { REDIS_URL: `redis://127.0.0.1:${proxy.port}`, QUEUE_PREFIX: redis.prefix, OPS_PORT: '0', READY_CHECK_TIMEOUT_MS: '500' },
      readyText: 'worker-tool ready',
      readyTimeoutMs: 60_000,
    });
    try {
      const port = opsPortOf(p);
      expect((await get(port, '/readyz')).status).toBe(200);
      proxy.cut();
      await waitFor(async () => (await get(port, '/readyz')).status === 503, { timeoutMs: 10_000, description: '/readyz 503 with Redis blackholed' });
      expect((await get(port, '/livez')).status).toBe(200);
    } finally {
      p.child.kill('SIGKILL');
      await proxy.close();
    }
  }, 90_000);
});
