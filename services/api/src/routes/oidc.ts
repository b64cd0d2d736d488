/**
 * People sign in to the console with OpenID Connect (authorization code + PKCE, openid-client):
 *
 * - `GET /auth/config` (public) tells the console whether single sign-on is on, so its sign-in
 *   page offers it, and whether keys are needed at all.
 * - `GET /auth/login?returnTo=/console/…` starts a sign-in: the PKCE verifier, state and nonce
 *   wait in Redis for OIDC_LOGIN_TTL_S under the state, which a SameSite=Lax cookie also holds —
 *   the callback must come back to the browser that began it (no sign-in can be forced on
 *   someone else's browser).
 * - `GET /auth/callback` exchanges the code, verifies the ID token (issuer, audience, nonce,
 *   signature) and reads userinfo, maps the claims to a person (principals/oidc-claims.ts),
 *   starts a session (principals/user-sessions.ts) and lands on `returnTo`. A refusal lands on
 *   the console's sign-in page with `signInError` and a reason it shows.
 * - `POST /auth/logout` ends the session.
 *
 * Sign-in and sign-out are written to the audit log (`session.signIn`, `session.signOut`).
 * The issuer's metadata is read at the first sign-in (and again after a failure), so an
 * API replica boots while the issuer is down.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import * as oidc from 'openid-client';
import { insertAuditRow, type AuditEntry } from '@flowline/db';
import type { AppDeps, AppEnv } from '../context';
import { clientAddress, type PrincipalResolver } from '../auth';
import type { AuditChainer } from '../audit/chainer';
import { REQUEST_ID_HEADER } from '../audit/middleware';
import { personFromClaims, type ClaimMapping } from '../principals/oidc-claims';
import { USER_SESSION_COOKIE, type UserSessions } from '../principals/user-sessions';
import { jsonContent } from '../schemas';

/** The OIDC options an API replica runs with (null: sign-in by key only). */
export interface OidcOptions {
  issuer: string;
  clientId: string;
  clientSecret: string | null;
  /** the registered callback; null = the public URL (or the request's origin) + /auth/callback */
  redirectUrl: string | null;
  scopes: string;
  mapping: ClaimMapping;
  sessionTtlS: number;
  loginTtlS: number;
}

/** The cookie carrying a sign-in's state between /auth/login and /auth/callback. */
const LOGIN_COOKIE = 'flowline_login';
const CONSOLE_HOME = '/console/';

/** Where a sign-in may land: a path of this origin only (never `//host` or a backslash trick). */
export function safeReturnTo(raw: string | undefined): string {
  if (!raw || raw.length > 2000 || !raw.startsWith('/') || raw.startsWith('//') || raw.includes('\\') || [...raw].some((ch) => ch.charCodeAt(0) < 0x20)) return CONSOLE_HOME;
  return raw;
}

interface PendingLogin {
  verifier: string;
  nonce: string;
  returnTo: string;
  redirectUri: string;
}

const AuthConfigSchema = z
  .object({
    sso: z.boolean().openapi({ description: 'true when people can sign in through the OpenID Connect issuer (GET /auth/login)' }),
    loginUrl: z.string().nullable().openapi({ description: 'where a browser starts a sign-in (append ?returnTo=<path>); null without single sign-on' }),
    authRequired: z.boolean().openapi({ description: 'false when the server runs single-tenant without keys (API_KEYS unset): nobody needs to sign in' }),
  })
  .openapi('AuthConfig');

/** Registers /auth/*; the user sessions it starts are what the auth middleware and the live channel read. */
export function registerOidcRoutes(
  app: OpenAPIHono<AppEnv>,
  deps: AppDeps,
  o: { options: OidcOptions | null; sessions: UserSessions; principals: PrincipalResolver; chainer: AuditChainer },
): void {
  const { options, sessions } = o;
  app.openapi(
    {
      method: 'get',
      path: '/auth/config',
      tags: ['auth'],
      security: [],
      operationId: 'getAuthConfig',
      summary: 'How the console signs in: by key, and by single sign-on when configured',
      responses: { 200: jsonContent(AuthConfigSchema, 'the sign-in methods') },
    },
    (c) => c.json({ sso: options !== null, loginUrl: options ? '/auth/login' : null, authRequired: deps.apiKeys !== null }, 200),
  );

  app.openapi(
    {
      method: 'post',
      path: '/auth/logout',
      tags: ['auth'],
      security: [],
      operationId: 'signOut',
      summary: "Ends the browser's single sign-on session (its cookie); idempotent",
      responses: { 204: { description: 'signed out (or was not signed in)' } },
    },
    async (c) => {
      const token = getCookie(c, USER_SESSION_COOKIE);
      const principal = await sessions.resolve(token);
      await sessions.end(token);
      deleteCookie(c, USER_SESSION_COOKIE, { path: '/', secure: secure(c) });
      if (principal) await audit(c, 'session.signOut', principal.tenant, principal.id, 204, null);
      return c.body(null, 204);
    },
  );

  if (options === null) return;
  const opts = options;

  let discovered: Promise<oidc.Configuration> | null = null;
  const configuration = (): Promise<oidc.Configuration> => {
    discovered ??= oidc
      .discovery(new URL(opts.issuer), opts.clientId, undefined, opts.clientSecret ? oidc.ClientSecretBasic(opts.clientSecret) : oidc.None(), {
        // a loopback issuer (development, tests) speaks plain HTTP; boot refuses any other http issuer
        ...(new URL(opts.issuer).protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : {}),
      })
      .catch((err: unknown) => {
        discovered = null;
        throw err;
      });
    return discovered;
  };
  const loginKey = (state: string) => `${deps.queuePrefix}:oidc-login:${state}`;
  const redirectUriOf = (c: Context<AppEnv>) => opts.redirectUrl ?? `${(deps.waitpoints?.publicUrl ?? new URL(c.req.url).origin).replace(/\/+$/, '')}/auth/callback`;
  const refuse = (c: Context<AppEnv>, code: string, reason: string) => {
    const to = new URL(CONSOLE_HOME, 'http://x');
    to.searchParams.set('signInError', code);
    to.searchParams.set('reason', reason.slice(0, 300));
    c.header('cache-control', 'no-store');
    return c.redirect(`${to.pathname}${to.search}`, 303);
  };

  app.get('/auth/login', async (c) => {
    let config: oidc.Configuration;
    try {
      config = await configuration();
    } catch (err) {
      deps.logger.warn({ err, issuer: opts.issuer }, 'OIDC issuer discovery failed');
      return refuse(c, 'SignInUnavailable', 'the identity provider cannot be reached; try again shortly');
    }
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const pending: PendingLogin = { verifier, nonce, returnTo: safeReturnTo(c.req.query('returnTo')), redirectUri: redirectUriOf(c) };
    await deps.redis.set(loginKey(state), JSON.stringify(pending), 'EX', opts.loginTtlS);
    setCookie(c, LOGIN_COOKIE, state, { path: '/auth', httpOnly: true, sameSite: 'Lax', secure: secure(c), maxAge: opts.loginTtlS });
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: pending.redirectUri,
      scope: opts.scopes,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    c.header('cache-control', 'no-store');
    return c.redirect(url.href, 302);
  });

  app.get('/auth/callback', async (c) => {
    const state = c.req.query('state');
    const cookieState = getCookie(c, LOGIN_COOKIE);
    deleteCookie(c, LOGIN_COOKIE, { path: '/auth', secure: secure(c) });
    if (!state || state !== cookieState) return refuse(c, 'SignInExpired', 'this sign-in was not started in this browser, or took too long; sign in again');
    // one use: a replayed callback finds nothing
    const raw = await deps.redis.getdel(loginKey(state));
    if (raw === null) return refuse(c, 'SignInExpired', 'this sign-in took too long or was already used; sign in again');
    const pending = JSON.parse(raw) as PendingLogin;
    const issuerError = c.req.query('error');
    if (issuerError) return refuse(c, 'SignInFailed', `the identity provider answered ${issuerError.slice(0, 80)}`);
    let claims: Record<string, unknown>;
    try {
      const config = await configuration();
      // the callback URL as registered (behind a proxy the request's own URL may differ)
      const current = new URL(pending.redirectUri);
      current.search = new URL(c.req.url).search;
      const tokens = await oidc.authorizationCodeGrant(config, current, { pkceCodeVerifier: pending.verifier, expectedState: state, expectedNonce: pending.nonce, idTokenExpected: true });
      const idClaims = tokens.claims() as Record<string, unknown> | undefined;
      if (!idClaims) throw new Error('no ID token');
      // userinfo adds what the issuer keeps out of the ID token (many put groups only there)
      const info = config.serverMetadata().userinfo_endpoint ? await oidc.fetchUserInfo(config, tokens.access_token, idClaims.sub as string) : {};
      claims = { ...info, ...idClaims };
    } catch (err) {
      deps.logger.warn({ err: err instanceof Error ? { name: err.name, message: err.message } : String(err) }, 'OIDC code exchange failed');
      return refuse(c, 'SignInFailed', 'the identity provider did not confirm this sign-in; sign in again');
    }
    const judged = personFromClaims(claims, opts.mapping);
    if (!judged.ok) return refuse(c, 'SignInRefused', judged.reason);
    const person = judged.person;
    const token = await sessions.create(person, opts.sessionTtlS);
    setCookie(c, USER_SESSION_COOKIE, token, { path: '/', httpOnly: true, sameSite: 'Strict', secure: secure(c), maxAge: opts.sessionTtlS });
    await audit(c, 'session.signIn', person.tenant, person.id, 303, null);
    c.header('cache-control', 'no-store');
    return c.redirect(pending.returnTo, 303);
  });

  /** One audit row for a sign-in or sign-out (these routes are outside /v1's audit middleware). */
  async function audit(c: Context<AppEnv>, action: string, tenant: string, principal: string, status: number, errorCode: string | null): Promise<void> {
    const entry: AuditEntry = {
      tenant,
      principal,
      keyPrefix: null,
      action,
      resourceType: 'session',
      resourceId: null,
      requestId: c.req.header(REQUEST_ID_HEADER) ?? crypto.randomUUID(),
      clientAddress: clientAddress(c, o.principals),
      patch: null,
      rowId: null,
      claimed: false,
      closed: true,
    };
    try {
      await insertAuditRow(deps.pool, entry, status, errorCode);
      o.chainer.soon(tenant);
    } catch (err) {
      deps.logger.error({ err, action }, 'audit row not recorded');
    }
  }
}

const secure = (c: Context<AppEnv>) => new URL(c.req.url).protocol === 'https:';
