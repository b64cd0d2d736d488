/**
 * Per-tenant REST rate limits (issue 12 item 6) across two API replicas sharing one Redis:
 * a tenant that empties its write bucket is answered 429 `RateLimited` with `Retry-After` on
 * either replica, while another tenant, and the same tenant's reads, are served; ops routes
 * are never limited; an unreachable Redis fails open with a warning.
 */
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToolRegistry } from '@flowline/tools';
import { createApp } from '../src/app';
import { DEFAULT_EDGE_OPTIONS, edgeConfigSchema } from '../src/edge/config';
import { KEYS, startHarness, type Harness } from './harness';

const LIMITS = { writes: { perSecond: 0.5, burst: 3 }, reads: { perSecond: 0.5, burst: 5 }, writeBytesPerToken: 0, timeoutMs: 250 };

let a: Harness;
let b: Harness;

beforeAll(async () => {
  a = await startHarness({}, undefined, { edge: { ...DEFAULT_EDGE_OPTIONS, rateLimit: LIMITS } });
  // replica B: the same database, Redis and prefix, its own app
  b = { ...a, app: createApp({ ...a.deps, edge: { ...DEFAULT_EDGE_OPTIONS, rateLimit: LIMITS } }) } as Harness;
});
afterAll(async () => {
  await a.close();
});

const validate = (h: Harness, token: string) =>
  h.app.request('/v1/definitions/validate', {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ graph: { nodes: [], edges: [] } }),
  });
const read = (h: Harness, token: string) => h.app.request('/v1/tools', { headers: { authorization: `Bearer ${token}` } });

describe('per-tenant rate limits shared by two replicas', () => {
  it('answers 429 RateLimited with Retry-After once a tenant’s write bucket is empty on either replica, and serves another tenant meanwhile', async () => {
    const first = await Promise.all([validate(a, KEYS.a), validate(b, KEYS.a), validate(a, KEYS.a)]);
    expect(first.map((r) => r.status)).toEqual([200, 200, 200]);
    for (const replica of [a, b]) {
      const refused = await validate(replica, KEYS.a);
      expect(refused.status).toBe(429);
      expect(await refused.json()).toEqual({ error: { code: 'RateLimited', message: expect.stringMatching(/too many write requests/) } });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    expect((await validate(b, KEYS.b)).status).toBe(200);
    expect((await read(b, KEYS.a)).status).toBe(200);
    expect((await a.app.request('/healthz')).status).toBe(200);
  });

  it('limits reads on their own, looser bucket', async () => {
    const answers: number[] = [];
    for (let i = 0; i < 7; i++) answers.push((await read(i % 2 ? a : b, 'key-tenant-b')).status);
    expect(answers.filter((s) => s === 429).length).toBeGreaterThanOrEqual(1);
    expect(answers.slice(0, 4)).toEqual([200, 200, 200, 200]);
  });

  it('weighs a write by the body it announces: one token plus one per RATE_LIMIT_WRITE_BYTES_PER_TOKEN bytes, never more than the burst', async () => {
    // a bucket of its own (another prefix): 20 tokens, a token per 1 KiB of body
    const weighted = createApp({ ...a.deps, queuePrefix: `${a.prefix}-weighted`, edge: { ...DEFAULT_EDGE_OPTIONS, rateLimit: { ...LIMITS, writes: { perSecond: 0.5, burst: 20 }, writeBytesPerToken: 1024 } } });
    // in-process requests carry no Content-Length of their own: announced as a client's would be
    const announced = (app: typeof weighted, pad: number) => {
      const body = JSON.stringify({ graph: { nodes: [], edges: [] }, pad: 'x'.repeat(pad) });
      return app.request('/v1/definitions/validate', {
        method: 'POST',
        headers: { authorization: `Bearer ${KEYS.a}`, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
        body,
      });
    };
    const post = (pad: number) => announced(weighted, pad);
    expect((await post(10 * 1024)).status).toBe(200); // 11 tokens of 20
    const refused = await post(10 * 1024); // 11 more: 9 left
    expect({ status: refused.status, code: ((await refused.json()) as { error: { code: string } }).error.code }).toEqual({ status: 429, code: 'RateLimited' });
    // the 2 missing tokens come back in 4 s at 0.5 a second
    expect(Number(refused.headers.get('retry-after'))).toBe(4);
    expect((await post(0)).status).toBe(200); // a small write takes one token
    // a body heavier than the whole bucket takes the whole bucket (it passes when the bucket is full, never refused forever)
    const other = createApp({ ...a.deps, queuePrefix: `${a.prefix}-heavy`, edge: { ...DEFAULT_EDGE_OPTIONS, rateLimit: { ...LIMITS, writes: { perSecond: 0.5, burst: 5 }, writeBytesPerToken: 1024 } } });
    expect((await announced(other, 100 * 1024)).status).toBe(200);
    expect((await announced(other, 0)).status).toBe(429);
  });

  it('never limits the ops routes', async () => {
    for (let i = 0; i < 10; i++) expect((await b.app.request('/healthz')).status).toBe(200);
  });

  it('lists 429 with Retry-After on every /v1 route of the OpenAPI document', async () => {
    const doc = (await (await a.app.request('/openapi.json')).json()) as { paths: Record<string, Record<string, { responses: Record<string, { headers?: object }> }>> };
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [m, op] of Object.entries(ops)) {
        if (path.startsWith('/v1/')) expect({ route: `${m} ${path}`, has: op.responses['429']?.headers !== undefined }).toEqual({ route: `${m} ${path}`, has: true });
        else expect(op.responses['429']).toBeUndefined();
      }
    }
  });
});

describe('an unreachable Redis', () => {
  it('fails open: requests are served and one warning is logged', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (l: string) => lines.push(l) });
    const down = new Redis('redis://127.0.0.1:1', { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
    const tools = await createToolRegistry({ testTools: true });
    const app = createApp({ ...a.deps, redis: down, logger, tools: { catalog: () => tools.catalog(), parserCatalog: () => tools.asParserCatalog() }, edge: { ...DEFAULT_EDGE_OPTIONS, rateLimit: { ...LIMITS, writes: { perSecond: 0.001, burst: 1 } } } });
    for (let i = 0; i < 4; i++) {
      const r = await app.request('/v1/definitions/validate', { method: 'POST', headers: { authorization: `Bearer ${KEYS.a}`, 'content-type': 'application/json' }, body: '{"graph":{}}' });
      expect(r.status).toBe(200);
    }
    expect(lines.filter((l) => l.includes('rate limiter unavailable'))).toHaveLength(1);
    down.disconnect();
  });
});

describe('the rate limit options', () => {
  it('default high enough for the suite and the bench, and refuse a non-positive burst or a negative rate at boot', () => {
    const d = edgeConfigSchema.parse({});
    expect(d.RATE_LIMIT_WRITES_PER_SECOND).toBeGreaterThanOrEqual(1000);
    expect(d.RATE_LIMIT_READS_PER_SECOND).toBeGreaterThanOrEqual(d.RATE_LIMIT_WRITES_PER_SECOND);
    expect(d.RATE_LIMIT_WRITE_BYTES_PER_TOKEN).toBe(64 * 1024);
    for (const bad of [{ RATE_LIMIT_WRITE_BURST: '0' }, { RATE_LIMIT_READS_PER_SECOND: '-1' }, { RATE_LIMIT_TIMEOUT_MS: 'soon' }, { RATE_LIMIT_WRITE_BYTES_PER_TOKEN: '-1' }]) {
      const r = edgeConfigSchema.safeParse(bad);
      expect({ bad, ok: r.success }).toEqual({ bad, ok: false });
    }
  });
});
