/**
 * Browser sessions of the queue UI. A browser's navigation sends no bearer header, so an
 * operator signs in once: `GET /admin/session` is a form that POSTs the key in the body
 * (never the URL); `POST /admin/session` (the form, or `Authorization: Bearer`) checks the
 * key holds `admin` and sets an HttpOnly, SameSite=Strict cookie holding an opaque random
 * token. Redis keeps the token's digest → a reference to the key (never the key: the SHA-256
 * digest of a bootstrap key, the keyed hash of a managed one) for `ADMIN_SESSION_TTL_S`;
 * each request re-resolves that reference, so removing or revoking the key ends its
 * sessions. `DELETE /admin/session` ends one.
 */
import { randomBytes } from 'node:crypto';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { ForbiddenError, bearerKey, checkClientAddress, clientAddress, keyDigest, setPrincipal, type Principal } from '../auth';
import { principalResolverFor } from '../principals/resolver';
import type { AppDeps, AppEnv } from '../context';
import { PayloadTooLargeError, UnauthorizedError } from '../errors';

/** The session cookie's name (path `/admin`). */
export const ADMIN_SESSION_COOKIE = 'flowline_admin_session';
/** Where the sign-in form and the session live. */
export const ADMIN_SESSION_PATH = '/admin/session';
/** Default of ADMIN_SESSION_TTL_S: one hour. */
export const DEFAULT_ADMIN_SESSION_TTL_S = 3_600;
/** The sign-in body's cap (a key and a form field name). */
const MAX_SIGN_IN_BYTES = 4_096;

const LOGIN_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex">
<title>Flowline queues: sign in</title></head>
<body style="font-family:system-ui,sans-serif;max-width:28rem;margin:4rem auto">
<h1>Flowline queues</h1>
<form method="post" action="${ADMIN_SESSION_PATH}">
<label for="key">API key with the <code>admin</code> scope</label><br>
<input id="key" name="key" type="password" autocomplete="current-password" required style="width:100%">
<button type="submit">Sign in</button>
</form></body></html>`;

/** The Redis key of a session token (its digest: a Redis dump reveals no token). */
const sessionKey = (prefix: string, token: string) => `${prefix}:admin-session:${keyDigest(token)}`;

/** The key a sign-in presents, exactly as sent (nothing trimmed): the bearer header, else the form's `key` field. */
async function presentedKey(c: Context<AppEnv>): Promise<string | null> {
  const header = c.req.header('authorization');
  if (header !== undefined) return bearerKey(header);
  if (!(c.req.header('content-type') ?? '').startsWith('application/x-www-form-urlencoded')) return null;
  const key = new URLSearchParams(await c.req.text()).get('key');
  return key ? key : null;
}

/**
 * Registers the sign-in form and session routes; returns the resolver the queue UI's
 * middleware uses: the bearer header when present, else the session cookie. A form
 * sign-in lands on `landing`, the queue UI's own address.
 */
export function registerAdminSession(app: OpenAPIHono<AppEnv>, deps: AppDeps, landing: string): MiddlewareHandler<AppEnv> {
  const ttlS = deps.adminSessionTtlS ?? DEFAULT_ADMIN_SESSION_TTL_S;
  const principals = principalResolverFor(deps);
  const secure = (c: Context<AppEnv>) => new URL(c.req.url).protocol === 'https:';

  app.get(ADMIN_SESSION_PATH, (c) => {
    c.header('cache-control', 'no-store');
    c.header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'");
    return c.html(LOGIN_PAGE);
  });

  app.post(
    ADMIN_SESSION_PATH,
    bodyLimit({
      maxSize: MAX_SIGN_IN_BYTES,
      onError: () => {
        throw new PayloadTooLargeError(MAX_SIGN_IN_BYTES);
      },
    }),
    async (c) => {
      const key = await presentedKey(c);
      const principal = key === null ? null : await principals.resolve(key);
      if (key === null || principal === null) throw new UnauthorizedError();
      checkClientAddress(principal, clientAddress(c, principals));
      if (!principal.scopes.has('admin')) throw new ForbiddenError('admin');
      const token = randomBytes(32).toString('base64url');
      await deps.redis.set(sessionKey(deps.queuePrefix, token), principals.sessionRef(key, principal), 'EX', ttlS);
      setCookie(c, ADMIN_SESSION_COOKIE, token, {
        path: '/admin',
        httpOnly: true,
        sameSite: 'Strict',
        secure: secure(c),
        maxAge: ttlS,
      });
      c.header('cache-control', 'no-store');
      // the form lands on the UI; an API client gets no body
      return c.req.header('authorization') ? c.body(null, 204) : c.redirect(landing, 303);
    },
  );

  app.delete(ADMIN_SESSION_PATH, async (c) => {
    const token = getCookie(c, ADMIN_SESSION_COOKIE);
    if (token) await deps.redis.del(sessionKey(deps.queuePrefix, token));
    deleteCookie(c, ADMIN_SESSION_COOKIE, { path: '/admin', secure: secure(c) });
    return c.body(null, 204);
  });

  const bySession = async (token: string | undefined): Promise<Principal | null> => {
    const ref = token ? await deps.redis.get(sessionKey(deps.queuePrefix, token)) : null;
    return ref ? principals.fromSessionRef(ref) : null;
  };
  return async (c, next) => {
    const header = c.req.header('authorization');
    const principal: Principal | null =
      header !== undefined || deps.apiKeys === null ? await principals.resolve(bearerKey(header)) : await bySession(getCookie(c, ADMIN_SESSION_COOKIE));
    if (principal === null) throw new UnauthorizedError();
    checkClientAddress(principal, clientAddress(c, principals));
    setPrincipal(c, principal);
    await next();
  };
}
