/**
 * People signing in through OpenID Connect, against a real provider (oidc-provider) started
 * here: the authorization-code flow with PKCE over HTTP, the session cookie on /v1, the
 * claim mapping (tenant, groups → scopes), refusals, sign-out, the audit rows, and a group
 * quorum met by a signed-in person.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseGroupScopes } from '@flowline/runtime';
import { TEST_OIDC_SCOPES, signInOverHttp, startOidcProvider, type TestOidcProvider } from '@flowline/testing';
import { createApp } from '../src/app';
import type { OidcOptions } from '../src/routes/oidc';
import { safeReturnTo } from '../src/routes/oidc';
import { KEYS, bootRefusal, pauseGraph, startHarness, tickRun, type Harness } from './harness';

let h: Harness;
let provider: TestOidcProvider;
let server: HttpServer;
let api: string;
let app: ReturnType<typeof createApp>;

const groupScopes = (() => {
  const r = parseGroupScopes('ops:*,finance:read+run,viewers:read');
  if (!r.ok) throw new Error(r.message);
  return r.map;
})();

beforeAll(async () => {
  h = await startHarness();
  // the app is served before it is built: the provider must know the callback, the app the issuer
  server = serve({ fetch: (req, env) => app.fetch(req, env), port: 0, hostname: '127.0.0.1' }) as HttpServer;
  if (!server.listening) await once(server, 'listening');
  api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  provider = await startOidcProvider({
    redirectUris: [`${api}/auth/callback`],
    accounts: {
      ana: { email: 'ana@example.com', name: 'Ana Ops', groups: ['ops'], flowline_tenant: 'tenantA' },
      fin: { email: 'fin@example.com', name: 'Fin Ance', groups: ['finance'], flowline_tenant: 'tenantA' },
      vic: { email: 'vic@example.com', name: 'Vic Viewer', groups: ['viewers'], flowline_tenant: 'tenantA' },
      nog: { email: 'nog@example.com', groups: ['nobody'], flowline_tenant: 'tenantA' },
      nut: { email: 'nut@example.com', groups: ['ops'] },
    },
  });
  const oidc: OidcOptions = {
    issuer: provider.issuer,
    clientId: provider.clientId,
    clientSecret: provider.clientSecret,
    redirectUrl: null,
    scopes: TEST_OIDC_SCOPES,
    mapping: { userClaim: 'email', tenantClaim: 'flowline_tenant', fixedTenant: null, groupsClaim: 'groups', groupScopes },
    sessionTtlS: 600,
    loginTtlS: 60,
  };
  app = createApp({ ...h.deps, oidc });
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  await provider.close();
  await h.close();
});

/** A request to the served app with a session cookie (and the console's header unless told otherwise). */
async function asSession(cookie: string, method: string, path: string, o: { body?: unknown; consoleHeader?: boolean } = {}) {
  const res = await fetch(`${api}${path}`, {
    method,
    headers: {
      cookie: `flowline_session=${cookie}`,
      ...(o.consoleHeader === false ? {} : { 'x-flowline-client': 'console' }),
      ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(o.body !== undefined ? { body: JSON.stringify(o.body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

const auditRows = async (action: string) =>
  (await h.call('GET', `/v1/audit?action=${action}`, { token: KEYS.a })).body.items as Array<{ principal: string; action: string; status: number | null }>;

async function signedIn(login: string): Promise<string> {
  const r = await signInOverHttp(api, provider.issuer, login);
  expect(r.landedOn).toBe(`${api}/console/`);
  expect(r.sessionCookie).toBeDefined();
  return r.sessionCookie!;
}

describe('single sign-on', () => {
  it('tells the console that single sign-on is on', async () => {
    const r = await fetch(`${api}/auth/config`);
    expect(await r.json()).toEqual({ sso: true, loginUrl: '/auth/login', authRequired: true });
  });

  it('signs a person in with code + PKCE, lands on the page they came from, and the cookie acts as user:<email> with their groups scopes', async () => {
    const r = await signInOverHttp(api, provider.issuer, 'ana', '/console/runs?status=Running');
    expect(r.landedOn).toBe(`${api}/console/runs?status=Running`);
    const me = await asSession(r.sessionCookie!, 'GET', '/v1/whoami');
    expect(me).toMatchObject({
      status: 200,
      body: { tenant: 'tenantA', principal: 'user:ana@example.com', via: 'session', name: 'Ana Ops', groups: ['ops'], scopes: ['read', 'run', 'operate', 'define', 'keys', 'audit'] },
    });
    expect(Date.parse(me.body.sessionExpiresAt)).toBeGreaterThan(Date.now());
    // a person's change names them in the audit log; the sign-in is recorded too
    const created = await asSession(r.sessionCookie!, 'POST', '/v1/definitions', { body: { name: 'by-ana', graph: pauseGraph() } });
    expect(created.status).toBe(201);
    await expect.poll(async () => (await auditRows('definition.create')).find((a) => a.principal === 'user:ana@example.com')).toBeDefined();
    expect((await auditRows('session.signIn')).map((a) => a.principal)).toContain('user:ana@example.com');
  });

  it("refuses a session's change without the console's header (a cross-site form cannot send one), and a read-only person's change", async () => {
    const ana = await signedIn('ana');
    expect(await asSession(ana, 'POST', '/v1/definitions', { body: { name: 'x', graph: pauseGraph() }, consoleHeader: false })).toMatchObject({
      status: 403,
      body: { error: { code: 'CrossSiteRefused' } },
    });
    const vic = await signedIn('vic');
    expect((await asSession(vic, 'GET', '/v1/definitions')).status).toBe(200);
    expect(await asSession(vic, 'POST', '/v1/definitions', { body: { name: 'x', graph: pauseGraph() } })).toMatchObject({ status: 403, body: { error: { code: 'Forbidden' } } });
  });

  it('refuses a person whose groups hold no scope, or whose token names no tenant, with the reason on the sign-in page', async () => {
    const nog = await signInOverHttp(api, provider.issuer, 'nog');
    expect(nog.sessionCookie).toBeUndefined();
    const landed = new URL(nog.landedOn);
    expect(landed.pathname).toBe('/console/');
    expect(landed.searchParams.get('signInError')).toBe('SignInRefused');
    expect(landed.searchParams.get('reason')).toMatch(/nobody/);
    const nut = new URL((await signInOverHttp(api, provider.issuer, 'nut')).landedOn);
    expect(nut.searchParams.get('reason')).toMatch(/names no tenant/);
  });

  it('refuses a callback not begun in this browser, and a callback used twice', async () => {
    const stray = await fetch(`${api}/auth/callback?code=abc&state=forged`, { redirect: 'manual' });
    expect(stray.status).toBe(303);
    expect(new URL(stray.headers.get('location')!, api).searchParams.get('signInError')).toBe('SignInExpired');
    // the same state twice, even with its cookie: the second finds nothing
    const begun = await fetch(`${api}/auth/login`, { redirect: 'manual' });
    const state = new URL(begun.headers.get('location')!).searchParams.get('state')!;
    const cookie = begun.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
    const first = await fetch(`${api}/auth/callback?code=bogus&state=${state}`, { redirect: 'manual', headers: { cookie } });
    expect(new URL(first.headers.get('location')!, api).searchParams.get('signInError')).toBe('SignInFailed');
    const again = await fetch(`${api}/auth/callback?code=bogus&state=${state}`, { redirect: 'manual', headers: { cookie } });
    expect(new URL(again.headers.get('location')!, api).searchParams.get('signInError')).toBe('SignInExpired');
  });

  it('lands only on a path of this origin', () => {
    expect(safeReturnTo('/console/runs/1?x=1')).toBe('/console/runs/1?x=1');
    for (const bad of ['//evil.example/', 'https://evil.example/', '/\\evil.example', 'console', undefined, '/a\nb']) expect(safeReturnTo(bad)).toBe('/console/');
  });

  it('ends the session at sign-out on every request after, and records it', async () => {
    const ana = await signedIn('ana');
    expect((await asSession(ana, 'GET', '/v1/whoami')).status).toBe(200);
    const out = await fetch(`${api}/auth/logout`, { method: 'POST', headers: { cookie: `flowline_session=${ana}` } });
    expect(out.status).toBe(204);
    expect(out.headers.getSetCookie().join()).toMatch(/flowline_session=;/);
    expect(await asSession(ana, 'GET', '/v1/whoami')).toMatchObject({ status: 401, body: { error: { code: 'Unauthorized' } } });
    expect((await auditRows('session.signOut')).map((a) => a.principal)).toContain('user:ana@example.com');
  });

  it("counts a signed-in person's groups in an approval's group quorum", async () => {
    const graph = pauseGraph();
    (graph.nodes[1]!.config as Record<string, unknown>).approval = { quorums: [{ name: 'finance', group: 'finance', min: 1 }] };
    const def = await h.call('POST', '/v1/definitions', { body: { name: 'fin-gate', graph } });
    const run = await h.call('POST', `/v1/definitions/${def.body.id}/runs`, { body: {} });
    await tickRun(h, run.body.runId);
    const decide = (cookie: string) => asSession(cookie, 'POST', `/v1/runs/${run.body.runId}/nodes/gate/decide`, { body: { operationId: randomUUID(), decision: 'Approve' } });
    // ana (ops) may decide runs but is not in finance: refused
    expect(await decide(await signedIn('ana'))).toMatchObject({ status: 403, body: { error: { code: 'ApprovalForbidden', rule: 'notInQuorum' } } });
    // fin holds run (the decide route's scope) and is in finance
    expect(await decide(await signedIn('fin'))).toMatchObject({ status: 202, body: { approval: { status: 'approved' } } });
  });

  it('refuses at boot an issuer without API_KEYS, without a client id, or over plain http to another host', () => {
    expect(bootRefusal({ OIDC_ISSUER: 'https://id.example', OIDC_CLIENT_ID: 'c' }).printed).toMatch(/OIDC_ISSUER: needs API_KEYS/);
    expect(bootRefusal({ API_KEYS: 'a:k', OIDC_ISSUER: 'https://id.example' }).printed).toMatch(/OIDC_CLIENT_ID: is required when OIDC_ISSUER is set/);
    expect(bootRefusal({ API_KEYS: 'a:k', OIDC_ISSUER: 'http://id.example', OIDC_CLIENT_ID: 'c' }).printed).toMatch(/OIDC_ISSUER: must be https/);
    expect(bootRefusal({ API_KEYS: 'a:k', OIDC_ISSUER: 'https://id.example', OIDC_CLIENT_ID: 'c', OIDC_GROUP_SCOPES: 'ops:fly' }).printed).toMatch(/OIDC_GROUP_SCOPES: entry 1 names an unknown scope/);
  });
});
