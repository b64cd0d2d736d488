import { describe, expect, it } from 'vitest';
import type { Webhook } from '@flowline/client';
import { createBody, rotationBody, verificationOf, type HookForm } from './hook-body';

const form = (over: Partial<HookForm>): HookForm => ({
  slug: '',
  target: { kind: 'definition', definitionId: 'd1' },
  verification: 'standardWebhooks',
  secret: '',
  custom: { header: 'x-signature', algorithm: 'sha256', encoding: 'hex', prefix: '' },
  ...over,
});

const hook: Webhook = {
  id: 'h1',
  slug: 'orders',
  url: 'http://x/hooks/acme/orders',
  target: { definitionId: 'd1' },
  auth: { type: 'hmac', preset: 'github', secrets: [{ id: 'primary', notAfter: null }] },
  dedupeHeader: 'x-github-delivery',
  maxBodyBytes: 1000,
  response: { mode: 'async', timeoutMs: 10_000 },
  version: 1,
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:00Z',
};

describe('createBody', () => {
  it('leaves the secret out when blank (the server generates it) and the slug out when blank', () => {
    expect(createBody(form({}))).toEqual({ target: { definitionId: 'd1' }, auth: { type: 'hmac', preset: 'standardWebhooks', secrets: [{ id: 'primary' }] } });
  });

  it('sends a typed secret, a bearer hook and a hook without verification', () => {
    expect(createBody(form({ verification: 'bearer', secret: ' s3cret-s3cret-s3cret ', slug: 'a' }))).toEqual({
      slug: 'a',
      target: { definitionId: 'd1' },
      auth: { type: 'bearer', secrets: [{ id: 'primary', value: 's3cret-s3cret-s3cret' }] },
    });
    expect(createBody(form({ verification: 'none', target: { kind: 'event', event: ' push ' } }))).toEqual({ target: { event: 'push' }, auth: { type: 'none' } });
  });

  it("sends a custom HMAC's header, algorithm, encoding and prefix", () => {
    const b = createBody(form({ verification: 'custom', custom: { header: 'x-sig', algorithm: 'sha512', encoding: 'base64', prefix: 'v1=' } }));
    expect(b.auth).toEqual({ type: 'hmac', preset: 'custom', secrets: [{ id: 'primary' }], header: 'x-sig', algorithm: 'sha512', encoding: 'base64', prefix: 'v1=' });
  });
});

describe('rotationBody', () => {
  it('keeps the current secrets by id (no value: the stored one stays), ends them, and adds the new one', () => {
    expect(rotationBody(hook, { newId: 'next', value: '', oldNotAfter: '2030-01-01T00:00:00.000Z' })).toEqual({
      slug: 'orders',
      target: { definitionId: 'd1' },
      auth: { type: 'hmac', preset: 'github', secrets: [{ id: 'primary', notAfter: '2030-01-01T00:00:00.000Z' }, { id: 'next' }] },
      dedupeHeader: 'x-github-delivery',
      maxBodyBytes: 1000,
      response: { mode: 'async', timeoutMs: 10_000 },
    });
  });

  it('keeps an old secret open-ended when no end is chosen, and sends a typed new value', () => {
    expect(rotationBody(hook, { newId: 'next', value: 'typed-value-0123456789', oldNotAfter: null }).auth).toMatchObject({
      secrets: [{ id: 'primary', notAfter: null }, { id: 'next', value: 'typed-value-0123456789' }],
    });
  });
});

describe('verificationOf', () => {
  it('reads a preset, a bearer hook and one without verification', () => {
    expect(verificationOf(hook)).toBe('github');
    expect(verificationOf({ auth: { type: 'bearer' } })).toBe('bearer');
    expect(verificationOf({ auth: { type: 'none' } })).toBe('none');
  });
});
