/**
 * One tenant's burst of heavy writes must not starve another tenant's reads, nor be answered
 * 500. Through a real HTTP server and a small Postgres pool with a short acquire timeout (the
 * production pool's shape, scaled down so the test runs in seconds): tenant A fires parallel
 * valid creates of 200-node fan-outs close to the 1 MiB body limit, tenant B reads
 * `GET /v1/runs` every 50 ms throughout. With the default admission bounds every answer to A is 201 or 429
 * `TooManyInFlight` with `Retry-After` (A alone never fills the replica: no 503), none is a
 * 5xx, and B's reads stay under 1 s at p99. Without admission the same burst queues on the
 * pool until acquires time out (500s) and B's reads wait behind it.
 */
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { createPool, type Pool } from '@flowline/db';
import { heavyFanOutBody } from '@flowline/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app';
import { DEFAULT_EDGE_OPTIONS } from '../src/edge/config';
import { KEYS, startHarness, type Harness } from './harness';

interface Answer {
  status: number;
  ms: number;
  retryAfter: string | undefined;
  code: string | undefined;
}

function request(port: number, agent: http.Agent, method: string, path: string, token: string, body?: string): Promise<Answer> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { authorization: `Bearer ${token}` };
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = Buffer.byteLength(body);
    }
    const req = http.request({ host: '127.0.0.1', port, method, path, agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        let code: string | undefined;
        try {
          code = (JSON.parse(text) as { error?: { code?: string } }).error?.code;
        } catch {
          code = undefined;
        }
        const ra = res.headers['retry-after'];
        resolve({ status: res.statusCode ?? 0, ms: performance.now() - t0, retryAfter: Array.isArray(ra) ? ra[0] : ra, code });
      });
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(xs.length * 0.99) - 1)]!;

/** CI-sized: the pool is small and its acquire timeout short, so today's unbounded admission shows within seconds. */
const BURST = 100;
const BODY_BYTES = 1024 * 1024 - 4096;
const POOL_MAX = 2;
const ACQUIRE_TIMEOUT_MS = 500;
const B_SOCKETS = 16;

describe('a tenant’s burst of 1 MiB creates', () => {
  let h: Harness;
  let pool: Pool;
  let server: http.Server;
  let port: number;

  beforeAll(async () => {
    h = await startHarness();
    pool = createPool(h.db.url, { max: POOL_MAX, connectionTimeoutMs: ACQUIRE_TIMEOUT_MS, applicationName: 'flowline-burst-test' });
    const app = createApp({ ...h.deps, pool, edge: { ...DEFAULT_EDGE_OPTIONS, rateLimit: null } });
    server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as http.Server;
    if (!server.listening) await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    await pool.end();
    await h.close();
  });

  it('answers 201 or 429 TooManyInFlight with Retry-After (never a 5xx), while another tenant’s reads stay under 1 s at p99', async () => {
    const body = heavyFanOutBody(200, BODY_BYTES);
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(1024 * 1024);
    const agentA = new http.Agent({ keepAlive: true, maxSockets: Infinity });
    const agentB = new http.Agent({ keepAlive: true, maxSockets: B_SOCKETS });
    try {
      // B's keep-alive connections are open before the burst: this process is also A's client, and
      // a connection it opens while writing A's hundred bodies waits on its own event loop
      const warm = await Promise.all(Array.from({ length: B_SOCKETS }, () => request(port, agentB, 'GET', '/v1/runs?limit=20', KEYS.b)));
      expect(warm.map((r) => r.status)).toEqual(warm.map(() => 200));
      // B reads every 50 ms whatever the answers' pace (a slow read never delays the next one's
      // start, so a stall is sampled as often as a quiet spell)
      const pending: Promise<Answer>[] = [];
      const poll = setInterval(() => pending.push(request(port, agentB, 'GET', '/v1/runs?limit=20', KEYS.b)), 50);
      const writes = await Promise.all(Array.from({ length: BURST }, () => request(port, agentA, 'POST', '/v1/definitions', KEYS.a, body)));
      clearInterval(poll);
      const reads = await Promise.all(pending);

      const byStatus: Record<string, number> = {};
      for (const w of writes) byStatus[`${w.status} ${w.code ?? ''}`.trim()] = (byStatus[`${w.status} ${w.code ?? ''}`.trim()] ?? 0) + 1;
      const unexpected = writes.filter((w) => w.status !== 201 && !(w.status === 429 && w.code === 'TooManyInFlight' && Number(w.retryAfter) >= 1));
      expect(unexpected.length, `A's answers: ${JSON.stringify(byStatus)}`).toBe(0);
      expect(writes.filter((w) => w.status === 201).length).toBeGreaterThan(0);

      expect(reads.length).toBeGreaterThanOrEqual(5);
      expect(reads.filter((r) => r.status !== 200)).toEqual([]);
      const readP99 = p99(reads.map((r) => r.ms));
      expect(readP99, `B's read p99 over ${reads.length} reads`).toBeLessThan(1_000);
    } finally {
      agentA.destroy();
      agentB.destroy();
    }
  }, 120_000);
});
