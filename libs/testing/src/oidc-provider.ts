/**
 * A real OpenID Connect provider for tests (the `oidc-provider` package, the certified
 * implementation), listening on a loopback port. Its development sign-in form accepts any
 * login and password: the login picks one of `accounts` (an unknown login signs in as a
 * person with no claims beyond `sub`). Consent is granted without asking, as for a first-party
 * client, so a sign-in is one form.
 *
 * `signInOverHttp` walks that flow with plain HTTP requests (a cookie jar per call), for the
 * API's integration tests; browser tests fill the same form in Chromium.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';

/** A person the provider knows: the claims it gives about them. */
export interface TestAccount {
  email?: string;
  name?: string;
  groups?: string[];
  flowline_tenant?: string;
}

export interface TestOidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  close(): Promise<void>;
}

/** The scope the provider gives the Flowline claims (groups, tenant) under. */
export const TEST_OIDC_SCOPES = 'openid email profile flowline';

/**
 * Starts the provider; `redirectUris` are the callbacks the test client may use — a function
 * when the API's address is known only after the provider's (the API is told the issuer at
 * boot): it is read at the provider's first request.
 */
export async function startOidcProvider(o: { accounts: Record<string, TestAccount>; redirectUris: string[] | (() => string[]); clientId?: string; clientSecret?: string }): Promise<TestOidcProvider> {
  // loaded here, not at the top: every test file imports this package, and the provider (Koa,
  // jose and friends) costs a few hundred milliseconds to load that only the sign-in tests need
  const { default: OidcProvider } = await import('oidc-provider');
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = o.clientId ?? 'flowline-console';
  const clientSecret = o.clientSecret ?? 'test-client-secret-0123456789abcdef';
  const build = (): Provider => new OidcProvider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: typeof o.redirectUris === 'function' ? o.redirectUris() : o.redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], flowline: ['groups', 'flowline_tenant'] },
    scopes: ['openid', 'email', 'profile', 'flowline'],
    features: { devInteractions: { enabled: true } },
    pkce: { required: () => true },
    // fixed lifetimes (the defaults print a notice on each first use)
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 3600, Grant: 3600 },
    cookies: { keys: ['test-cookie-key-0123456789abcdef'] },
    findAccount: (_ctx: KoaContextWithOIDC, sub: string) => {
      const account = o.accounts[sub] ?? {};
      return { accountId: sub, claims: () => ({ sub, ...account }) };
    },
    // a first-party client: grant what it asks without a consent screen
    async loadExistingGrant(ctx: KoaContextWithOIDC) {
      const grantId = ctx.oidc.result?.consent?.grantId ?? ctx.oidc.session!.grantIdFor(ctx.oidc.client!.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! });
      grant.addOIDCScope(TEST_OIDC_SCOPES);
      grant.addOIDCClaims(['sub', 'email', 'email_verified', 'name', 'groups', 'flowline_tenant']);
      await grant.save();
      return grant;
    },
  });
  let handle: ReturnType<Provider['callback']> | null = null;
  server.on('request', (req, res) => {
    handle ??= build().callback();
    void handle(req, res);
  });
  return {
    issuer,
    clientId,
    clientSecret,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A minimal cookie jar: name → value per origin is enough for one sign-in. */
class Jar {
  private readonly byOrigin = new Map<string, Map<string, string>>();
  take(url: string, res: Response): void {
    const origin = new URL(url).origin;
    const jar = this.byOrigin.get(origin) ?? new Map<string, string>();
    for (const line of res.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const cut = pair.indexOf('=');
      const name = pair.slice(0, cut).trim();
      const value = pair.slice(cut + 1).trim();
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(line) || value === '') jar.delete(name);
      else jar.set(name, value);
    }
    this.byOrigin.set(origin, jar);
  }
  header(url: string): string {
    return [...(this.byOrigin.get(new URL(url).origin) ?? new Map<string, string>())].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  get(url: string, name: string): string | undefined {
    return this.byOrigin.get(new URL(url).origin)?.get(name);
  }
}

/** One sign-in's end: where the API finally sent the browser and the session cookie it set (if any). */
export interface HttpSignIn {
  /** the last redirect's target (the console, or the sign-in page with `signInError`) */
  landedOn: string;
  /** the `flowline_session` cookie's value; undefined when refused */
  sessionCookie: string | undefined;
}

/**
 * Signs in at `apiUrl` as `login` by plain HTTP: /auth/login → the provider's form → the
 * API's callback, following redirects with cookies; stops at the first address outside the
 * API's /auth and the provider.
 */
export async function signInOverHttp(apiUrl: string, issuer: string, login: string, returnTo = '/console/'): Promise<HttpSignIn> {
  const jar = new Jar();
  let url = `${apiUrl}/auth/login?returnTo=${encodeURIComponent(returnTo)}`;
  let method = 'GET';
  let body: string | undefined;
  for (let hop = 0; hop < 20; hop++) {
    const res = await fetch(url, {
      method,
      redirect: 'manual',
      headers: { cookie: jar.header(url), ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      ...(body ? { body } : {}),
    });
    jar.take(url, res);
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      const next = new URL(location, url).href;
      const inFlow = next.startsWith(issuer) || next.startsWith(`${apiUrl}/auth/`);
      if (!inFlow) return { landedOn: next, sessionCookie: jar.get(apiUrl, 'flowline_session') };
      url = next;
      method = 'GET';
      body = undefined;
      continue;
    }
    const html = await res.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (res.status !== 200 || !action || !html.includes('name="login"')) throw new Error(`unexpected answer ${res.status} at ${url}: ${html.slice(0, 300)}`);
    url = new URL(action.replace(/&amp;/g, '&'), url).href;
    method = 'POST';
    body = new URLSearchParams({ prompt: 'login', login, password: 'any' }).toString();
  }
  throw new Error('sign-in did not end within 20 hops');
}
