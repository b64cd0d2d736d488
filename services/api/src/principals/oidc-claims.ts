/**
 * How a person's OpenID Connect claims become a Flowline principal: one claim names them
 * (`user:<value>`), one names their tenant (or a fixed tenant stands in), and their groups
 * hold the union of the scopes OIDC_GROUP_SCOPES maps them to. Pure: the callback route
 * asks it after the issuer's tokens are verified.
 */
import { API_KEY_SCOPES, type ApiKeyScope } from '@flowline/runtime';

/** The claim mapping (the OIDC_* options). */
export interface ClaimMapping {
  userClaim: string;
  tenantClaim: string;
  /** the tenant when the token names none; null = refuse such a person */
  fixedTenant: string | null;
  groupsClaim: string;
  groupScopes: Readonly<Record<string, readonly ApiKeyScope[]>>;
}

/** A person as Flowline sees them. */
export interface SignedInPerson {
  id: string;
  tenant: string;
  scopes: ApiKeyScope[];
  groups: string[];
  name: string | null;
}

/** The longest claim value taken as a principal, tenant or group name. */
const MAX_CLAIM_CHARS = 200;

const text = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' && v.length <= MAX_CLAIM_CHARS ? v.trim() : null);

/** A groups claim as a list: an array of strings, or one string (some issuers send one group bare). */
function groupsOf(v: unknown): string[] {
  const list = Array.isArray(v) ? v : v === undefined || v === null ? [] : [v];
  return [...new Set(list.map(text).filter((g): g is string => g !== null))].sort();
}

/** The person the claims describe, or why they may not sign in (a message safe to show them). */
export function personFromClaims(claims: Readonly<Record<string, unknown>>, m: ClaimMapping): { ok: true; person: SignedInPerson } | { ok: false; reason: string } {
  const who = text(claims[m.userClaim]);
  if (who === null) return { ok: false, reason: `the identity token carries no '${m.userClaim}' claim to name you by` };
  const tenant = text(claims[m.tenantClaim]) ?? m.fixedTenant;
  if (tenant === null) return { ok: false, reason: `the identity token names no tenant (claim '${m.tenantClaim}')` };
  const groups = groupsOf(claims[m.groupsClaim]);
  const held = new Set<ApiKeyScope>();
  for (const g of groups) for (const s of m.groupScopes[g] ?? []) held.add(s);
  if (held.size === 0) return { ok: false, reason: groups.length === 0 ? 'you belong to no group that holds a Flowline scope' : `none of your groups (${groups.join(', ')}) holds a Flowline scope` };
  return {
    ok: true,
    person: {
      id: `user:${who}`,
      tenant,
      scopes: API_KEY_SCOPES.filter((s) => held.has(s)),
      groups,
      name: text(claims.name) ?? text(claims.preferred_username),
    },
  };
}
