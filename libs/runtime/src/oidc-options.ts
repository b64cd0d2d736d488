/**
 * People signing in to the console through OpenID Connect (the API's /auth routes): the
 * issuer, the client, and how a person's claims become a Flowline principal — which claim
 * names them, which names their tenant, and which of their groups hold which scopes.
 */
import { z } from 'zod';
import { API_KEY_SCOPES, TENANT_SCOPES, type ApiKeyScope } from './options';

const int = () => z.coerce.number().int();

const isScope = (s: string): s is ApiKeyScope => (API_KEY_SCOPES as readonly string[]).includes(s);

/**
 * Parses OIDC_GROUP_SCOPES (`ops:*+admin,finance:read+run+operate,viewers:read`) into group →
 * scopes. The group is everything before the last `:` (group names may hold colons), `*` is
 * every tenant scope, `admin` only when named — as in API_KEYS.
 */
export function parseGroupScopes(raw: string): { ok: true; map: Record<string, ApiKeyScope[]> } | { ok: false; message: string } {
  const map: Record<string, ApiKeyScope[]> = {};
  const entries = raw.split(',').map((e) => e.trim()).filter(Boolean);
  for (const [i, entry] of entries.entries()) {
    const cut = entry.lastIndexOf(':');
    const group = cut > 0 ? entry.slice(0, cut).trim() : '';
    const named = cut > 0 ? entry.slice(cut + 1).split('+').map((s) => s.trim()) : [];
    if (group === '' || named.length === 0 || named.some((s) => s === '')) return { ok: false, message: `entry ${i + 1} must be group:scope+scope` };
    if (!named.every((s) => s === '*' || isScope(s))) {
      return { ok: false, message: `entry ${i + 1} names an unknown scope (scopes: ${API_KEY_SCOPES.join(', ')}, or * for ${TENANT_SCOPES.join(', ')})` };
    }
    if (map[group] !== undefined) return { ok: false, message: `entry ${i + 1} repeats the group '${group}'` };
    const held = new Set<string>(named.includes('*') ? [...named, ...TENANT_SCOPES] : named);
    map[group] = API_KEY_SCOPES.filter((s) => held.has(s));
  }
  return { ok: true, map };
}

const groupScopes = z
  .string()
  .default('')
  .transform((raw, ctx) => {
    const parsed = parseGroupScopes(raw);
    if (!parsed.ok) {
      ctx.addIssue({ code: 'custom', message: parsed.message });
      return z.NEVER;
    }
    return parsed.map;
  })
  .describe(
    "which scopes a signed-in person's groups hold: group:scope+scope entries, comma-separated (e.g. ops:*,finance:read+run,viewers:read; * = read+run+operate+define+keys+audit, admin only when named); a person holds the union of their groups' scopes, and one whose groups map to none is refused sign-in",
  );

/** OIDC sign-in of the console (services/api routes/oidc.ts). Unset OIDC_ISSUER: sign-in by key only. */
export const oidcOptions = {
  OIDC_ISSUER: z
    .string()
    .url()
    .optional()
    .describe('OpenID Connect issuer URL (its /.well-known/openid-configuration is read at the first sign-in); unset = the console signs in with API keys only. Needs API_KEYS (the bootstrap key) and OIDC_CLIENT_ID'),
  OIDC_CLIENT_ID: z.string().min(1).optional().describe("the console's client id at the issuer"),
  OIDC_CLIENT_SECRET: z
    .string()
    .min(1)
    .optional()
    .describe('the client secret (client_secret_basic); unset = a public client (PKCE alone) (secret)'),
  OIDC_REDIRECT_URL: z
    .string()
    .url()
    .optional()
    .describe("the callback URL registered at the issuer; unset = PUBLIC_URL (else the request's origin) + /auth/callback"),
  OIDC_SCOPES: z.string().min(1).default('openid email profile').describe('scopes asked of the issuer (space-separated; must include openid)'),
  OIDC_USER_CLAIM: z
    .string()
    .min(1)
    .default('email')
    .describe("the ID token claim naming the person: their principal is user:<value> (what runs, approvals and the audit log show); a token without it is refused"),
  OIDC_TENANT_CLAIM: z.string().min(1).default('flowline_tenant').describe('the claim naming the tenant a person acts in'),
  OIDC_TENANT: z
    .string()
    .min(1)
    .optional()
    .describe('the tenant of people whose token has no OIDC_TENANT_CLAIM (one-tenant installs); unset = such a person is refused'),
  OIDC_GROUPS_CLAIM: z.string().min(1).default('groups').describe("the claim listing a person's groups (an array of strings, or one string)"),
  OIDC_GROUP_SCOPES: groupScopes,
  OIDC_SESSION_TTL_S: int()
    .min(60)
    .max(30 * 86_400)
    .default(28_800)
    .describe('lifetime of a signed-in session (its HttpOnly cookie and its Redis entry), s; groups and scopes are read again at the next sign-in'),
  OIDC_LOGIN_TTL_S: int()
    .min(30)
    .max(3_600)
    .default(600)
    .describe('how long a sign-in begun at the issuer may take before its callback is refused, s'),
};

/** The cross-option rule of {@link oidcOptions}: an issuer needs a client and the bootstrap keys. */
export function oidcIssue(v: Record<string, unknown>): { path: string; message: string } | null {
  if (v.OIDC_ISSUER === undefined) return null;
  if (v.OIDC_CLIENT_ID === undefined) return { path: 'OIDC_CLIENT_ID', message: 'is required when OIDC_ISSUER is set' };
  if (v.API_KEYS === undefined) {
    return { path: 'OIDC_ISSUER', message: 'needs API_KEYS: without keys the API is open (single tenant, no authentication), so there is nobody to sign in as' };
  }
  if (typeof v.OIDC_ISSUER === 'string' && !secureOrLoopback(v.OIDC_ISSUER)) return { path: 'OIDC_ISSUER', message: 'must be https (plain http only for a loopback issuer: localhost, 127.0.0.1, ::1)' };
  if (typeof v.OIDC_SCOPES === 'string' && !v.OIDC_SCOPES.split(/\s+/).includes('openid')) return { path: 'OIDC_SCOPES', message: "must include 'openid'" };
  return null;
}

/** https, or http on a loopback host (development and tests). */
function secureOrLoopback(url: string): boolean {
  try {
    const u = new URL(url);
    return u.protocol === 'https:' || (u.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(u.hostname));
  } catch {
    return false;
  }
}
