/**
 * Bearer-key authentication and scopes (CONTRACT §8): the key names the tenant every /v1
 * request is scoped to and the scopes it holds. No or unknown key → 401 (always first);
 * a key without the route's scope ({@link ROUTE_SCOPES}) → 403 `Forbidden`; another
 * tenant's resource → 404 (the routes' tenant-scoped reads). Without configured keys the
 * API is single-tenant (`default`), open, and every request holds every scope (`admin`
 * included: the queue UI is as open as the rest of that API). A bare tenant grant holds
 * the tenant scopes only; `admin` is held only when a key's entry names it.
 *
 * Two kinds of key authenticate: the bootstrap keys of API_KEYS (principal `key:<digest16>`,
 * compared in constant time against every entry) and managed keys stored in Postgres
 * (`fl_…`, principal `service:<key id>`, resolved through the replica's cache:
 * principals/managed-keys.ts). Managed keys count only when API_KEYS is set: an open server
 * stays open. A managed key may carry constraints (its definitions, its client networks)
 * and an expiry; a request from outside its networks answers 403 `KeyConstraint` here, and
 * its definitions are judged per route (principals/key-constraints.ts).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { API_KEY_SCOPES, TENANT_SCOPES, type ApiKeyGrant, type ApiKeyScope } from '@flowline/runtime';
import { ApiError, KeyConstraintError, UnauthorizedError } from './errors';
import type { AppEnv } from './context';
import { cidrSet, clientAddressOf, MANAGED_KEY_PREFIX, type CidrSet } from './principals/key-secret';
import type { ManagedKey, ManagedKeys } from './principals/managed-keys';
import { USER_SESSION_COOKIE, type UserSessions } from './principals/user-sessions';
import { ErrorSchema, jsonContent } from './schemas';
import { ROUTE_SCOPES, routeName, scopedRoutes } from './route-scopes';

/** The tenant of single-tenant mode. */
export const DEFAULT_TENANT = 'default';

/** key → grant; a bare string is a tenant whose key holds every tenant scope (not `admin`). */
export type ApiKeyTable = ReadonlyMap<string, ApiKeyGrant | string>;

/** Who a request (or socket) acts as. */
export interface Principal {
  /** `service:<key id>` (managed key), `key:<digest16>` ({@link principalIdOf}, API_KEYS entry) or `anonymous` */
  id: string;
  tenant: string;
  scopes: ReadonlySet<ApiKeyScope>;
  /** a managed key's identity and limits; absent for API_KEYS entries and anonymous */
  managed?: ManagedPrincipal;
  /** the groups a signed-in person's issuer gave (approval quorums by group); absent for keys */
  groups?: readonly string[];
  /** a person signed in through OpenID Connect (principal `user:…`); absent for keys */
  user?: { name: string | null; sessionExpiresAt: string };
}

/** What a managed key's principal carries beyond its scopes. */
export interface ManagedPrincipal {
  keyId: string;
  /** the recognisable start of the key's current secret (what the audit log and key lists show) */
  prefix: string;
  /** the definitions whose runs it may touch; null = any */
  definitionIds: ReadonlySet<string> | null;
  /** the client networks it may be used from; null = anywhere */
  cidrs: CidrSet | null;
  expiresAt: Date | null;
}

/** A managed key's principal id. */
export const servicePrincipalId = (keyId: string): string => `service:${keyId}`;

/** The principal of every request in single-tenant mode without keys. */
export const ANONYMOUS_PRINCIPAL = 'anonymous';

/**
 * A key's principal id: `key:` and the first 16 hex digits of its SHA-256 digest — stable while
 * the key lives, never the key itself (a digest prefix cannot be turned back into it).
 */
export const principalIdOf = (digestHex: string): string => `key:${digestHex.slice(0, 16)}`;

const ALL_SCOPES: ReadonlySet<ApiKeyScope> = new Set(API_KEY_SCOPES);
const TENANT_SCOPE_SET: ReadonlySet<ApiKeyScope> = new Set(TENANT_SCOPES);

/** A key that authenticates but lacks the scope the route (or live event) needs. */
export class ForbiddenError extends ApiError {
  constructor(scope: ApiKeyScope) {
    super(403, 'Forbidden', forbiddenMessage(scope));
  }
}

/** The message of a refusal for want of `scope` (HTTP 403 and live acks alike). */
export function forbiddenMessage(scope: ApiKeyScope): string {
  return `this key lacks the '${scope}' scope`;
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/**
 * Resolves a key's SHA-256 digest (hex) to its principal in `keys` — a browser session of
 * the queue UI stores the digest, never the key, and is ended by removing the key.
 */
export function createDigestResolver(keys: ApiKeyTable | null): (digestHex: string) => Principal | null {
  const byDigest = new Map<string, Principal>();
  for (const [key, grant] of keys ?? []) {
    const d = keyDigest(key);
    byDigest.set(d, { id: principalIdOf(d), ...(typeof grant === 'string' ? { tenant: grant, scopes: TENANT_SCOPE_SET } : { tenant: grant.tenant, scopes: new Set(grant.scopes) }) });
  }
  return (digestHex) => byDigest.get(digestHex) ?? null;
}

/** The SHA-256 digest (hex) of a key or token: what is stored in its place. */
export const keyDigest = (key: string): string => digest(key).toString('hex');

/**
 * The key of an `Authorization: Bearer <key>` header exactly as sent: the scheme's name is
 * case-insensitive (RFC 9110), then one space, then the key with nothing trimmed. A key
 * padded with whitespace is another key (unknown), so a key is accepted in one spelling
 * only. Null when the header is absent, empty or of another scheme.
 */
export function bearerKey(header: string | undefined): string | null {
  if (header === undefined || header.length <= BEARER.length || header.slice(0, BEARER.length).toLowerCase() !== BEARER) return null;
  return header.slice(BEARER.length);
}
const BEARER = 'bearer ';

/**
 * Resolves a presented key (a bearer header's, a live handshake's, a sign-in form's) to its
 * principal, comparing it exactly. `keys` null = single-tenant, no auth: every request is
 * the default tenant's.
 */
export function createKeyResolver(keys: ApiKeyTable | null): (key: string | null) => Principal | null {
  if (keys === null) {
    const open: Principal = { id: ANONYMOUS_PRINCIPAL, tenant: DEFAULT_TENANT, scopes: ALL_SCOPES };
    return () => open;
  }
  const table = [...keys].map(([key, grant]) => ({
    hash: digest(key),
    principal: {
      id: principalIdOf(keyDigest(key)),
      ...(typeof grant === 'string' ? { tenant: grant, scopes: TENANT_SCOPE_SET } : { tenant: grant.tenant, scopes: new Set(grant.scopes) }),
    } as Principal,
  }));
  return (key) => {
    if (key === null || key === '') return null;
    const h = digest(key);
    let found: Principal | null = null;
    // compares against every key (constant time per key) so timing does not reveal which matched
    for (const row of table) if (timingSafeEqual(row.hash, h)) found = row.principal;
    return found;
  };
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A change made with a session cookie but without the console's `x-flowline-client` header. */
export class CrossSiteRefusedError extends ApiError {
  constructor() {
    super(403, 'CrossSiteRefused', 'a change made with a sign-in session must send the x-flowline-client header');
  }
}

/** Resolves `Authorization` headers to principals by the bootstrap keys only. `keys` null = single-tenant, no auth. */
export function createAuthenticator(keys: ApiKeyTable | null): (header: string | undefined) => Principal | null {
  const byKey = createKeyResolver(keys);
  return (header) => byKey(bearerKey(header));
}

/** Every kind of key to its principal: what HTTP, the live channel and the queue UI's sign-in share. */
export interface PrincipalResolver {
  /** the principal of a presented key (exactly as sent), or null: unknown, revoked, expired */
  resolve(key: string | null): Promise<Principal | null>;
  /**
   * What a browser session stores in place of `key`: its SHA-256 digest for a bootstrap key,
   * `m:` and its keyed hash for a managed one — never the key.
   */
  sessionRef(key: string, principal: Principal): string;
  /** the principal a {@link sessionRef} stands for now (null once the key is removed or revoked) */
  fromSessionRef(ref: string): Promise<Principal | null>;
  /** the managed keys (null without a pepper or without API_KEYS) */
  readonly managed: ManagedKeys | null;
  /** the client's address from the TCP peer and its X-Forwarded-For (believed from TRUSTED_PROXIES only) */
  clientAddress(peer: string | null, forwardedFor: string | undefined): string | null;
}

const principals = new WeakMap<ManagedKey, Principal>();

/** A managed key's principal (one object per resolved copy of the key). */
export function principalOfManagedKey(found: ManagedKey): Principal {
  let p = principals.get(found);
  if (!p) {
    const k = found.key;
    p = {
      id: servicePrincipalId(k.id),
      tenant: k.tenantId,
      scopes: new Set(orderedScopes(k.scopes)),
      managed: {
        keyId: k.id,
        prefix: k.prefix,
        definitionIds: k.definitionIds ? new Set(k.definitionIds) : null,
        cidrs: k.cidrs ? cidrSet(k.cidrs) : null,
        expiresAt: k.expiresAt,
      },
    };
    principals.set(found, p);
  }
  return p;
}

/** Scopes as stored or answered: in {@link API_KEY_SCOPES} order. */
export const orderedScopes = (held: Iterable<string>): ApiKeyScope[] => {
  const set = new Set(held);
  return API_KEY_SCOPES.filter((s) => set.has(s));
};

const MANAGED_REF = 'm:';

/**
 * The resolver of bootstrap keys (`keys`) and, when API_KEYS is set, managed keys. A key is
 * first compared against every bootstrap key, then — when it looks like a managed key — looked
 * up by its keyed hash.
 */
export function createPrincipalResolver(keys: ApiKeyTable | null, managedKeys: ManagedKeys | null, trustedProxies: readonly string[] = []): PrincipalResolver {
  const trusted = trustedProxies.length > 0 ? cidrSet(trustedProxies) : null;
  const byKey = createKeyResolver(keys);
  const byDigest = createDigestResolver(keys);
  const managed = keys !== null && managedKeys?.enabled ? managedKeys : null;
  const byHash = async (hash: string) => {
    const found = managed ? await managed.resolveHash(hash) : null;
    return found ? principalOfManagedKey(found) : null;
  };
  return {
    managed,
    clientAddress: (peer, forwardedFor) => clientAddressOf(peer, forwardedFor, trusted),
    async resolve(key) {
      const fixed = byKey(key);
      if (fixed !== null || key === null || managed === null || !key.startsWith(MANAGED_KEY_PREFIX)) return fixed;
      return byHash(managed.hash(key));
    },
    sessionRef: (key, principal) => (principal.managed && managed ? `${MANAGED_REF}${managed.hash(key)}` : keyDigest(key)),
    fromSessionRef: async (ref) => (ref.startsWith(MANAGED_REF) ? byHash(ref.slice(MANAGED_REF.length)) : byDigest(ref)),
  };
}

/** The request's client address (null when unknown, e.g. `app.request` in tests): see {@link PrincipalResolver.clientAddress}. */
export function clientAddress(c: Context<AppEnv>, resolver: PrincipalResolver): string | null {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  return resolver.clientAddress(env?.incoming?.socket?.remoteAddress ?? null, c.req.header('x-forwarded-for'));
}

/**
 * Refuses a managed key used from outside its networks (403 `KeyConstraint`); an unknown
 * address is outside every network.
 */
export function checkClientAddress(principal: Principal, address: string | null): void {
  const cidrs = principal.managed?.cidrs;
  if (cidrs && !cidrs.has(address)) throw new KeyConstraintError('this key may not be used from this client address');
}

/** Puts the principal on the context: `tenant`, `scopes`, `principal`. */
export function setPrincipal(c: Context<AppEnv>, principal: Principal): void {
  c.set('tenant', principal.tenant);
  c.set('scopes', principal.scopes);
  c.set('principal', principal);
}

/**
 * Authenticates the request (401) by its bearer key or, without one, by a person's sign-in
 * session cookie (when single sign-on is on); refuses a managed key from outside its networks
 * and a session's change without the console's header (403); puts the principal on the
 * context and notes the key's use.
 */
export function authMiddleware(resolver: PrincipalResolver, sessions: UserSessions | null = null): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const header = c.req.header('authorization');
    const cookie = header === undefined && sessions !== null ? getCookie(c, USER_SESSION_COOKIE) : undefined;
    const principal = cookie !== undefined ? await sessions!.resolve(cookie) : await resolver.resolve(bearerKey(header));
    if (principal === null) throw new UnauthorizedError(cookie !== undefined ? 'the sign-in session has ended; sign in again' : undefined);
    // a cookie rides along with any request the browser makes, a custom header does not: a
    // change made with a session must carry the console's header (a cross-site form cannot)
    if (cookie !== undefined && !SAFE_METHODS.has(c.req.method) && c.req.header('x-flowline-client') === undefined) throw new CrossSiteRefusedError();
    const address = clientAddress(c, resolver);
    checkClientAddress(principal, address);
    setPrincipal(c, principal);
    if (principal.managed) resolver.managed?.noteUse(principal.managed.keyId, address);
    await next();
  };
}

/** The per-route checks (scopes, key constraints) installed on route paths, told apart from route handlers. */
const scopeChecks = new WeakSet<object>();

/** Marks `check`, installed on a route's method and path, as a check rather than the route itself. */
export function routeCheck<T extends object>(check: T): T {
  scopeChecks.add(check);
  return check;
}

/** Answers 403 unless the authenticated key holds `scope`. */
export function requireScope(scope: ApiKeyScope): MiddlewareHandler<AppEnv> {
  const check: MiddlewareHandler<AppEnv> = async (c, next) => {
    if (!c.get('scopes').has(scope)) throw new ForbiddenError(scope);
    await next();
  };
  scopeChecks.add(check);
  return check;
}

/**
 * Installs one scope check per {@link ROUTE_SCOPES} entry, matched by Hono's router on
 * the same method and path as the route. Call after the auth middleware (401 comes
 * first) and before the body limit and the routes (a 403 reads no body).
 */
export function installScopeChecks(app: OpenAPIHono<AppEnv>): void {
  for (const r of scopedRoutes()) app.on(r.method, r.honoPath, requireScope(r.scope));
}

/**
 * The mismatches between the registered routes and {@link ROUTE_SCOPES}: /v1 routes
 * without an entry (they would answer without a scope check) and entries naming no route.
 * Empty when every keyed route declares its scope.
 */
export function scopeTableMismatches(app: OpenAPIHono<AppEnv>): { unscoped: string[]; unrouted: string[] } {
  const registered = new Set(
    app.routes
      .filter((r) => r.method !== 'ALL' && r.path.startsWith('/v1/') && !scopeChecks.has(r.handler))
      .map((r) => routeName(r.method, r.path)),
  );
  const declared = new Set(Object.keys(ROUTE_SCOPES));
  return {
    unscoped: [...registered].filter((r) => !declared.has(r)).sort(),
    unrouted: [...declared].filter((r) => !registered.has(r)).sort(),
  };
}

/** Throws (the app is not built) when {@link scopeTableMismatches} finds any. */
export function assertEveryRouteScoped(app: OpenAPIHono<AppEnv>): void {
  const { unscoped, unrouted } = scopeTableMismatches(app);
  if (unscoped.length > 0 || unrouted.length > 0) {
    throw new Error(
      `ROUTE_SCOPES does not match the routes: without a scope [${unscoped.join(', ')}], naming no route [${unrouted.join(', ')}]`,
    );
  }
}

/**
 * Writes each keyed route's scope into the OpenAPI document: its security requirement
 * becomes `bearer: [<scope>]` (OpenAPI 3.1 role names) and it gains the 403 answer.
 */
export function documentScopes(app: OpenAPIHono<AppEnv>): void {
  const scopes: Record<string, ApiKeyScope> = ROUTE_SCOPES;
  for (const def of app.openAPIRegistry.definitions) {
    if (def.type !== 'route') continue;
    const scope = scopes[routeName(def.route.method, def.route.path)];
    if (scope === undefined) continue;
    def.route.security = [{ bearer: [scope] }];
    def.route.responses = {
      ...def.route.responses,
      403: jsonContent(ErrorSchema, `Forbidden: the key lacks the '${scope}' scope`),
    };
    def.route.description = [def.route.description, `Needs a key with the \`${scope}\` scope.`].filter(Boolean).join('\n\n');
  }
}
