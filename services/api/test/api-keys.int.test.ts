import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { io as connectSocket, type Socket } from 'socket.io-client';
import { LIVE_EVENTS } from '@flowline/queue';
import { waitFor } from '@flowline/testing';
import { keyDigest, principalIdOf } from '../src/auth';
import { loadConfig } from '@flowline/runtime';
import { createApp } from '../src/app';
import { apiConfigSchema } from '../src/config';
import { sharedManagedKeys } from '../src/principals/managed-keys';
import { KEYS, TEST_MANAGED_KEYS, bootRefusal, createDefinition, lineGraph, pauseGraph, serveHarness, startHarness, startRun, type Harness, type ServedHarness } from './harness';

let h: Harness;
const extraRedis: Redis[] = [];
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  for (const close of closers) await close();
  for (const r of extraRedis) r.disconnect();
  await h?.close();
});

interface Minted {
  id: string;
  secret: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- asserted member by member
  body: any;
}

/** Mints a key as `token` (tenant A's bootstrap key by default); fails the test unless 201. */
async function mint(body: Record<string, unknown>, token: string = KEYS.a): Promise<Minted> {
  const r = await h.call('POST', '/v1/api-keys', { body, token });
  if (r.status !== 201) throw new Error(`mint: ${r.status} ${JSON.stringify(r.body)}`);
  return { id: r.body.id as string, secret: r.body.secret as string, body: r.body };
}

/** A second API replica over the same database and Redis, with its own connection and so its own key cache. */
async function replica(tuning: Partial<typeof TEST_MANAGED_KEYS> = {}) {
  const redis = new Redis(h.redisUrl, { maxRetriesPerRequest: 3 });
  extraRedis.push(redis);
  const deps = { ...h.deps, redis, managedKeys: { ...TEST_MANAGED_KEYS, ...tuning } };
  const app = createApp(deps);
  // the app's own cache (one per Redis connection): trusted once its invalidation channel is subscribed
  await sharedManagedKeys(deps, deps.managedKeys).ready;
  return (path: string, token: string, init: RequestInit = {}) =>
    app.request(path, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(init.headers as Record<string, string> | undefined) } });
}

/** The app served on 127.0.0.1 (requests then carry a client address). */
async function served(): Promise<string> {
  const s = await serveHarness(h);
  closers.push(s.close);
  return s.url;
}

describe('managed API keys', () => {
  it('answers the secret once, with its prefix, and never again on any route', async () => {
    const k = await mint({ name: 'ci deploys', scopes: ['read', 'run'] });
    expect(k.secret).toMatch(/^fl_tenantA_[A-Za-z0-9_-]{43}$/);
    expect(k.body).toMatchObject({
      name: 'ci deploys',
      principal: `service:${k.id}`,
      prefix: 'fl_tenantA',
      lastFour: k.secret.slice(-4),
      owner: principalIdOf(keyDigest(KEYS.a)),
      scopes: ['read', 'run'],
      constraints: { definitionIds: null, cidrs: null },
      expiresAt: null,
      revokedAt: null,
      lastUsed: null,
    });
    const randomPart = k.secret.slice('fl_tenantA_'.length);
    const reads = [
      await h.call('GET', '/v1/api-keys'),
      await h.call('GET', `/v1/api-keys/${k.id}`),
      await h.call('GET', '/v1/whoami', { token: k.secret }),
      await h.call('GET', '/v1/api-keys', { token: k.secret }),
    ];
    expect(reads.map((r) => r.status)).toEqual([200, 200, 200, 403]);
    for (const r of reads) {
      const text = JSON.stringify(r.body);
      expect(text).not.toContain(randomPart);
      expect(text).not.toContain('"secret"');
    }
    expect(reads[0]!.body.items.some((i: { id: string }) => i.id === k.id)).toBe(true);
    // nor is it in Postgres: only its keyed hash
    const stored = await h.db.pool.query(`SELECT row_to_json(k)::text || row_to_json(s)::text AS t FROM api_keys k JOIN api_key_secrets s ON s.key_id = k.id WHERE k.id = $1`, [k.id]);
    expect(stored.rows[0].t).not.toContain(randomPart);
  });

  it('acts as service:<key id> in its tenant: whoami, the run it starts and the intents it writes', async () => {
    const def = await createDefinition(h, pauseGraph());
    const k = await mint({ name: 'operator bot', scopes: ['read', 'run', 'operate'] });
    const me = await h.call('GET', '/v1/whoami', { token: k.secret });
    expect(me.body).toEqual({
      tenant: 'tenantA',
      principal: `service:${k.id}`,
      scopes: ['read', 'run', 'operate'],
      keyId: k.id,
      constraints: { definitionIds: null, cidrs: null },
      expiresAt: null,
      authRequired: true,
      via: 'key',
      name: null,
      groups: [],
      sessionExpiresAt: null,
    });
    const started = await h.call('POST', `/v1/definitions/${def}/runs`, { token: k.secret, body: {} });
    expect(started.status).toBe(202);
    const runId = started.body.runId as string;
    expect((await h.call('POST', `/v1/runs/${runId}/cancel`, { token: k.secret, body: {} })).status).toBe(202);
    const rows = await h.db.pool.query(`SELECT r.created_by, i.principal FROM runs r JOIN intents i ON i.run_id = r.id WHERE r.id = $1 AND i.kind = 'cancel'`, [runId]);
    expect(rows.rows).toEqual([{ created_by: `service:${k.id}`, principal: `service:${k.id}` }]);
    // another tenant's key cannot see it
    expect((await h.call('GET', `/v1/api-keys/${k.id}`, { token: KEYS.b })).status).toBe(404);
  });

  it('refuses a revoked key on each of two replicas within 5 s, each answering from its own warm cache before', async () => {
    const k = await mint({ name: 'to revoke', scopes: ['read'] });
    // TTLs far beyond the test: only the invalidation message can make these replicas forget the key
    const one = await replica({ cacheTtlMs: 600_000 });
    const two = await replica({ cacheTtlMs: 600_000 });
    expect((await one('/v1/whoami', k.secret)).status).toBe(200);
    expect((await two('/v1/whoami', k.secret)).status).toBe(200);
    // the cache answers without Postgres: the key's secret row deleted behind the caches' back is not noticed
    const hash = await h.db.pool.query<{ hash: string }>(`DELETE FROM api_key_secrets WHERE key_id = $1 RETURNING hash`, [k.id]);
    expect((await one('/v1/whoami', k.secret)).status).toBe(200);
    expect((await two('/v1/whoami', k.secret)).status).toBe(200);
    await h.db.pool.query(`INSERT INTO api_key_secrets (hash, key_id, tenant_id) VALUES ($1, $2, 'tenantA')`, [hash.rows[0]!.hash, k.id]);

    const revokedAt = Date.now();
    expect((await one(`/v1/api-keys/${k.id}`, KEYS.a, { method: 'DELETE' })).status).toBe(204);
    // the revoking replica refuses at once; the other within 5 s
    expect((await one('/v1/whoami', k.secret)).status).toBe(401);
    await waitFor(async () => (await two('/v1/whoami', k.secret)).status === 401, { timeoutMs: 5_000, description: 'replica two refuses the revoked key' });
    expect(Date.now() - revokedAt).toBeLessThan(5_000);
    expect((await h.call('GET', '/v1/whoami', { token: k.secret })).status).toBe(401);
    const listed = await h.call('GET', `/v1/api-keys/${k.id}`);
    expect(listed.body.revokedAt).not.toBeNull();
    // revoking again is no error
    expect((await h.call('DELETE', `/v1/api-keys/${k.id}`)).status).toBe(204);
  });

  it('rotates with a grace: old and new secrets both work, then only the new one', async () => {
    const k = await mint({ name: 'rotating', scopes: ['read'] });
    const other = await replica({ cacheTtlMs: 600_000 });
    expect((await other('/v1/whoami', k.secret)).status).toBe(200);
    const rotated = await h.call('POST', `/v1/api-keys/${k.id}/rotate`, { body: { graceSeconds: 2 } });
    expect(rotated.status).toBe(200);
    const next = rotated.body.secret as string;
    expect(next).not.toBe(k.secret);
    expect(rotated.body).toMatchObject({ id: k.id, lastFour: next.slice(-4), principal: `service:${k.id}` });
    expect(rotated.body.rotatedAt).not.toBeNull();
    for (const secret of [k.secret, next]) {
      expect((await h.call('GET', '/v1/whoami', { token: secret })).body.principal).toBe(`service:${k.id}`);
      expect((await other('/v1/whoami', secret)).status).toBe(200);
    }
    await waitFor(async () => (await other('/v1/whoami', k.secret)).status === 401 && (await h.call('GET', '/v1/whoami', { token: k.secret })).status === 401, {
      timeoutMs: 5_000,
      description: 'the old secret lapses after its grace',
    });
    expect((await other('/v1/whoami', next)).status).toBe(200);
    expect((await h.call('GET', '/v1/whoami', { token: next })).status).toBe(200);
    // a grace of 0 ends the old secret at once
    const again = await h.call('POST', `/v1/api-keys/${k.id}/rotate`, { body: { graceSeconds: 0 } });
    expect((await h.call('GET', '/v1/whoami', { token: next })).status).toBe(401);
    expect((await h.call('GET', '/v1/whoami', { token: again.body.secret })).status).toBe(200);
  });

  it('refuses a key minting or rotating a key broader than itself: 403 ScopeEscalation', async () => {
    const narrow = await mint({ name: 'narrow', scopes: ['read', 'keys'] });
    const broader = await h.call('POST', '/v1/api-keys', { token: narrow.secret, body: { name: 'broader', scopes: ['read', 'run'] } });
    expect(broader.status).toBe(403);
    expect(broader.body.error.code).toBe('ScopeEscalation');
    const admin = await h.call('POST', '/v1/api-keys', { body: { name: 'admin', scopes: ['admin'] } });
    expect(admin.body.error.code).toBe('ScopeEscalation');
    expect((await h.call('POST', '/v1/api-keys', { token: narrow.secret, body: { name: 'same', scopes: ['read'] } })).status).toBe(201);

    const def = await createDefinition(h, lineGraph(), 'scoped');
    const limited = await mint({ name: 'limited', scopes: ['read', 'keys'], constraints: { definitionIds: [def], cidrs: ['10.0.0.0/8'] } });
    // (its own requests come from no address in-process: its mints are judged through a served app)
    const base = await served();
    const asLimited = (body: unknown) =>
      fetch(`${base}/v1/api-keys`, { method: 'POST', headers: { authorization: `Bearer ${limited.secret}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await asLimited({ name: 'x', scopes: ['read'] })).status).toBe(403);
    const limitedHere = await mint({ name: 'limited here', scopes: ['read', 'keys'], constraints: { definitionIds: [def], cidrs: ['127.0.0.0/8'] } });
    const asHere = async (body: unknown) => {
      const r = await fetch(`${base}/v1/api-keys`, { method: 'POST', headers: { authorization: `Bearer ${limitedHere.secret}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: r.status, body: (await r.json()) as { error?: { code: string } } };
    };
    expect((await asHere({ name: 'unconstrained', scopes: ['read'] })).body.error?.code).toBe('ScopeEscalation');
    expect((await asHere({ name: 'wider net', scopes: ['read'], constraints: { definitionIds: [def], cidrs: ['0.0.0.0/0'] } })).body.error?.code).toBe('ScopeEscalation');
    expect((await asHere({ name: 'other def', scopes: ['read'], constraints: { definitionIds: [await createDefinition(h, lineGraph(), 'other')], cidrs: ['127.0.0.1/32'] } })).body.error?.code).toBe(
      'ScopeEscalation',
    );
    expect((await asHere({ name: 'within', scopes: ['read'], constraints: { definitionIds: [def], cidrs: ['127.0.0.1/32'] } })).status).toBe(201);

    // rotating hands over a working secret: only a caller holding all the key holds may
    const wide = await mint({ name: 'wide', scopes: ['read', 'run', 'operate'] });
    const steal = await h.call('POST', `/v1/api-keys/${wide.id}/rotate`, { token: narrow.secret, body: { graceSeconds: 0 } });
    expect(steal.status).toBe(403);
    expect(steal.body.error.code).toBe('ScopeEscalation');
    expect((await h.call('GET', '/v1/whoami', { token: wide.secret })).status).toBe(200);
  });

  it("answers 403 KeyConstraint to a definition-limited key on another definition's runs", async () => {
    const mine = await createDefinition(h, pauseGraph(), 'mine');
    const theirs = await createDefinition(h, pauseGraph(), 'theirs');
    const theirRun = await startRun(h, theirs);
    const k = await mint({ name: 'mine only', scopes: ['read', 'run', 'operate'], constraints: { definitionIds: [mine] } });
    const as = (method: string, path: string, body?: unknown) => h.call(method, path, { token: k.secret, ...(body !== undefined ? { body } : {}) });

    const started = await as('POST', `/v1/definitions/${mine}/runs`, {});
    expect(started.status).toBe(202);
    const myRun = started.body.runId as string;
    expect((await as('GET', `/v1/runs/${myRun}`)).status).toBe(200);
    expect((await as('GET', `/v1/runs?definitionId=${mine}`)).status).toBe(200);

    const refused = [
      await as('POST', `/v1/definitions/${theirs}/runs`, {}),
      await as('GET', `/v1/definitions/${theirs}`),
      await as('GET', `/v1/runs/${theirRun}`),
      await as('GET', `/v1/runs/${theirRun}/events`),
      await as('GET', `/v1/runs/${theirRun}/nodes/gate`),
      await as('POST', `/v1/runs/${theirRun}/cancel`, {}),
      await as('POST', `/v1/runs/${theirRun}/signals`, { channel: 'go', payload: {} }),
      await as('POST', `/v1/runs/${theirRun}/nodes/gate/decide`, { operationId: 'op-1', decision: 'Approve' }),
      await as('GET', `/v1/runs?definitionId=${theirs}`),
      await as('GET', '/v1/runs'),
      await as('POST', '/v1/runs/bulk', { action: 'cancel', filter: {} }),
    ];
    expect(refused.map((r) => [r.status, r.body.error?.code])).toEqual(refused.map(() => [403, 'KeyConstraint']));
    // their run is untouched, and an unknown run still reads 404
    expect((await h.call('GET', `/v1/runs/${theirRun}`)).body.run.status).not.toBe('Cancelling');
    expect((await as('GET', '/v1/runs/00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });

  it('answers 403 KeyConstraint to a request from outside the key’s networks', async () => {
    const base = await served();
    const far = await mint({ name: 'office only', scopes: ['read'], constraints: { cidrs: ['10.0.0.0/8', '2001:db8::/32'] } });
    const near = await mint({ name: 'loopback', scopes: ['read'], constraints: { cidrs: ['127.0.0.0/8'] } });
    const whoami = (secret: string) => fetch(`${base}/v1/whoami`, { headers: { authorization: `Bearer ${secret}` } });
    const refused = await whoami(far.secret);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('KeyConstraint');
    const ok = await whoami(near.secret);
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { constraints: unknown }).constraints).toEqual({ definitionIds: null, cidrs: ['127.0.0.0/8'] });
    // a request whose address is unknown is outside every network
    expect((await h.call('GET', '/v1/whoami', { token: near.secret })).status).toBe(403);
    const bad = await h.call('POST', '/v1/api-keys', { body: { name: 'bad', scopes: ['read'], constraints: { cidrs: ['10.0.0.0/33'] } } });
    expect(bad.status).toBe(400);
  });

  it('reads the client address from X-Forwarded-For only behind TRUSTED_PROXIES', async () => {
    const office = await mint({ name: 'office', scopes: ['read'], constraints: { cidrs: ['10.0.0.0/8'] } });
    const redis = new Redis(h.redisUrl, { maxRetriesPerRequest: 3 });
    extraRedis.push(redis);
    const deps = { ...h.deps, redis, managedKeys: { ...TEST_MANAGED_KEYS, trustedProxies: ['127.0.0.0/8'] } };
    const proxied = await serveHarness(h, { app: createApp(deps), deps });
    closers.push(proxied.close);
    const direct = await served();
    const whoami = (base: string, forwardedFor?: string) =>
      fetch(`${base}/v1/whoami`, { headers: { authorization: `Bearer ${office.secret}`, ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) } });
    // behind the trusted proxy (the loopback peer), the nearest untrusted hop is the client
    expect((await whoami(proxied.url, '10.1.2.3')).status).toBe(200);
    expect((await whoami(proxied.url, '10.9.9.9, 127.0.0.5')).status).toBe(200);
    expect((await whoami(proxied.url, '10.1.2.3, 192.0.2.7')).status).toBe(403);
    expect((await whoami(proxied.url)).status).toBe(403);
    const used = await waitFor(async () => (await h.call('GET', `/v1/api-keys/${office.id}`)).body.lastUsed as { address: string } | null);
    expect(used.address).toMatch(/^10\./);
    // without TRUSTED_PROXIES the header is the client's own claim: ignored
    expect((await whoami(direct, '10.1.2.3')).status).toBe(403);
  });

  it('answers 401 once a key is past its expiresAt', async () => {
    const k = await mint({ name: 'short-lived', scopes: ['read'], expiresAt: new Date(Date.now() + 1_500).toISOString() });
    expect(k.body.expiresAt).not.toBeNull();
    expect((await h.call('GET', '/v1/whoami', { token: k.secret })).status).toBe(200);
    await waitFor(async () => (await h.call('GET', '/v1/whoami', { token: k.secret })).status === 401, { timeoutMs: 5_000, description: 'the key expires' });
    const past = await h.call('POST', '/v1/api-keys', { body: { name: 'past', scopes: ['read'], expiresAt: new Date(Date.now() - 1_000).toISOString() } });
    expect(past.status).toBe(400);
  });

  it('records the last use (time and client address) at most once a minute per key', async () => {
    const base = await served();
    const k = await mint({ name: 'used', scopes: ['read'] });
    const use = () => fetch(`${base}/v1/whoami`, { headers: { authorization: `Bearer ${k.secret}` } });
    expect((await use()).status).toBe(200);
    const first = await waitFor(async () => (await h.call('GET', `/v1/api-keys/${k.id}`)).body.lastUsed as { at: string; address: string } | null);
    expect(first.address).toMatch(/127\.0\.0\.1$/);
    // more uses, on this replica and on another one: none is written within the minute
    expect((await use()).status).toBe(200);
    const other = await replica();
    expect((await other('/v1/whoami', k.secret)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    expect((await h.call('GET', `/v1/api-keys/${k.id}`)).body.lastUsed).toEqual(first);
    // past the interval, the next use is written again (a replica tuned to one second)
    const quick = await replica({ lastUsedIntervalS: 1 });
    await new Promise((r) => setTimeout(r, 1_100));
    expect((await quick('/v1/whoami', k.secret)).status).toBe(200);
    const later = await waitFor(async () => {
      const at = (await h.call('GET', `/v1/api-keys/${k.id}`)).body.lastUsed?.at as string | undefined;
      return at !== undefined && at > first.at ? at : null;
    });
    expect(Date.parse(later) - Date.parse(first.at)).toBeGreaterThanOrEqual(1_000);
  });

  it('stops the API at boot on a short API_KEY_PEPPER, naming the option and not its value', () => {
    const { code, printed } = bootRefusal({ API_KEY_PEPPER: 'pepper-too-short' });
    expect(code).toBe(1);
    expect(printed).toMatch(/API_KEY_PEPPER: must be at least 32 characters/);
    expect(printed).not.toContain('pepper-too-short');
    expect(bootRefusal({ TRUSTED_PROXIES: '10.0.0.0/8, proxy.local' }).printed).toMatch(/TRUSTED_PROXIES: 'proxy.local' is not a CIDR/);
    expect(loadConfig(apiConfigSchema, { API_KEY_PEPPER: 'p'.repeat(32) }).API_KEY_PEPPER).toBe('p'.repeat(32));
  });

  it('refuses to mint without a pepper: 409 ManagedKeysDisabled', async () => {
    const app = createApp({ ...h.deps, redis: (() => { const r = new Redis(h.redisUrl); extraRedis.push(r); return r; })(), managedKeys: { ...TEST_MANAGED_KEYS, pepper: null } });
    const r = await app.request('/v1/api-keys', { method: 'POST', headers: { authorization: `Bearer ${KEYS.a}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'n', scopes: ['read'] }) });
    expect(r.status).toBe(409);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe('ManagedKeysDisabled');
  });

  describe('on the live channel', () => {
    let channel: ServedHarness;
    const sockets: Socket[] = [];
    beforeAll(async () => {
      channel = await serveHarness(h);
    });
    afterAll(async () => {
      for (const s of sockets) s.disconnect();
      await channel.close();
    });

    const connect = (token: string) => {
      const s = connectSocket(channel.url, { path: '/socket.io', transports: ['websocket'], auth: { token }, reconnection: false });
      sockets.push(s);
      return new Promise<Socket>((resolve, reject) => {
        s.once('connect', () => resolve(s));
        s.once('connect_error', reject);
      });
    };

    it('signs a managed key in, keeps a limited key to its definitions, refuses other networks and drops a revoked key’s socket', async () => {
      const mine = await createDefinition(h, pauseGraph(), 'live-mine');
      const theirs = await createDefinition(h, pauseGraph(), 'live-theirs');
      const myRun = await startRun(h, mine);
      const theirRun = await startRun(h, theirs);
      const k = await mint({ name: 'live', scopes: ['read'], constraints: { definitionIds: [mine] } });
      const s = await connect(k.secret);
      expect(await s.emitWithAck(LIVE_EVENTS.subscribeRun, { runId: myRun, afterSeq: 0 })).toMatchObject({ status: 'Pending' });
      const refused = await s.emitWithAck(LIVE_EVENTS.subscribeRun, { runId: theirRun, afterSeq: 0 });
      expect(refused.error.code).toBe('Forbidden');
      expect(refused.error.message).toMatch(/^KeyConstraint/);

      const far = await mint({ name: 'far', scopes: ['read'], constraints: { cidrs: ['10.0.0.0/8'] } });
      await expect(connect(far.secret)).rejects.toThrow('KeyConstraint');

      const closed = new Promise<string>((resolve) => s.once('disconnect', (reason) => resolve(reason)));
      expect((await h.call('DELETE', `/v1/api-keys/${k.id}`)).status).toBe(204);
      expect(await closed).toBe('io server disconnect');
      await expect(connect(k.secret)).rejects.toThrow('Unauthorized');
    });
  });
});
