/**
 * The burst workload (`--only burst`) on a cluster of its own (one API, one dispatcher, the
 * services' defaults — admission bounds, rate limits and the API's pool of 10 included), two
 * tenants by API key. Per round: tenant A sends `creates` valid `POST /v1/definitions` at once,
 * each a 200-node fan-out (Start → 198 LlmCall → End) whose body is just under the 1 MiB limit;
 * tenant B starts a `GET /v1/runs?limit=20` every 50 ms (each on its own, whatever the answers'
 * pace) from the burst's start until A's last answer. Figures per round: A's answers by status and code, how many were 5xx,
 * the burst's wall time, and B's read latency (p50, p99, max). Goals: 0 × 5xx, B's read p99 ≤ 1 s.
 */
import http from 'node:http';
import { heavyFanOutBody } from '@flowline/testing';
import { startBenchCluster } from './flowline';
import { percentile } from './stats';

export interface BurstRound {
  /** A's answers, "status code" → count */
  answers: Record<string, number>;
  fiveXx: number;
  burstMs: number;
  reads: number;
  readP50Ms: number;
  readP99Ms: number;
  readMaxMs: number;
}

export interface BurstResult {
  creates: number;
  bodyBytes: number;
  nodes: number;
  rounds: BurstRound[];
}

const KEYS = { a: 'bench-burst-a', b: 'bench-burst-b' };
const NODES = 200;
const BODY_BYTES = 1024 * 1024 - 4096;
const READ_EVERY_MS = 50;

interface Answer {
  status: number;
  code: string;
  ms: number;
}

function request(base: URL, agent: http.Agent, method: string, path: string, key: string, body?: string): Promise<Answer> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const headers: Record<string, string | number> = { authorization: `Bearer ${key}` };
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = Buffer.byteLength(body);
    }
    const req = http.request({ host: base.hostname, port: base.port, method, path, agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        let code: string;
        try {
          code = (JSON.parse(text) as { error?: { code?: string } }).error?.code ?? '';
        } catch {
          code = 'non-JSON';
        }
        resolve({ status: res.statusCode ?? 0, code, ms: performance.now() - t0 });
      });
    });
    // a dropped connection counts as an answer of its own (status 0), never as a crash of the bench
    req.on('error', (err) => resolve({ status: 0, code: (err as NodeJS.ErrnoException).code ?? err.message, ms: performance.now() - t0 }));
    if (body !== undefined) req.write(body);
    req.end();
  });
}

export async function burst(
  dbUrl: string,
  redisUrl: string,
  sizes: { creates: number; rounds: number },
  log: (s: string) => void,
): Promise<BurstResult> {
  const c = await startBenchCluster(dbUrl, redisUrl, 1, { API_KEYS: `ta:${KEYS.a},tb:${KEYS.b}` });
  const base = new URL(c.cluster.apiUrl);
  const body = heavyFanOutBody(NODES, BODY_BYTES);
  const rounds: BurstRound[] = [];
  try {
    for (let round = 1; round <= sizes.rounds; round++) {
      const agentA = new http.Agent({ keepAlive: true, maxSockets: Infinity });
      const agentB = new http.Agent({ keepAlive: true, maxSockets: Infinity });
      try {
        // B has a few keep-alive connections open before the burst (more open as its reads need them)
        await Promise.all(Array.from({ length: 8 }, () => request(base, agentB, 'GET', '/v1/runs?limit=20', KEYS.b)));
        // open loop: a read starts every READ_EVERY_MS whatever the answers' pace, so a stall is
        // sampled as often as a quiet spell (a closed loop would take one sample per stall)
        const pending: Promise<Answer>[] = [];
        const poll = setInterval(() => pending.push(request(base, agentB, 'GET', '/v1/runs?limit=20', KEYS.b)), READ_EVERY_MS);
        const t0 = performance.now();
        const writes = await Promise.all(Array.from({ length: sizes.creates }, () => request(base, agentA, 'POST', '/v1/definitions', KEYS.a, body)));
        const burstMs = performance.now() - t0;
        clearInterval(poll);
        const reads = await Promise.all(pending);
        const answers: Record<string, number> = {};
        for (const w of writes) answers[`${w.status}${w.code ? ` ${w.code}` : ''}`] = (answers[`${w.status}${w.code ? ` ${w.code}` : ''}`] ?? 0) + 1;
        const ms = reads.map((r) => r.ms);
        const r: BurstRound = {
          answers,
          fiveXx: writes.filter((w) => w.status >= 500).length + reads.filter((x) => x.status >= 500).length,
          burstMs,
          reads: reads.length,
          readP50Ms: percentile(ms, 50),
          readP99Ms: percentile(ms, 99),
          readMaxMs: Math.max(...ms),
        };
        if (reads.some((x) => x.status !== 200)) r.answers[`B reads not 200`] = reads.filter((x) => x.status !== 200).length;
        rounds.push(r);
        log(`burst round ${round}: ${JSON.stringify(r)}`);
      } finally {
        agentA.destroy();
        agentB.destroy();
      }
    }
  } finally {
    await c.close();
  }
  return { creates: sizes.creates, bodyBytes: Buffer.byteLength(body), nodes: NODES, rounds };
}
