import { describe, expect, it } from 'vitest';
import { parseGroupScopes } from '@flowline/runtime';
import { personFromClaims, type ClaimMapping } from './oidc-claims';

const groupScopes = (() => {
  const r = parseGroupScopes('ops:*+admin,finance:read+run,viewers:read,eu:west:operate');
  if (!r.ok) throw new Error(r.message);
  return r.map;
})();
const mapping: ClaimMapping = { userClaim: 'email', tenantClaim: 'flowline_tenant', fixedTenant: null, groupsClaim: 'groups', groupScopes };

describe('personFromClaims', () => {
  it('names the person by the user claim, takes the tenant claim and unions the scopes of their groups', () => {
    const r = personFromClaims({ email: 'ana@example.com', name: 'Ana', flowline_tenant: 'acme', groups: ['viewers', 'finance', 'unmapped'] }, mapping);
    expect(r).toEqual({ ok: true, person: { id: 'user:ana@example.com', tenant: 'acme', scopes: ['read', 'run'], groups: ['finance', 'unmapped', 'viewers'], name: 'Ana' } });
  });

  it('maps * to every tenant scope and admin only when named; a group name may hold a colon', () => {
    const ops = personFromClaims({ email: 'o@x', flowline_tenant: 'acme', groups: ['ops'] }, mapping);
    expect(ops.ok && ops.person.scopes).toEqual(['read', 'run', 'operate', 'define', 'keys', 'audit', 'admin']);
    const eu = personFromClaims({ email: 'e@x', flowline_tenant: 'acme', groups: 'eu:west' }, mapping);
    expect(eu.ok && eu.person.scopes).toEqual(['operate']);
  });

  it('refuses a token without the user claim, without a tenant, or whose groups hold no scope', () => {
    expect(personFromClaims({ flowline_tenant: 'acme', groups: ['ops'] }, mapping)).toEqual({ ok: false, reason: expect.stringContaining("'email'") });
    expect(personFromClaims({ email: 'a@x', groups: ['ops'] }, mapping)).toEqual({ ok: false, reason: expect.stringContaining('no tenant') });
    expect(personFromClaims({ email: 'a@x', flowline_tenant: 'acme', groups: ['nobody'] }, mapping)).toEqual({ ok: false, reason: expect.stringContaining('nobody') });
    expect(personFromClaims({ email: 'a@x', flowline_tenant: 'acme' }, mapping)).toEqual({ ok: false, reason: expect.stringContaining('no group') });
  });

  it('uses the fixed tenant when the token names none, and ignores non-string and oversized values', () => {
    const r = personFromClaims({ email: 'a@x', groups: ['viewers', 7, 'x'.repeat(500)] }, { ...mapping, fixedTenant: 'solo' });
    expect(r).toEqual({ ok: true, person: { id: 'user:a@x', tenant: 'solo', scopes: ['read'], groups: ['viewers'], name: null } });
    expect(personFromClaims({ email: 'a'.repeat(201), flowline_tenant: 'acme', groups: ['ops'] }, mapping).ok).toBe(false);
  });
});

describe('parseGroupScopes', () => {
  it('refuses malformed entries, unknown scopes and repeated groups, naming the entry', () => {
    expect(parseGroupScopes('ops')).toEqual({ ok: false, message: 'entry 1 must be group:scope+scope' });
    expect(parseGroupScopes('a:read,b:fly')).toEqual({ ok: false, message: expect.stringMatching(/^entry 2 names an unknown scope/) });
    expect(parseGroupScopes('a:read,a:run')).toEqual({ ok: false, message: "entry 2 repeats the group 'a'" });
    expect(parseGroupScopes('a:read+')).toEqual({ ok: false, message: 'entry 1 must be group:scope+scope' });
    expect(parseGroupScopes('')).toEqual({ ok: true, map: {} });
  });
});
