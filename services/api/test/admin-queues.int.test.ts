import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiKeyGrant } from '@flowline/runtime';
import { createLaneQueue, type LaneQueue } from '@flowline/queue';
import type { ApiKeyTable } from '../src/auth';
import { KEYS, startHarness, type Harness } from './harness';

const ADMIN = 'key-ops-admin';
const ADMIN_ONLY_READ = 'key-a-read';
const TABLE: ApiKeyTable = new Map<string, ApiKeyGrant | string>([
  [KEYS.a, 'tenantA'], // a bare entry: every tenant scope, never admin
  [ADMIN, { tenant: 'ops', scopes: ['admin'] }],
  [ADMIN_ONLY_READ, { tenant: 'tenantA', scopes: ['read'] }],
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
