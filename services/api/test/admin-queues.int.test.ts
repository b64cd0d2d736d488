import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiKeyGrant } from '@flowline/runtime';
import { createLaneQueue, type LaneQueue } from '@flowline/queue';
import { createApp } from '../src/app';
import type { ApiKeyTable } from '../src/auth';
import { KEYS, startHarness, type Harness } from './harness';

const ADMIN = 'key-ops-admin';
const ADMIN_ONLY_READ = 'key-a-read';
/** mints managed keys (with admin) for tenant ops */
const KEY_MANAGER = 'key-ops-keys';
const TABLE: ApiKeyTable = new Map<string, ApiKeyGrant | string>([
  [KEYS.a, 'tenantA'], // a bare entry: every tenant scope, never admin
  [ADMIN, { tenant: 'ops', scopes: ['admin'] }],
  [ADMIN_ONLY_READ, { tenant: 'tenantA', scopes: ['read'] }],
  [KEY_MANAGER, { tenant: 'ops', scopes: ['keys', 'admin'] }],
]);

const unauthorized = { error: { code: 'Unauthorized', message: expect.any(String) } };
const forbidden = { error: { code: 'Forbidden', message: "this key lacks the 'admin' scope" } };

describe('the queue UI at /admin/queues, read-only (default)', () => {
  let h: Harness;
  let tool: LaneQueue;
  beforeAll(async () => {
    h = await startHarness({}, TABLE);
    tool = createLaneQueue(h.redis, 'tool', h.prefix);
  });
  afterAll(async () => {
    await tool.close();
    await h.close();
  });

  it('answers 401 without a key or with an unknown one, the page, its API and its assets alike', async () => {
    for (const path of ['/admin/queues', '/admin/queues/', '/admin/queues/api/queues', '/admin/queues/static/favicon.ico']) {
      for (const token of [null, 'no-such-key']) {
        const r = await h.call('GET', path, { token });
        expect([path, token, r.status]).toEqual([path, token, 401]);
        expect(r.body).toEqual(unauthorized);
      }
    }
  });

  it('answers 403 to a key without the admin scope, a bare tenant key included', async () => {
    for (const token of [KEYS.a, ADMIN_ONLY_READ]) {
      for (const path of ['/admin/queues', '/admin/queues/api/queues']) {
        const r = await h.call('GET', path, { token });
        expect([path, token, r.status]).toEqual([path, token, 403]);
        expect(r.body).toEqual(forbidden);
      }
      expect((await h.call('PUT', '/admin/queues/api/queues/node.tool/pause', { token })).status).toBe(403);
    }
  });

  it('serves the UI page, its assets and its API to an admin key, listing every lane', async () => {
    const page = await h.call('GET', '/admin/queues', { token: ADMIN });
    expect(page.status).toBe(200);
    expect(page.res.headers.get('content-type')).toMatch(/text\/html/);
    expect(page.body).toContain('<base href="/admin/queues/" />');
    // every script and stylesheet the page names is served (under the same key)
    const assets = [...(page.body as string).matchAll(/(?:src|href)="(static\/[^"]+)"/g)].map((m) => m[1]);
    expect(assets.length).toBeGreaterThan(3);
    for (const asset of assets) {
      const r = await h.call('GET', `/admin/queues/${asset}`, { token: ADMIN });
      expect([asset, r.status]).toEqual([asset, 200]);
    }

    const api = await h.call('GET', '/admin/queues/api/queues', { token: ADMIN });
    expect(api.status).toBe(200);
    const queues = api.body.queues as Array<{ name: string; readOnlyMode: boolean }>;
    expect(queues.map((q) => q.name).sort()).toEqual(['node.llm', 'node.tool']);
    expect(queues.every((q) => q.readOnlyMode)).toBe(true);
  });

  it('refuses the write routes (405) and leaves the lane untouched', async () => {
    const r = await h.call('PUT', '/admin/queues/api/queues/node.tool/pause', { token: ADMIN });
    expect(r.status).toBe(405);
    expect(await tool.isPaused()).toBe(false);
    expect((await h.call('PUT', '/admin/queues/api/queues/node.tool/clean/completed', { token: ADMIN })).status).toBe(405);
  });
});

describe('the queue UI with BULL_BOARD_WRITE=1', () => {
  let h: Harness;
  let tool: LaneQueue;
  beforeAll(async () => {
    h = await startHarness({}, TABLE, { bullBoardWrite: true });
    tool = createLaneQueue(h.redis, 'tool', h.prefix);
  });
  afterAll(async () => {
    await tool.close();
    await h.close();
  });

  it('lets an admin key pause and resume a lane, and still refuses other keys', async () => {
    expect((await h.call('PUT', '/admin/queues/api/queues/node.tool/pause', { token: KEYS.a })).status).toBe(403);
    expect(await tool.isPaused()).toBe(false);

    const paused = await h.call('PUT', '/admin/queues/api/queues/node.tool/pause', { token: ADMIN });
    expect(paused.status).toBeLessThan(300);
    expect(await tool.isPaused()).toBe(true);
    const api = await h.call('GET', '/admin/queues/api/queues', { token: ADMIN });
    expect((api.body.queues as Array<{ readOnlyMode: boolean }>).every((q) => !q.readOnlyMode)).toBe(true);

    expect((await h.call('PUT', '/admin/queues/api/queues/node.tool/resume', { token: ADMIN })).status).toBeLessThan(300);
    expect(await tool.isPaused()).toBe(false);
  });
});

describe('the queue UI in single-tenant mode (no API_KEYS)', () => {
  it('is open, as the rest of the API is there', async () => {
    const h = await startHarness({}, null);
    try {
      const r = await h.call('GET', '/admin/queues/api/queues', { token: null });
      expect(r.status).toBe(200);
      expect((r.body.queues as Array<{ name: string }>).map((q) => q.name).sort()).toEqual(['node.llm', 'node.tool']);
    } finally {
      await h.close();
    }
  });
});

describe('browser sessions of the queue UI (/admin/session)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({}, TABLE, { adminSessionTtlS: 600 });
  });
  afterAll(async () => {
    await h.close();
  });

  const cookieOf = (res: Response) => {
    const set = res.headers.get('set-cookie') ?? '';
    return { set, pair: set.split(';')[0] ?? '' };
  };
  const withCookie = (pair: string) => ({ token: null, headers: { cookie: pair } });

  it('serves a sign-in form that posts the key in the body', async () => {
    const r = await h.call('GET', '/admin/session', { token: null });
    expect(r.status).toBe(200);
    expect(r.body).toContain('<form method="post" action="/admin/session">');
    expect(r.body).toContain('type="password"');
  });

  it('signs in a form post with an admin key: 303 to the UI and an HttpOnly SameSite=Strict cookie that opens the UI and its API', async () => {
    const r = await h.call('POST', '/admin/session', {
      token: null,
      raw: new URLSearchParams({ key: ADMIN }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(r.status).toBe(303);
    const location = r.res.headers.get('location') ?? '';
    const { set, pair } = cookieOf(r.res);
    // the browser follows the redirect with its new cookie and lands on the UI page
    const landing = await h.call('GET', location, withCookie(pair));
    expect([location, landing.status]).toEqual([location, 200]);
    expect(landing.body).toContain('<base href="/admin/queues/" />');
    expect(set).toMatch(/^flowline_admin_session=[A-Za-z0-9_-]{43};/);
    expect(set).toMatch(/Max-Age=600/);
    expect(set).toMatch(/Path=\/admin/);
    expect(set).toMatch(/HttpOnly/);
    expect(set).toMatch(/SameSite=Strict/);
    expect(set).not.toContain(ADMIN);

    expect((await h.call('GET', '/admin/queues', withCookie(pair))).status).toBe(200);
    const api = await h.call('GET', '/admin/queues/api/queues', withCookie(pair));
    expect(api.status).toBe(200);
    expect((api.body.queues as Array<{ name: string }>).map((q) => q.name).sort()).toEqual(['node.llm', 'node.tool']);

    // Redis holds the token's digest → the key's digest, with the TTL; never the token or the key
    const keys = await h.redis.keys(`${h.prefix}:admin-session:*`);
    expect(keys.length).toBeGreaterThan(0);
    const token = pair.split('=')[1] ?? '';
    for (const k of keys) {
      expect(k).not.toContain(token);
      expect(await h.redis.get(k)).not.toContain(ADMIN);
      const ttl = await h.redis.ttl(k);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(600);
    }
  });

  it('leads the UI’s address with a trailing slash to the UI page instead of a 404', async () => {
    const { pair } = cookieOf((await h.call('POST', '/admin/session', { token: ADMIN })).res);
    const slash = await h.call('GET', '/admin/queues/', withCookie(pair));
    expect(slash.status).toBe(301);
    expect(slash.res.headers.get('location')).toMatch(/\/admin\/queues$/);
    expect((await h.call('GET', '/admin/queues/', { token: null })).status).toBe(401);
  });

  it('signs in a managed key holding admin; its revocation ends the session at once', async () => {
    const minted = await h.call('POST', '/v1/api-keys', { token: KEY_MANAGER, body: { name: 'queues', scopes: ['admin'] } });
    expect(minted.status).toBe(201);
    const r = await h.call('POST', '/admin/session', { token: minted.body.secret });
    expect(r.status).toBe(204);
    const { pair } = cookieOf(r.res);
    expect((await h.call('GET', '/admin/queues/api/queues', withCookie(pair))).status).toBe(200);
    // the session keeps a reference to the key, never the key
    const stored = await h.redis.keys(`${h.prefix}:admin-session:*`);
    const values = await Promise.all(stored.map((k) => h.redis.get(k)));
    expect(values.join('\n')).not.toContain(minted.body.secret);
    expect((await h.call('DELETE', `/v1/api-keys/${minted.body.id}`, { token: KEY_MANAGER })).status).toBe(204);
    expect((await h.call('GET', '/admin/queues/api/queues', withCookie(pair))).status).toBe(401);
  });

  it('signs in with a bearer header (204), and DELETE ends the session', async () => {
    const r = await h.call('POST', '/admin/session', { token: ADMIN });
    expect(r.status).toBe(204);
    const { pair } = cookieOf(r.res);
    expect((await h.call('GET', '/admin/queues/api/queues', withCookie(pair))).status).toBe(200);
    expect((await h.call('DELETE', '/admin/session', withCookie(pair))).status).toBe(204);
    expect((await h.call('GET', '/admin/queues/api/queues', withCookie(pair))).status).toBe(401);
  });

  it('refuses a sign-in without a key (401), with an unknown key (401) or a key without admin (403), setting no cookie', async () => {
    const form = (key: string) => ({ token: null, raw: new URLSearchParams({ key }).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    for (const [opts, status] of [
      [{ token: null }, 401],
      [form('no-such-key'), 401],
      [form(KEYS.a), 403],
      // a key is compared exactly: padding makes it another, unknown key
      [form(` ${ADMIN}`), 401],
      [form(`${ADMIN} `), 401],
      [{ token: null, headers: { authorization: `Bearer  ${ADMIN}` } }, 401],
      [{ token: ADMIN_ONLY_READ }, 403],
    ] as const) {
      const r = await h.call('POST', '/admin/session', opts);
      expect(r.status).toBe(status);
      expect(r.res.headers.get('set-cookie')).toBeNull();
    }
    const big = await h.call('POST', '/admin/session', form('x'.repeat(5_000)));
    expect(big.status).toBe(413);
  });

  it('answers 401 to a forged cookie and ends a session whose key was removed from API_KEYS', async () => {
    expect((await h.call('GET', '/admin/queues/api/queues', withCookie('flowline_admin_session=forged'))).status).toBe(401);
    const { pair } = cookieOf((await h.call('POST', '/admin/session', { token: ADMIN })).res);
    // a replica (or a restart) over the same Redis whose API_KEYS no longer lists the key
    const without = createApp({ ...h.deps, apiKeys: new Map([[KEYS.a, 'tenantA']]) });
    expect((await without.request('/admin/queues/api/queues', { headers: { cookie: pair } })).status).toBe(401);
    expect((await h.call('GET', '/admin/queues/api/queues', withCookie(pair))).status).toBe(200);
  });
});
