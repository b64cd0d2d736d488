/**
 * Answers given before the request body was read keep a keep-alive connection usable
 * (issue 11 item 1): one Node keep-alive agent with ONE socket sends a refused body to every
 * body route of `/openapi.json` (413 over 1 MiB, announced or chunked; 401 and 403, which
 * come before the body), then a normal request on the same agent, which must succeed on the
 * same socket. A body longer than BODY_DRAIN_MAX_BYTES is answered with `Connection: close`
 * and the agent's next request goes out on a fresh connection.
 */
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_EDGE_OPTIONS } from '../src/edge/config';
import { scopedRoutes } from '../src/route-scopes';
import { KEYS, startHarness, type Harness } from './harness';

const READ_ONLY = 'key-read-only';
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

interface Answer {
  status: number;
  connection: string | undefined;
  reusedSocket: boolean;
  body: string;
}

interface Server {
  h: Harness;
  server: http.Server;
  port: number;
}

async function startServer(edge?: {
  bodyDrainMaxBytes: number;
  bodyDrainTimeoutMs: number;
}): Promise<Server> {
  const h = await startHarness(
    {},
    new Map<string, string | { tenant: string; scopes: ['read'] }>([
      [KEYS.a, 'tenantA'],
      [READ_ONLY, { tenant: 'tenantA', scopes: ['read'] }],
    ]),
    edge ? { edge: { ...DEFAULT_EDGE_OPTIONS, ...edge } } : {},
  );
  const server = serve({ fetch: h.app.fetch, port: 0, hostname: '127.0.0.1' }) as http.Server;
  if (!server.listening) await once(server, 'listening');
  return { h, server, port: (server.address() as AddressInfo).port };
}

async function stopServer(s: Server): Promise<void> {
  s.server.closeAllConnections();
  await new Promise<void>((r) => s.server.close(() => r()));
  await s.h.close();
}

/** One request on `agent`; `body` is written in 64 KiB chunks (chunked unless `announce`). */
function send(
  s: Server,
  agent: http.Agent,
  method: string,
  path: string,
  opts: { body?: string; token?: string | null; announce?: boolean } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = {};
    const token = opts.token === undefined ? KEYS.a : opts.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    if (opts.body !== undefined) {
      headers['content-type'] = 'application/json';
      if (opts.announce !== false) headers['content-length'] = Buffer.byteLength(opts.body);
    }
    const req = http.request({ host: '127.0.0.1', port: s.port, method, path, agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          connection: res.headers.connection,
          reusedSocket: req.reusedSocket,
          body: text,
        }),
      );
    });
    req.on('error', reject);
    if (opts.body !== undefined) {
      const buf = Buffer.from(opts.body);
      for (let i = 0; i < buf.length; i += 65_536) req.write(buf.subarray(i, i + 65_536));
    }
    req.end();
  });
}

const oneSocket = () => new http.Agent({ keepAlive: true, maxSockets: 1 });
const OVER_LIMIT = `{"pad":${JSON.stringify('a'.repeat(1024 * 1024 + 100 * 1024))}}`;

/** Every route of the OpenAPI document that takes a body, with its path parameters filled. */
async function bodyRoutes(s: Server): Promise<Array<{ method: string; path: string; label: string }>> {
  const doc = (await s.h.call('GET', '/openapi.json', { token: null })).body as {
    paths: Record<string, Record<string, unknown>>;
  };
  return (
    Object.entries(doc.paths)
      // sign-out reads no body (it ends the cookie's session)
      .filter(([template]) => !template.startsWith('/auth/'))
      .flatMap(([template, ops]) =>
        Object.keys(ops)
          .filter((m) => m === 'post' || m === 'put' || m === 'patch')
          .map((m) => ({
            method: m.toUpperCase(),
            label: `${m.toUpperCase()} ${template}`,
            path: template
              .replace('{id}', template.startsWith('/v1/conversations') ? 'conv-1' : UNKNOWN)
              .replace(/\{\w+\}/g, 'node-1'),
          })),
      )
  );
}

describe('a refused body leaves the keep-alive connection usable', () => {
  let s: Server;
  let routes: Array<{ method: string; path: string; label: string }>;
  beforeAll(async () => {
    s = await startServer();
    routes = await bodyRoutes(s);
  });
  afterAll(async () => {
    await stopServer(s);
  });

  it('finds every POST and PUT route of the scope table in /openapi.json', () => {
    // a waitpoint's callback URL, an approval link and a webhook's delivery URL take no key (a signature is the credential), so no scope names them
    const unscoped = [
      'POST /w/{tokenId}/{signature}',
      'POST /w/a/{runId}/{nodeKey}/{principal}/{signature}',
      'POST /hooks/{tenant}/{slug}',
    ];
    const table = [
      ...unscoped,
      ...scopedRoutes()
        .filter((r) => r.method === 'POST' || r.method === 'PUT')
        .map((r) => `${r.method} ${r.path}`),
    ];
    expect(routes.map((r) => r.label).sort()).toEqual(table.sort());
  });

  it('answers 413 to a 1.1 MB announced body on every body route, then serves the next request on the same socket', async () => {
    const agent = oneSocket();
    try {
      const answers: Record<string, string> = {};
      for (const r of routes) {
        const refused = await send(s, agent, r.method, r.path, { body: OVER_LIMIT });
        const next = await send(s, agent, 'GET', '/v1/tools');
        answers[r.label] =
          `${refused.status} ${JSON.parse(refused.body).error.code} → ${next.status} reused=${next.reusedSocket}`;
      }
      // the upload is not capped at 1 MiB (MAX_UPLOAD_BYTES): a JSON body is refused as not multipart, unread
      const expected = (label: string) =>
        label === 'POST /v1/files' ? '400 ValidationFailed' : '413 PayloadTooLarge';
      for (const [label, answer] of Object.entries(answers))
        expect({ label, answer }).toEqual({ label, answer: `${expected(label)} → 200 reused=true` });
    } finally {
      agent.destroy();
    }
  });

  it('does the same for a chunked 1.1 MB body (no Content-Length)', async () => {
    const agent = oneSocket();
    try {
      for (const r of routes.slice(0, 4)) {
        const refused = await send(s, agent, r.method, r.path, { body: OVER_LIMIT, announce: false });
        const next = await send(s, agent, 'GET', '/v1/tools');
        expect({
          route: r.label,
          refused: refused.status,
          next: next.status,
          reused: next.reusedSocket,
        }).toEqual({
          route: r.label,
          refused: 413,
          next: 200,
          reused: true,
        });
      }
    } finally {
      agent.destroy();
    }
  });

  it('keeps the connection usable after a 401 and a 403 answered before the body is read', async () => {
    const agent = oneSocket();
    try {
      const body = JSON.stringify({ name: 'x', graph: { pad: 'b'.repeat(600_000) } });
      const cases: Array<[string | null, number]> = [
        [null, 401],
        ['not-a-key', 401],
        [READ_ONLY, 403],
      ];
      for (const [token, status] of cases) {
        const refused = await send(s, agent, 'POST', '/v1/definitions', { body, token });
        const next = await send(s, agent, 'GET', '/v1/tools');
        expect({ token, refused: refused.status, next: next.status, reused: next.reusedSocket }).toEqual({
          token,
          refused: status,
          next: 200,
          reused: true,
        });
      }
    } finally {
      agent.destroy();
    }
  });
});

describe('a body longer than BODY_DRAIN_MAX_BYTES', () => {
  let s: Server;
  beforeAll(async () => {
    s = await startServer({ bodyDrainMaxBytes: 64 * 1024, bodyDrainTimeoutMs: 5_000 });
  });
  afterAll(async () => {
    await stopServer(s);
  });

  it('is answered with Connection: close, and the agent’s next request succeeds on a new connection', async () => {
    const agent = oneSocket();
    try {
      const refused = await send(s, agent, 'POST', '/v1/definitions', { body: OVER_LIMIT });
      expect({ status: refused.status, connection: refused.connection }).toEqual({
        status: 413,
        connection: 'close',
      });
      const next = await send(s, agent, 'GET', '/v1/tools');
      expect({ status: next.status, reused: next.reusedSocket }).toEqual({ status: 200, reused: false });
    } finally {
      agent.destroy();
    }
  });
});
