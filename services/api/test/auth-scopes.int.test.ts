import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { io as connectSocket, type Socket } from 'socket.io-client';
import { OpenAPIHono } from '@hono/zod-openapi';
import { TENANT_SCOPES, loadConfig, type ApiKeyGrant } from '@flowline/runtime';
import { LIVE_EVENTS } from '@flowline/queue';
import { scopeTableMismatches, type ApiKeyTable } from '../src/auth';
import { apiConfigSchema } from '../src/config';
import type { AppEnv } from '../src/context';
import type { LiveServer } from '../src/live';
import { LIVE_EVENT_SCOPES, ROUTE_SCOPES } from '../src/route-scopes';
import { KEYS, bootRefusal, createDefinition, holdShards, lineGraph, pauseGraph, serveHarness, startHarness, startRun, type Harness, type ServedHarness } from './harness';

/** Scoped keys of tenant A beside the harness's full keys of tenants A and B. */
const SCOPED = {
  read: 'key-a-read',
  operate: 'key-a-operate',
  run: 'key-a-run',
  define: 'key-a-define',
  readB: 'key-b-read',
} as const;
const grant = (tenant: string, ...scopes: ApiKeyGrant['scopes']): ApiKeyGrant => ({ tenant, scopes });
const TABLE: ApiKeyTable = new Map<string, ApiKeyGrant | string>([
  [KEYS.a, grant('tenantA', ...TENANT_SCOPES)],
  [KEYS.b, 'tenantB'],
  [SCOPED.read, grant('tenantA', 'read')],
  [SCOPED.operate, grant('tenantA', 'operate')],
  [SCOPED.run, grant('tenantA', 'run')],
  [SCOPED.define, grant('tenantA', 'define')],
  [SCOPED.readB, grant('tenantB', 'read')],
]);

const OPS_ROUTES = ['GET /livez', 'GET /healthz', 'GET /readyz', 'GET /metrics', 'GET /openapi.json', 'GET /docs'];

let h: Harness;
let lineDef: string;
let pauseDef: string;
beforeAll(async () => {
  h = await startHarness({}, TABLE);
  lineDef = await createDefinition(h, lineGraph(), 'line');
  pauseDef = await createDefinition(h, pauseGraph(), 'pause');
});
afterAll(async () => {
  await h.close();
});

const forbidden = (scope: string) => ({ error: { code: 'Forbidden', message: `this key lacks the '${scope}' scope` } });

describe('API key scopes over REST', () => {
  it('lets a read-only key read and refuses it every write with 403 Forbidden naming the scope, writing nothing', async () => {
    const runId = await startRun(h, pauseDef);
    for (const path of [
      '/v1/definitions',
      `/v1/definitions/${lineDef}`,
      `/v1/definitions/${lineDef}/diff?from=1&to=1`,
      `/v1/definitions/${lineDef}/versions/1`,
      `/v1/definitions/${lineDef}/aliases`,
      '/v1/runs',
      `/v1/runs/${runId}`,
      `/v1/runs/${runId}/nodes/start`,
      `/v1/runs/${runId}/nodes/start/agent-steps`,
      `/v1/runs/${runId}/events`,
      '/v1/tools',
      '/v1/waitpoints',
    ]) {
      const r = await h.call('GET', path, { token: SCOPED.read });
      expect({ path, status: r.status }).toEqual({ path, status: 200 });
    }
    const refusals: Array<[string, string, unknown, string]> = [
      ['POST', `/v1/runs/${runId}/cancel`, {}, 'operate'],
      ['POST', `/v1/runs/${runId}/pause`, undefined, 'operate'],
      ['PUT', `/v1/runs/${runId}/breakpoints`, { nodeKeys: [] }, 'operate'],
      ['POST', `/v1/runs/${runId}/fork`, { fromNodeKey: 'start', requestId: 'read-only-fork' }, 'operate'],
      ['POST', `/v1/runs/${runId}/migrate`, { toVersion: 1, dryRun: false }, 'operate'],
      ['POST', `/v1/bulk-jobs/${runId}/resume`, undefined, 'operate'],
      ['POST', `/v1/definitions/${lineDef}/runs`, { requestId: 'read-only-start' }, 'run'],
      ['POST', `/v1/runs/${runId}/nodes/gate/decide`, { operationId: 'op', decision: 'Approve' }, 'run'],
      ['POST', '/v1/conversations/c1/messages', { definitionId: lineDef, text: 'x', requestId: 'read-only-send' }, 'run'],
      ['POST', '/v1/definitions', { name: 'read-only-create', graph: lineGraph() }, 'define'],
      ['PUT', `/v1/definitions/${lineDef}`, { name: 'renamed', version: 1 }, 'define'],
      ['DELETE', `/v1/definitions/${lineDef}`, undefined, 'define'],
      ['DELETE', `/v1/definitions/${lineDef}/versions/1`, undefined, 'define'],
      ['PUT', `/v1/definitions/${lineDef}/aliases/current`, { version: 1 }, 'define'],
      ['DELETE', `/v1/definitions/${lineDef}/aliases/current`, undefined, 'define'],
      ['POST', '/v1/definitions/validate', { graph: lineGraph() }, 'define'],
      ['POST', '/v1/events', [{ name: 'read-only.event', data: {} }], 'run'],
      ['POST', '/v1/events/some-event/replay', {}, 'run'],
      ['POST', '/v1/webhooks', { target: { definitionId: lineDef }, auth: { type: 'none' } }, 'define'],
      ['POST', `/v1/waitpoints/${runId}/complete`, { payload: {} }, 'run'],
      ['DELETE', `/v1/waitpoints/${runId}`, undefined, 'operate'],
      ['GET', '/v1/audit', undefined, 'audit'],
      ['GET', '/v1/audit/export', undefined, 'audit'],
      ['GET', '/v1/audit/verify', undefined, 'audit'],
      ['POST', '/v1/api-keys', { name: 'read-only-mint', scopes: ['read'] }, 'keys'],
      ['GET', '/v1/api-keys', undefined, 'keys'],
    ];
    for (const [method, path, body, scope] of refusals) {
      const r = await h.call(method, path, { token: SCOPED.read, ...(body === undefined ? {} : { body }) });
      expect({ method, path, status: r.status, body: r.body }).toEqual({ method, path, status: 403, body: forbidden(scope) });
    }
    const run = await h.call('GET', `/v1/runs/${runId}`);
    expect(run.body.run).toMatchObject({ status: 'Pending', paused: false });
    expect((await h.db.pool.query(`SELECT 1 FROM runs WHERE request_id IN ('read-only-start', 'read-only-fork')`)).rowCount).toBe(0);
    expect((await h.db.pool.query(`SELECT 1 FROM definitions WHERE name IN ('read-only-create', 'renamed')`)).rowCount).toBe(0);
    expect((await h.call('GET', `/v1/definitions/${lineDef}`)).status).toBe(200);
  });

  it('refuses an operate-only key every read, and lets it operate', async () => {
    const runId = await startRun(h, lineDef);
    for (const path of ['/v1/definitions', `/v1/runs/${runId}`, `/v1/runs/${runId}/events`, `/v1/runs/${runId}/stream`, '/v1/tools', '/v1/conversations/c1/runs']) {
      const r = await h.call('GET', path, { token: SCOPED.operate });
      expect({ path, status: r.status, body: r.body }).toEqual({ path, status: 403, body: forbidden('read') });
    }
    expect((await h.call('POST', `/v1/definitions/${lineDef}/runs`, { token: SCOPED.operate, body: {} })).body).toEqual(forbidden('run'));
    expect((await h.call('POST', '/v1/definitions', { token: SCOPED.operate, body: { name: 'x', graph: lineGraph() } })).body).toEqual(forbidden('define'));
    const cancel = await h.call('POST', `/v1/runs/${runId}/cancel`, { token: SCOPED.operate, body: {} });
    expect(cancel.status).toBe(202);
    expect((await h.call('GET', `/v1/runs/${runId}`)).body.run.status).toBe('Cancelling');
  });

  it('lets a run key start runs and decide gates, and a define key write definitions, each refused the rest', async () => {
    const started = await h.call('POST', `/v1/definitions/${pauseDef}/runs`, { token: SCOPED.run, body: {} });
    expect(started.status).toBe(202);
    const runId = started.body.runId as string;
    await h.db.pool.query(`UPDATE node_runs SET status = 'WaitingForApproval', pending_decision_kind = 'Approve' WHERE run_id = $1 AND node_key = 'gate'`, [runId]);
    const decided = await h.call('POST', `/v1/runs/${runId}/nodes/gate/decide`, { token: SCOPED.run, body: { operationId: 'op-1', decision: 'Approve' } });
    expect(decided.status).toBe(202);
    expect((await h.call('POST', `/v1/runs/${runId}/cancel`, { token: SCOPED.run, body: {} })).body).toEqual(forbidden('operate'));
    expect((await h.call('GET', `/v1/runs/${runId}`, { token: SCOPED.run })).body).toEqual(forbidden('read'));

    const created = await h.call('POST', '/v1/definitions', { token: SCOPED.define, body: { name: 'by-define-key', graph: lineGraph() } });
    expect(created.status).toBe(201);
    expect((await h.call('POST', '/v1/definitions/validate', { token: SCOPED.define, body: { graph: lineGraph() } })).status).toBe(200);
    expect((await h.call('POST', `/v1/definitions/${created.body.id}/duplicate`, { token: SCOPED.define })).status).toBe(201);
    expect((await h.call('POST', `/v1/definitions/${created.body.id}/runs`, { token: SCOPED.define, body: {} })).body).toEqual(forbidden('run'));
    expect((await h.call('DELETE', `/v1/definitions/${created.body.id}`, { token: SCOPED.define })).status).toBe(204);
  });

  it('answers 401 before 403, 403 before the body is read or validated, and 404 for another tenant’s resource', async () => {
    const runId = await startRun(h, lineDef);
    expect((await h.call('POST', `/v1/runs/${runId}/cancel`, { token: 'no-such-key', body: {} })).status).toBe(401);
    expect((await h.call('POST', `/v1/runs/${runId}/cancel`, { token: null, body: {} })).status).toBe(401);
    // a malformed or oversized body does not turn a 403 into 400/413
    expect((await h.call('POST', '/v1/definitions', { token: SCOPED.read, raw: '{not json' })).status).toBe(403);
    expect((await h.call('POST', '/v1/definitions', { token: SCOPED.read, raw: `"${'a'.repeat(1024 * 1024 + 10)}"` })).status).toBe(403);
    // tenant B's read key, and its full key, see tenant A's run as absent
    expect((await h.call('GET', `/v1/runs/${runId}`, { token: SCOPED.readB })).status).toBe(404);
    expect((await h.call('POST', `/v1/runs/${runId}/cancel`, { token: KEYS.b, body: {} })).status).toBe(404);
    // unknown routes stay 404 for any key
    expect((await h.call('GET', '/v1/nothing-here', { token: SCOPED.operate })).status).toBe(404);
  });

  it('compares a presented key exactly: a key padded with whitespace is unknown (401), the exact key is not', async () => {
    // (whitespace after the key never reaches an application: HTTP strips a field value's
    // trailing whitespace (RFC 9110 §5.5), Node's parser and the Fetch Headers alike)
    for (const authorization of [`Bearer  ${KEYS.a}`, `Bearer \t${KEYS.a}`, `Bearer\t${KEYS.a}`, `Bearer ${KEYS.a} x`]) {
      const r = await h.call('GET', '/v1/whoami', { token: null, headers: { authorization } });
      expect({ authorization, status: r.status, code: r.body.error?.code }).toEqual({ authorization, status: 401, code: 'Unauthorized' });
    }
    expect((await h.call('GET', '/v1/whoami', { token: null, headers: { authorization: `Bearer ${KEYS.a}` } })).status).toBe(200);
    // the scheme's name is case-insensitive (RFC 9110), the key is not
    expect((await h.call('GET', '/v1/whoami', { token: null, headers: { authorization: `bearer ${KEYS.a}` } })).status).toBe(200);
    expect((await h.call('GET', '/v1/whoami', { token: null, headers: { authorization: `Bearer ${KEYS.a.toUpperCase()}` } })).status).toBe(401);
  });

  it('answers whoami with the key\'s tenant and exactly its scopes, 401 without a key', async () => {
    const me = async (token: string | null) => (await h.call('GET', '/v1/whoami', { token })).body;
    // the principal: 'key:' and the first 16 hex digits of the key's SHA-256 digest, never the key
    const principal = (key: string) => `key:${createHash('sha256').update(key, 'utf8').digest('hex').slice(0, 16)}`;
    // an API_KEYS entry is no managed key: no key id, constraints or expiry
    const bootstrap = { keyId: null, constraints: null, expiresAt: null, authRequired: true, via: 'key', name: null, groups: [], sessionExpiresAt: null };
    const all = ['read', 'run', 'operate', 'define', 'keys', 'audit'];
    expect(await me(KEYS.a)).toEqual({ tenant: 'tenantA', principal: principal(KEYS.a), scopes: all, ...bootstrap });
    expect(await me(KEYS.b)).toEqual({ tenant: 'tenantB', principal: principal(KEYS.b), scopes: all, ...bootstrap });
    expect(await me(SCOPED.read)).toEqual({ tenant: 'tenantA', principal: principal(SCOPED.read), scopes: ['read'], ...bootstrap });
    expect(await me(SCOPED.readB)).toEqual({ tenant: 'tenantB', principal: principal(SCOPED.readB), scopes: ['read'], ...bootstrap });
    expect((await h.call('GET', '/v1/whoami', { token: null })).status).toBe(401);
    // whoami is a read: a key without `read` is told so
    expect(await me(SCOPED.operate)).toEqual(forbidden('read'));
  });

  it('serves the ops routes without a key', async () => {
    // /readyz is ready only while a dispatcher holds shards
    await holdShards(h);
    for (const path of ['/livez', '/healthz', '/readyz', '/metrics', '/openapi.json', '/docs']) {
      expect({ path, status: (await h.call('GET', path, { token: null })).status }).toEqual({ path, status: 200 });
    }
  });
});

describe('the scope table', () => {
  it('declares a scope for every registered /v1 route; every other route is an ops route or the admin queue UI', () => {
    expect(scopeTableMismatches(h.app)).toEqual({ unscoped: [], unrouted: [] });
    const declared: Record<string, string> = ROUTE_SCOPES;
    const routes = new Set(h.app.routes.filter((r) => r.method !== 'ALL').map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, '{$1}')}`));
    expect(routes.size).toBeGreaterThan(OPS_ROUTES.length);
    for (const route of routes) {
      if (OPS_ROUTES.includes(route)) continue;
      // the queue UI behind the admin scope as a whole, and its sign-in (routes/admin-queues.ts,
      // routes/admin-session.ts; admin-queues.int.test.ts)
      if (route.split(' ')[1]?.startsWith('/admin/')) continue;
      // waitpoint callbacks take no key: the URL's HMAC signature is the credential (waitpoints.int.test.ts)
      if (route.split(' ')[1]?.startsWith('/w/')) continue;
      // webhook deliveries take no key: the sender's signature is the credential (webhooks.int.test.ts)
      if (route === 'POST /hooks/{tenant}/{slug}') continue;
      // people's sign-in: before there is a key or a session (routes/oidc.ts; oidc.int.test.ts)
      if (route.split(' ')[1]?.startsWith('/auth/')) continue;
      expect({ route, scope: declared[route] }).toEqual({ route, scope: expect.stringMatching(/^(read|run|operate|define|keys|audit)$/) });
    }
    for (const ops of OPS_ROUTES) expect(routes.has(ops)).toBe(true);
  });

  it('reports a /v1 route registered without a scope', () => {
    const app = new OpenAPIHono<AppEnv>();
    app.get('/v1/unlisted/:id', (c) => c.text('open'));
    expect(scopeTableMismatches(app).unscoped).toEqual(['GET /v1/unlisted/{id}']);
    expect(scopeTableMismatches(app).unrouted).toContain('POST /v1/runs/{id}/cancel');
  });

  it('documents each keyed route’s scope and 403 answer in the OpenAPI document; ops routes declare that they need no key (security: [])', async () => {
    const doc = (await h.call('GET', '/openapi.json', { token: null })).body;
    const declared: Record<string, string> = ROUTE_SCOPES;
    let keyed = 0;
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, { security?: unknown; responses: Record<string, unknown> }>>)) {
      for (const [method, op] of Object.entries(ops)) {
        const route = `${method.toUpperCase()} ${path}`;
        if (OPS_ROUTES.includes(route)) {
          expect({ route, security: op.security, forbidden: op.responses['403'] }).toEqual({ route, security: [], forbidden: undefined });
          continue;
        }
        // the signed waitpoint callback and approval links: no key (their 403 is a bad signature, not a missing scope)
        if (route.startsWith('POST /w/')) {
          expect({ route, security: op.security, unauthorized: op.responses['401'] }).toEqual({ route, security: [], unauthorized: undefined });
          continue;
        }
        // people's sign-in and sign-out: no key (there is none yet, or a session cookie ends itself)
        if (route.startsWith('GET /auth/') || route === 'POST /auth/logout') {
          expect({ route, security: op.security, forbidden: op.responses['403'] }).toEqual({ route, security: [], forbidden: undefined });
          continue;
        }
        // a webhook delivery: no key (its 401 is a signature that does not verify, not a missing key)
        if (route === 'POST /hooks/{tenant}/{slug}') {
          expect({ route, security: op.security, forbidden: op.responses['403'] }).toEqual({ route, security: [], forbidden: undefined });
          continue;
        }
        keyed++;
        expect({ route, security: op.security }).toEqual({ route, security: [{ bearer: [declared[route]] }] });
        expect(op.responses['403']).toBeDefined();
        expect(op.responses['401']).toBeDefined();
      }
    }
    expect(keyed).toBe(Object.keys(ROUTE_SCOPES).length);
  });
});

describe('API key scopes on the live channel', () => {
  let served: ServedHarness;
  let live: LiveServer;
  let url: string;
  const sockets: Socket[] = [];
  beforeAll(async () => {
    served = await serveHarness(h);
    live = served.live;
    url = served.url;
  });
  afterAll(async () => {
    for (const s of sockets) s.disconnect();
    await served.close();
  });

  async function socketFor(token: string): Promise<Socket> {
    const s = connectSocket(url, { path: '/socket.io', transports: ['websocket'], auth: { token }, reconnection: false });
    sockets.push(s);
    if (!s.connected) await new Promise<void>((resolve) => s.once('connect', () => resolve()));
    return s;
  }

  it('acks subscribeRun, unsubscribeRun and streamNodeActivity with Forbidden for a key without read', async () => {
    const runId = await startRun(h, lineDef);
    const s = await socketFor(SCOPED.operate);
    expect(await s.emitWithAck(LIVE_EVENTS.subscribeRun, { runId, afterSeq: 0 })).toEqual(forbidden('read'));
    expect(await s.emitWithAck(LIVE_EVENTS.streamNodeActivity, { runId, nodeKey: 'start' })).toEqual(forbidden('read'));
    expect(await s.emitWithAck(LIVE_EVENTS.unsubscribeRun, { runId })).toEqual(forbidden('read'));
    // refused before validation too
    expect(await s.emitWithAck(LIVE_EVENTS.subscribeRun, { nonsense: true })).toEqual(forbidden('read'));
    expect(live.io.of('/').adapter.rooms.get(`run:${runId}`)).toBeUndefined();
    // every client → server event has a scope
    expect(Object.keys(LIVE_EVENT_SCOPES).sort()).toEqual([LIVE_EVENTS.streamNodeActivity, LIVE_EVENTS.subscribeRun, LIVE_EVENTS.unsubscribeRun].sort());
  });

  it('refuses a handshake whose key is padded with whitespace, and accepts the exact key', async () => {
    for (const token of [` ${SCOPED.read}`, `${SCOPED.read} `, `\t${SCOPED.read}`]) {
      const s = connectSocket(url, { path: '/socket.io', transports: ['websocket'], auth: { token }, reconnection: false });
      sockets.push(s);
      const err = await new Promise<Error>((resolve, reject) => {
        s.once('connect_error', resolve);
        s.once('connect', () => reject(new Error(`the handshake with ${JSON.stringify(token)} was accepted`)));
      });
      expect(err.message).toBe('Unauthorized');
    }
    expect((await socketFor(SCOPED.read)).connected).toBe(true);
  });

  it('serves a read key its tenant’s runs and refuses another tenant’s as NotFound', async () => {
    const runId = await startRun(h, lineDef);
    const s = await socketFor(SCOPED.read);
    const snapshot = await s.emitWithAck(LIVE_EVENTS.subscribeRun, { runId, afterSeq: 0 });
    expect(snapshot).toMatchObject({ status: 'Pending', watermark: 1 });
    const other = await socketFor(SCOPED.readB);
    expect((await other.emitWithAck(LIVE_EVENTS.subscribeRun, { runId, afterSeq: 0 })).error.code).toBe('NotFound');
  });
});

describe('API_KEYS at boot', () => {
  it('stops the API process on a malformed API_KEYS, naming the option and not the key', () => {
    for (const value of ['tenantA:secret-one:root', 'tenantA:', 'tenantA:secret-one,tenantB:secret-one']) {
      const { code, printed } = bootRefusal({ API_KEYS: value });
      expect(code).toBe(1);
      expect(printed).toMatch(/API_KEYS: entry \d/);
      expect(printed).not.toContain('secret-one');
    }
  });

  it('parses scoped entries into the table the app authenticates with', () => {
    const cfg = loadConfig(apiConfigSchema, { API_KEYS: 'tenantA:k1:read+operate,tenantB:k2' });
    expect(cfg.API_KEYS).toEqual({
      k1: { tenant: 'tenantA', scopes: ['read', 'operate'] },
      k2: { tenant: 'tenantB', scopes: [...TENANT_SCOPES] },
    });
  });
});
