import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app';
import { claimShards, releaseShards } from '@flowline/db';
import { waitFor } from '@flowline/testing';
import { KEYS, TEST_DISPATCHER, createDefinition, holdShards, lineGraph, startHarness, startRun, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  // a dispatcher holds the shards: /readyz answers 200 only then (see the test of that below)
  await holdShards(h);
});
afterAll(async () => {
  await h.close();
});

describe('auth and tenancy', () => {
  it('answers 401 without a key and with an unknown key', async () => {
    const none = await h.call('GET', '/v1/definitions', { token: null });
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe('Unauthorized');
    expect((await h.call('GET', '/v1/runs', { token: 'wrong' })).status).toBe(401);
    expect((await h.call('GET', '/v1/tools', { token: null })).status).toBe(401);
  });

  it('serves the ops routes without a key', async () => {
    expect((await h.call('GET', '/healthz', { token: null })).body).toEqual({ status: 'ok' });
    expect((await h.call('GET', '/livez', { token: null })).body).toEqual({ status: 'ok' });
    expect((await h.call('GET', '/readyz', { token: null })).status).toBe(200);
    expect((await h.call('GET', '/openapi.json', { token: null })).status).toBe(200);
    const docs = await h.call('GET', '/docs', { token: null });
    expect(docs.status).toBe(200);
    expect(docs.res.headers.get('content-type')).toMatch(/text\/html/);
  });

  it('runs single-tenant as "default" without auth when no keys are configured', async () => {
    const open = await startHarness({}, null);
    try {
      const id = await createDefinition(open, lineGraph(), 'open', undefined);
      const r = await open.call('GET', `/v1/definitions/${id}`, { token: null });
      expect(r.status).toBe(200);
      const row = await open.db.pool.query(`SELECT tenant_id FROM definitions WHERE id = $1`, [id]);
      expect(row.rows[0].tenant_id).toBe('default');
      // whoami tells a client (the console) that no key is needed
      const me = await open.call('GET', '/v1/whoami', { token: null });
      expect(me.body).toEqual({
        tenant: 'default',
        principal: 'anonymous',
        scopes: ['read', 'run', 'operate', 'define', 'keys', 'audit', 'admin'],
        keyId: null,
        constraints: null,
        expiresAt: null,
        authRequired: false,
        via: 'none',
        name: null,
        groups: [],
        sessionExpiresAt: null,
      });
      // managed keys need keys to be checked at all: an open server mints none
      const mint = await open.call('POST', '/v1/api-keys', { token: null, body: { name: 'k', scopes: ['read'] } });
      expect({ status: mint.status, code: mint.body.error?.code }).toEqual({ status: 409, code: 'ManagedKeysDisabled' });
    } finally {
      await open.close();
    }
  });
});

describe('bodies', () => {
  it('answers 413 to a body over 1 MiB before parsing it', async () => {
    const huge = `{"name":"x","graph":${JSON.stringify('a'.repeat(1024 * 1024 + 10))}}`;
    const r = await h.call('POST', '/v1/definitions', { raw: huge });
    expect(r.status).toBe(413);
    expect(r.body.error.code).toBe('PayloadTooLarge');
    const stream = new ReadableStream({
      start(ctrl) {
        ctrl.enqueue(new TextEncoder().encode(huge));
        ctrl.close();
      },
    });
    const chunked = await h.app.request('/v1/definitions', {
      method: 'POST',
      headers: { authorization: `Bearer ${KEYS.a}`, 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);
  });

  it('answers 400 MalformedJson to a body that is not JSON', async () => {
    const r = await h.call('POST', '/v1/definitions', { raw: '{"name": "x", graph: }' });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('MalformedJson');
  });

  it('keeps big integers exact in stored graphs and run inputs', async () => {
    const graph = lineGraph();
    const raw = `{"name":"big","graph":${JSON.stringify(graph).replace('"kind":"Start"', '"kind":"Start","config":{"defaultInput":{"id":9007199254740993}}')}}`;
    const r = await h.call('POST', '/v1/definitions', { raw });
    expect(r.status).toBe(201);
    const stored = await h.db.pool.query(`SELECT graph::text AS g FROM definitions WHERE id = $1`, [r.body.id]);
    expect(stored.rows[0].g).toContain('9007199254740993');
    const run = await h.call('POST', `/v1/definitions/${r.body.id}/runs`, { raw: '{"input":{"big":123456789012345678901234567890}}' });
    expect(run.status).toBe(202);
    const input = await h.db.pool.query(`SELECT input::text AS i FROM runs WHERE id = $1`, [run.body.runId]);
    expect(input.rows[0].i).toContain('123456789012345678901234567890');
    const defaulted = await startRun(h, r.body.id);
    const dflt = await h.db.pool.query(`SELECT input::text AS i FROM runs WHERE id = $1`, [defaulted]);
    expect(dflt.rows[0].i).toContain('9007199254740993');
    const read = await h.call('GET', `/v1/definitions/${r.body.id}`);
    expect(await read.res.text()).toContain('9007199254740993');
  });
});

describe('ops', () => {
  it('lists every route in the OpenAPI 3.1 document', async () => {
    const r = await h.call('GET', '/openapi.json', { token: null });
    expect(r.body.openapi).toBe('3.1.0');
    const listed = Object.entries(r.body.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(listed.sort()).toEqual(
      [
        'GET /auth/config',
        'POST /auth/logout',
        'POST /v1/definitions',
        'GET /v1/definitions',
        'GET /v1/definitions/{id}',
        'GET /v1/definitions/{id}/render',
        'GET /v1/definitions/{id}/describe',
        'GET /v1/definitions/{id}/versions',
        'GET /v1/definitions/{id}/versions/{version}',
        'DELETE /v1/definitions/{id}/versions/{version}',
        'GET /v1/definitions/{id}/diff',
        'GET /v1/definitions/{id}/aliases',
        'PUT /v1/definitions/{id}/aliases/{name}',
        'DELETE /v1/definitions/{id}/aliases/{name}',
        'PUT /v1/definitions/{id}',
        'DELETE /v1/definitions/{id}',
        'POST /v1/definitions/{id}/duplicate',
        'POST /v1/definitions/validate',
        'POST /v1/definitions/{id}/validate',
        'POST /v1/definitions/{id}/disable',
        'POST /v1/definitions/{id}/enable',
        'POST /v1/definitions/{id}/runs',
        'GET /v1/runs',
        'GET /v1/runs/{id}',
        'GET /v1/runs/{id}/nodes/{key}',
        'GET /v1/runs/{id}/nodes/{key}/agent-steps',
        'GET /v1/runs/{id}/events',
        'GET /v1/runs/{id}/state',
        'GET /v1/runs/{id}/stream',
        'GET /v1/runs/{id}/controls',
        'GET /v1/runs/{id}/blockers',
        'POST /v1/runs/{id}/cancel',
        'POST /v1/runs/{id}/reschedule',
        'POST /v1/schedules',
        'GET /v1/schedules',
        'GET /v1/schedules/{id}',
        'PUT /v1/schedules/{id}',
        'DELETE /v1/schedules/{id}',
        'POST /v1/schedules/{id}/pause',
        'POST /v1/schedules/{id}/resume',
        'POST /v1/schedules/{id}/trigger',
        'POST /v1/schedules/{id}/backfill',
        'GET /v1/schedules/{id}/preview',
        'GET /v1/schedules/{id}/slots',
        'POST /v1/runs/{id}/fork',
        'POST /v1/runs/{id}/migrate',
        'POST /v1/runs/bulk',
        'GET /v1/bulk-jobs/{bulkId}',
        'GET /v1/bulk-jobs/{bulkId}/runs',
        'POST /v1/bulk-jobs/{bulkId}/resume',
        'POST /v1/runs/{id}/nodes/{key}/decide',
        'POST /v1/runs/{id}/signals',
        'GET /v1/waitpoints',
        'GET /v1/waitpoints/{id}',
        'POST /v1/waitpoints/{id}/complete',
        'DELETE /v1/waitpoints/{id}',
        'POST /w/{tokenId}/{signature}',
        'POST /w/a/{runId}/{nodeKey}/{principal}/{signature}',
        'POST /v1/events',
        'GET /v1/webhooks',
        'POST /v1/webhooks',
        'GET /v1/webhooks/{id}',
        'PUT /v1/webhooks/{id}',
        'DELETE /v1/webhooks/{id}',
        'GET /v1/webhooks/{id}/deliveries',
        'POST /v1/webhooks/{id}/deliveries/{deliveryId}/replay',
        'POST /hooks/{tenant}/{slug}',
        'GET /v1/events',
        'GET /v1/events/{id}',
        'POST /v1/events/{id}/replay',
        'POST /v1/runs/{id}/nodes/{key}/steer',
        'POST /v1/runs/{id}/pause',
        'POST /v1/runs/{id}/resume',
        'POST /v1/runs/{id}/step',
        'PUT /v1/runs/{id}/breakpoints',
        'PUT /v1/runs/{id}/edges/{edgeKey}/override',
        'POST /v1/runs/{id}/nodes/{key}/skip',
        'POST /v1/runs/{id}/nodes/{key}/retry',
        'POST /v1/runs/{id}/nodes/{key}/complete',
        'PUT /v1/runs/{id}/nodes/{key}/input',
        'GET /v1/tools',
        'GET /v1/workers',
        'GET /v1/whoami',
        'POST /v1/api-keys',
        'GET /v1/api-keys',
        'GET /v1/api-keys/{id}',
        'POST /v1/api-keys/{id}/rotate',
        'DELETE /v1/api-keys/{id}',
        'POST /v1/files',
        'GET /v1/files/{id}',
        'POST /v1/mcp-servers',
        'GET /v1/mcp-servers',
        'GET /v1/mcp-servers/{id}',
        'PUT /v1/mcp-servers/{id}',
        'DELETE /v1/mcp-servers/{id}',
        'GET /v1/mcp-servers/{id}/tools',
        'POST /v1/agents',
        'GET /v1/agents',
        'GET /v1/agents/{id}',
        'PUT /v1/agents/{id}',
        'DELETE /v1/agents/{id}',
        'GET /v1/agents/{id}/versions',
        'GET /v1/agents/{id}/versions/{version}',
        'GET /v1/conversations',
        'POST /v1/conversations/{id}/messages',
        'GET /v1/conversations/{id}/messages',
        'GET /v1/conversations/{id}/runs',
        'DELETE /v1/conversations/{id}',
        'GET /v1/audit',
        'GET /v1/audit/export',
        'GET /v1/audit/verify',
        'GET /livez',
        'GET /healthz',
        'GET /readyz',
        'GET /metrics',
        'GET /openapi.json',
        'GET /docs',
      ].sort(),
    );
    expect(r.body.components.securitySchemes.bearer).toEqual({ type: 'http', scheme: 'bearer' });
  });

  it('lists the tool catalog as {items, nextCursor: null}', async () => {
    const r = await h.call('GET', '/v1/tools');
    expect(r.status).toBe(200);
    expect(r.body.nextCursor).toBeNull();
    const echo = r.body.items.find((t: { name: string }) => t.name === 'echo');
    expect(Object.keys(echo).sort()).toEqual(['argumentsSchema', 'description', 'name', 'requiresAllowedUrls']);
    const fetchTool = r.body.items.find((t: { name: string }) => t.name === 'http_fetch');
    expect(fetchTool.requiresAllowedUrls).toBe(true);
  });

  it('exposes Prometheus metrics including the HTTP request histogram', async () => {
    await h.call('GET', '/healthz', { token: null });
    const r = await h.call('GET', '/metrics', { token: null });
    expect(r.status).toBe(200);
    expect(r.body).toContain('http_request_duration_seconds_bucket');
    expect(r.body).toContain('route="/healthz"');
    expect(r.body).toContain('process_cpu_user_seconds_total');
  });

  it('answers 503 on /readyz when Redis does not answer', async () => {
    const dead = new Redis({ port: 1, lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    const app = createApp({
      pool: h.db.pool,
      redis: dead,
      apiKeys: null,
      limits: { maxNodesPerDefinition: 200, maxRunInputBytes: 65536, eventReplayLimit: 200, shardCount: 4, streamPollMs: 50, maxSteersPerNode: 5 },
      tools: { catalog: () => [], parserCatalog: () => new Map() },
      queuePrefix: h.prefix,
      logger: pino({ level: 'silent' }),
    });
    try {
      const r = await app.request('/readyz');
      expect(r.status).toBe(503);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe('NotReady');
    } finally {
      dead.disconnect();
    }
  });

  it('answers 503 on /readyz while no live dispatcher holds a shard, 200 once one does', async () => {
    const app = createApp({ ...h.deps, apiKeys: null });
    await releaseShards(h.db.pool, TEST_DISPATCHER);
    try {
      const r = await app.request('/readyz');
      expect(r.status).toBe(503);
      const body = (await r.json()) as { error: { code: string; message: string } };
      expect(body.error).toMatchObject({ code: 'NotReady' });
      expect(body.error.message).toMatch(/no live dispatcher holds a shard/);
      // a dispatcher's heartbeat takes one shard: ready (once the cached answer is a second old)
      await claimShards(h.db.pool, 'a-dispatcher', 1, 60_000);
      await waitFor(async () => (await app.request('/readyz')).status === 200, { timeoutMs: 5_000, description: '/readyz 200 once a dispatcher holds a shard' });
      // its lease ends (the dispatcher stopped): not ready again
      await releaseShards(h.db.pool, 'a-dispatcher');
      await waitFor(async () => (await app.request('/readyz')).status === 503, { timeoutMs: 5_000, description: '/readyz 503 once no dispatcher holds a shard' });
    } finally {
      await holdShards(h);
    }
  });

  it('answers 503 on /readyz once the process drains, while /livez still answers 200', async () => {
    let draining = false;
    const app = createApp({
      pool: h.db.pool,
      redis: h.redis,
      apiKeys: null,
      limits: { maxNodesPerDefinition: 200, maxRunInputBytes: 65536, eventReplayLimit: 200, shardCount: 4, streamPollMs: 50, maxSteersPerNode: 5 },
      tools: { catalog: () => [], parserCatalog: () => new Map() },
      queuePrefix: h.prefix,
      logger: pino({ level: 'silent' }),
      draining: () => draining,
    });
    expect((await app.request('/readyz')).status).toBe(200);
    draining = true;
    const r = await app.request('/readyz');
    expect(r.status).toBe(503);
    expect(((await r.json()) as { error: { message: string } }).error.message).toMatch(/shutting down/);
    expect((await app.request('/livez')).status).toBe(200);
  });

  it('answers unknown routes with 404 in the error shape', async () => {
    const r = await h.call('GET', '/v1/nothing-here');
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('NotFound');
  });
});
