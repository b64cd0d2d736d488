/**
 * Admission of what is in flight, through a real HTTP server: a write held open (its chunked
 * body still streaming) is in flight; past a tenant's bound the next write is answered 429
 * `TooManyInFlight`, past the replica's 503 `Overloaded`, both with `Retry-After` and the
 * bound named, while other tenants' writes and every tenant's reads are served. A chunked body
 * is counted as it streams and refused at the chunk that crosses the byte bound. A request
 * that finds no free database connection within the pool's acquire timeout is 503
 * `Overloaded` with `Retry-After`, never a 500.
 */
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import pino from 'pino';
import { createPool } from '@flowline/db';
import { heavyFanOutBody } from '@flowline/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app';
import { DEFAULT_EDGE_OPTIONS, type EdgeOptions } from '../src/edge/config';
import type { AdmissionOptions } from '../src/edge/admission';
import { KEYS, lineGraph, startHarness, type Harness } from './harness';

const KEY_C = 'key-tenant-c';
const MiB = 1024 * 1024;

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: { error?: { code: string; message: string; details?: unknown[] } } & Record<string, unknown>;
  reusedSocket: boolean;
}

interface Open {
  /** writes more of the body */
  write(text: string): void;
  /** ends the body; the answer follows */
  end(text?: string): void;
  answer: Promise<Answer>;
}

function open(port: number, agent: http.Agent, method: string, path: string, token: string, length?: number): Open {
  const headers: Record<string, string | number> = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  if (length !== undefined) headers['content-length'] = length;
  const req = http.request({ host: '127.0.0.1', port, method, path, agent, headers });
  const answer = new Promise<Answer>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text ? JSON.parse(text) : {}, reusedSocket: req.reusedSocket }));
    });
    req.on('error', reject);
  });
  // headers go out now: the server admits (or refuses) the request before any body byte
  req.flushHeaders();
  return { write: (t) => req.write(t), end: (t) => (t === undefined ? req.end() : req.end(t)), answer };
}

function send(port: number, agent: http.Agent, method: string, path: string, token: string, body?: string): Promise<Answer> {
  const o = open(port, agent, method, path, token, body === undefined ? undefined : Buffer.byteLength(body));
  o.end(body);
  return o.answer;
}

/** A small definition create; `pad` characters of description make it longer. */
const createBody = (pad = 0) => JSON.stringify({ name: 'x', description: 'd'.repeat(pad), graph: lineGraph() });

async function serveApp(h: Harness, admission: Partial<AdmissionOptions>) {
  const edge: EdgeOptions = { ...DEFAULT_EDGE_OPTIONS, rateLimit: null, admission: { ...DEFAULT_EDGE_OPTIONS.admission, ...admission } };
  const app = createApp({ ...h.deps, edge });
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as http.Server;
  if (!server.listening) await once(server, 'listening');
  return {
    app,
    port: (server.address() as AddressInfo).port,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

let h: Harness;
beforeAll(async () => {
  h = await startHarness({}, new Map([[KEYS.a, 'tenantA'], [KEYS.b, 'tenantB'], [KEY_C, 'tenantC']]));
});
afterAll(async () => {
  await h.close();
});

describe('in-flight bounds', () => {
  it('answers a tenant’s write past its request bound 429 TooManyInFlight with Retry-After, serves other tenants and its reads meanwhile, and admits it again once the held write is answered', async () => {
    const s = await serveApp(h, { tenantWrites: 1, retryAfterSeconds: 3 });
    const agent = new http.Agent({ keepAlive: true });
    try {
      const held = open(s.port, agent, 'POST', '/v1/definitions', KEYS.a);
      held.write(createBody().slice(0, 10));
      const refused = await send(s.port, agent, 'POST', '/v1/definitions', KEYS.a, createBody());
      expect({ status: refused.status, retryAfter: refused.headers['retry-after'], error: refused.body.error }).toEqual({
        status: 429,
        retryAfter: '3',
        error: { code: 'TooManyInFlight', message: expect.stringContaining('ADMISSION_TENANT_WRITES = 1'), details: [{ bound: 'ADMISSION_TENANT_WRITES', limit: 1 }] },
      });
      expect((await send(s.port, agent, 'POST', '/v1/definitions', KEYS.b, createBody())).status).toBe(201);
      expect((await send(s.port, agent, 'GET', '/v1/definitions', KEYS.a)).status).toBe(200);
      held.end(createBody().slice(10));
      expect((await held.answer).status).toBe(201);
      expect((await send(s.port, agent, 'POST', '/v1/definitions', KEYS.a, createBody())).status).toBe(201);
      const metrics = await (await s.app.request('/metrics')).text();
      expect(metrics).toMatch(/flowline_api_refused_total\{bound="ADMISSION_TENANT_WRITES"\} 1\b/);
    } finally {
      agent.destroy();
      await s.close();
    }
  });

  it('answers 503 Overloaded with Retry-After once the replica’s write bound is reached by other tenants', async () => {
    const s = await serveApp(h, { tenantWrites: 1, replicaWrites: 2 });
    const agent = new http.Agent({ keepAlive: true });
    try {
      const heldA = open(s.port, agent, 'POST', '/v1/definitions', KEYS.a);
      const heldB = open(s.port, agent, 'POST', '/v1/definitions', KEYS.b);
      heldA.write('{');
      heldB.write('{');
      const refused = await send(s.port, agent, 'POST', '/v1/definitions', KEY_C, createBody());
      expect({ status: refused.status, retryAfter: refused.headers['retry-after'], code: refused.body.error?.code, details: refused.body.error?.details }).toEqual({
        status: 503,
        retryAfter: '1',
        code: 'Overloaded',
        details: [{ bound: 'ADMISSION_REPLICA_WRITES', limit: 2 }],
      });
      expect((await send(s.port, agent, 'GET', '/v1/runs', KEY_C)).status).toBe(200);
      heldA.end(createBody().slice(1));
      heldB.end(createBody().slice(1));
      expect([(await heldA.answer).status, (await heldB.answer).status]).toEqual([201, 201]);
    } finally {
      agent.destroy();
      await s.close();
    }
  });

  it('weighs writes by their bytes: an announced body past the tenant’s byte bound is refused before it is read, a chunked one at the chunk that crosses it, and the connection stays usable', async () => {
    const s = await serveApp(h, { tenantWriteBytes: MiB });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const other = new http.Agent({ keepAlive: true });
    try {
      const heavy = heavyFanOutBody(200, 600_000);
      const held = open(s.port, other, 'POST', '/v1/definitions', KEYS.a, Buffer.byteLength(heavy));
      held.write(heavy.slice(0, 100));
      // announced: 600 KB more than the 1 MiB bound allows beside the held 600 KB
      const announced = await send(s.port, agent, 'POST', '/v1/definitions', KEYS.a, heavy);
      expect({ status: announced.status, bound: announced.body.error?.details }).toEqual({ status: 429, bound: [{ bound: 'ADMISSION_TENANT_WRITE_BYTES', limit: MiB }] });
      // chunked: counted as it arrives, refused mid-body; the rest is drained and the socket reused
      const chunked = open(s.port, agent, 'POST', '/v1/definitions', KEYS.a);
      for (let i = 0; i < heavy.length; i += 64 * 1024) chunked.write(heavy.slice(i, i + 64 * 1024));
      chunked.end();
      const c = await chunked.answer;
      expect({ status: c.status, code: c.body.error?.code, retryAfter: c.headers['retry-after'] }).toEqual({ status: 429, code: 'TooManyInFlight', retryAfter: '1' });
      const small = await send(s.port, agent, 'POST', '/v1/definitions', KEYS.a, createBody(1000));
      expect({ status: small.status, reused: small.reusedSocket }).toEqual({ status: 201, reused: true });
      held.end(heavy.slice(100));
      expect((await held.answer).status).toBe(201);
      // with nothing in flight a chunked body near 1 MiB passes
      const alone = open(s.port, agent, 'POST', '/v1/definitions', KEYS.a);
      const near = heavyFanOutBody(200, MiB - 2000);
      for (let i = 0; i < near.length; i += 64 * 1024) alone.write(near.slice(i, i + 64 * 1024));
      alone.end();
      expect((await alone.answer).status).toBe(201);
    } finally {
      agent.destroy();
      other.destroy();
      await s.close();
    }
  });
});

describe('a request that finds no free database connection in time', () => {
  it('is answered 503 Overloaded with Retry-After naming DATABASE_ACQUIRE_TIMEOUT_MS, never 500, and the next one is served once a connection is free', async () => {
    const pool = createPool(h.db.url, { max: 1, connectionTimeoutMs: 200 });
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (l: string) => lines.push(l) });
    const app = createApp({ ...h.deps, pool, logger, edge: { ...DEFAULT_EDGE_OPTIONS, rateLimit: null, admission: { ...DEFAULT_EDGE_OPTIONS.admission, retryAfterSeconds: 2 } } });
    const held = await pool.connect();
    try {
      for (const [method, path, body] of [
        ['GET', '/v1/runs', undefined],
        ['POST', '/v1/definitions', createBody()],
      ] as const) {
        const r = await app.request(path, { method, headers: { authorization: `Bearer ${KEYS.a}`, 'content-type': 'application/json' }, body });
        expect({ route: `${method} ${path}`, status: r.status, retryAfter: r.headers.get('retry-after'), body: await r.json() }).toEqual({
          route: `${method} ${path}`,
          status: 503,
          retryAfter: '2',
          body: { error: { code: 'Overloaded', message: expect.stringContaining('no database connection'), details: [{ bound: 'DATABASE_ACQUIRE_TIMEOUT_MS', limit: 200 }] } },
        });
      }
    } finally {
      held.release();
    }
    const r = await app.request('/v1/runs', { headers: { authorization: `Bearer ${KEYS.a}` } });
    expect(r.status).toBe(200);
    // two refusals, one warning (at most one per 10 s), no "request failed" error
    expect(lines.map((l) => (JSON.parse(l) as { level: number; msg: string }).msg)).toEqual([expect.stringContaining('DATABASE_ACQUIRE_TIMEOUT_MS')]);
    await pool.end();
  });
});

describe('the OpenAPI document', () => {
  it('lists 429 and 503 with Retry-After on every /v1 route, and on no ops route', async () => {
    const doc = (await (await h.app.request('/openapi.json')).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, { description: string; headers?: Record<string, unknown> }> }>>;
    };
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [m, op] of Object.entries(ops)) {
        const route = `${m} ${path}`;
        const seen = {
          route,
          tooMany: op.responses['429']?.description.includes('TooManyInFlight') === true && op.responses['429']?.headers?.['Retry-After'] !== undefined,
          overloaded: op.responses['503']?.description.includes('Overloaded') === true && op.responses['503']?.headers?.['Retry-After'] !== undefined,
        };
        const v1 = path.startsWith('/v1/');
        expect(seen).toEqual({ route, tooMany: v1, overloaded: v1 });
      }
    }
  });
});
