import { HTTPException } from 'hono/http-exception';
import { describe, expect, it } from 'vitest';
import { EncryptedValueError } from '@flowline/db';
import type { ApiKeyGrant } from '@flowline/runtime';
import { DEFAULT_TENANT, createAuthenticator } from './auth';
import { GraphInvalidError, VersionConflictError, errorResponse } from './errors';
import { pageLimit, requireUuid } from './present';
import { pingKind } from './routes/stream';

describe('authenticator', () => {
  const tenantScopes = ['read', 'run', 'operate', 'define', 'keys', 'audit'];
  const auth = createAuthenticator(new Map<string, ApiKeyGrant | string>([['k1', 'tenantA'], ['k2', { tenant: 'tenantB', scopes: ['read'] }]]));
  const seen = (header: string | undefined) => {
    const p = auth(header);
    return p && { tenant: p.tenant, scopes: [...p.scopes] };
  };

  it('maps a bearer key to its tenant and scopes and refuses missing, unknown or malformed headers', () => {
    // a bare tenant grant holds every tenant scope, never admin (the queue UI sees every tenant)
    expect(seen('Bearer k1')).toEqual({ tenant: 'tenantA', scopes: tenantScopes });
    expect(seen('bearer k2')).toEqual({ tenant: 'tenantB', scopes: ['read'] });
    expect(auth(undefined)).toBeNull();
    expect(auth('Bearer nope')).toBeNull();
    expect(auth('Basic k1')).toBeNull();
    expect(auth('Bearer k1 extra')).toBeNull();
    // the key is compared exactly: padding makes another, unknown key
    expect(auth('Bearer  k1')).toBeNull();
    expect(auth('Bearer k1 ')).toBeNull();
    expect(auth('Bearer\tk1')).toBeNull();
    expect(auth('Bearer ')).toBeNull();
  });

  it('answers the default tenant with every scope, admin included, for every request when no keys are configured', () => {
    const p = createAuthenticator(null)(undefined);
    expect(p && { tenant: p.tenant, scopes: [...p.scopes] }).toEqual({ tenant: DEFAULT_TENANT, scopes: [...tenantScopes, 'admin'] });
  });
});

describe('error mapping', () => {
  it('puts GraphInvalid errors in details and warnings beside the error', () => {
    const { status, body } = errorResponse(new GraphInvalidError([{ key: 'a', message: 'bad' }], [{ key: null, message: 'hm' }]));
    expect(status).toBe(400);
    expect(body).toEqual({
      error: { code: 'GraphInvalid', message: expect.any(String), details: [{ key: 'a', message: 'bad' }] },
      warnings: [{ key: null, message: 'hm' }],
    });
  });

  it('maps typed errors by code and status, and hides unknown errors behind 500 Internal', () => {
    expect(errorResponse(new VersionConflictError(3))).toMatchObject({ status: 409, body: { error: { code: 'VersionConflict' } } });
    expect(errorResponse(new HTTPException(415))).toMatchObject({ status: 415, body: { error: { code: 'UnsupportedMediaType' } } });
    const unreadable = new EncryptedValueError({ table: 'runs', column: 'input', row: 'r1' }, 'authentication failed');
    expect(errorResponse(unreadable)).toEqual({
      status: 500,
      body: { error: { code: 'EncryptedValueUnreadable', message: unreadable.message, details: [{ table: 'runs', column: 'input', row: 'r1' }] } },
    });
    expect(errorResponse(new Error('secret detail'))).toEqual({ status: 500, body: { error: { code: 'Internal', message: 'internal error' } } });
  });
});

describe('request rules', () => {
  it('defaults the page limit to 50 and clamps it to 1..200', () => {
    expect(pageLimit(undefined)).toBe(50);
    expect(pageLimit(1000)).toBe(200);
    expect(pageLimit(0)).toBe(1);
    expect(pageLimit(17)).toBe(17);
  });

  it('answers 404 for an id that cannot be a uuid, before any query', () => {
    expect(() => requireUuid('abc', 'run')).toThrow(expect.objectContaining({ status: 404, code: 'NotFound' }));
    expect(requireUuid('0000000A-0000-4000-8000-000000000000', 'run')).toBe('0000000a-0000-4000-8000-000000000000');
  });

  it('maps event kinds to ping kinds', () => {
    expect(pingKind('run.created')).toBe('run');
    expect(pingKind('node.steer-ignored')).toBe('node');
    expect(pingKind('gate.decided')).toBe('gate');
  });
});
