/**
 * Bearer-key authentication: the key names the tenant every /v1 request is scoped to.
 * Without configured keys the API is single-tenant (`default`) and open.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { UnauthorizedError } from './errors';
import type { AppEnv } from './context';

/** The tenant of single-tenant mode. */
export const DEFAULT_TENANT = 'default';

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** Resolves `Authorization` headers to tenants. `keys` null = single-tenant, no auth. */
export function createAuthenticator(keys: ReadonlyMap<string, string> | null): (header: string | undefined) => string | null {
  if (keys === null) return () => DEFAULT_TENANT;
  const table = [...keys].map(([key, tenant]) => ({ hash: digest(key), tenant }));
  return (header) => {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
    if (!m?.[1]) return null;
    const h = digest(m[1]);
    let found: string | null = null;
    // compares against every key (constant time per key) so timing does not reveal which matched
    for (const row of table) if (timingSafeEqual(row.hash, h)) found = row.tenant;
    return found;
  };
}

/** Sets `tenant` on the context or answers 401. */
export function authMiddleware(resolve: (header: string | undefined) => string | null): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const tenant = resolve(c.req.header('authorization'));
    if (tenant === null) throw new UnauthorizedError();
    c.set('tenant', tenant);
    await next();
  };
}
