/**
 * Sessions of people signed in through OpenID Connect. A session is an opaque random token in
 * an HttpOnly, SameSite=Strict cookie; Redis keeps, under the token's digest (a Redis dump
 * reveals no token), the principal it stands for — `user:<claim>`, tenant, scopes, groups,
 * display name — until OIDC_SESSION_TTL_S. Scopes and groups are fixed at sign-in: a change at
 * the issuer applies at the next sign-in. Signing out deletes the entry, so the cookie is dead
 * on every replica at once.
 */
import { createHash, randomBytes } from 'node:crypto';
import { API_KEY_SCOPES, type ApiKeyScope } from '@flowline/runtime';
import type { RedisConnection } from '@flowline/queue';
import type { Principal } from '../auth';

/** The session cookie's name (path `/`: the console, /v1 and the live channel all read it). */
export const USER_SESSION_COOKIE = 'flowline_session';

/** What a session stands for (stored as JSON). */
interface StoredSession {
  id: string;
  tenant: string;
  scopes: ApiKeyScope[];
  groups: string[];
  name: string | null;
  expiresAt: string;
}

const isScope = (s: unknown): s is ApiKeyScope => typeof s === 'string' && (API_KEY_SCOPES as readonly string[]).includes(s);

/** The sessions of one cluster (its Redis prefix). */
export class UserSessions {
  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
  ) {}

  private keyOf(token: string): string {
    return `${this.prefix}:user-session:${createHash('sha256').update(token, 'utf8').digest('hex')}`;
  }

  /** Starts a session for `principal`; answers its token (the cookie's value). */
  async create(principal: { id: string; tenant: string; scopes: readonly ApiKeyScope[]; groups: readonly string[]; name: string | null }, ttlS: number): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    const stored: StoredSession = {
      id: principal.id,
      tenant: principal.tenant,
      scopes: [...principal.scopes],
      groups: [...principal.groups],
      name: principal.name,
      expiresAt: new Date(Date.now() + ttlS * 1000).toISOString(),
    };
    await this.redis.set(this.keyOf(token), JSON.stringify(stored), 'EX', ttlS);
    return token;
  }

  /** The principal of a live session, or null (unknown, ended or expired token). */
  async resolve(token: string | undefined | null): Promise<Principal | null> {
    if (!token || token.length > 200) return null;
    const raw = await this.redis.get(this.keyOf(token));
    if (raw === null) return null;
    let s: StoredSession;
    try {
      s = JSON.parse(raw) as StoredSession;
    } catch {
      return null;
    }
    return {
      id: s.id,
      tenant: s.tenant,
      scopes: new Set(Array.isArray(s.scopes) ? s.scopes.filter(isScope) : []),
      groups: Array.isArray(s.groups) ? s.groups.filter((g) => typeof g === 'string') : [],
      user: { name: typeof s.name === 'string' ? s.name : null, sessionExpiresAt: s.expiresAt },
    };
  }

  /** Ends a session (idempotent). */
  async end(token: string | undefined | null): Promise<void> {
    if (token && token.length <= 200) await this.redis.del(this.keyOf(token));
  }
}
