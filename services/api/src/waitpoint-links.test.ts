import { describe, expect, it } from 'vitest';
import { callbackUrl, verifyWaitpointSignature, waitpointSignature, waitpointSigningKey } from './waitpoint-links';

describe('waitpoint callback links', () => {
  const { key } = waitpointSigningKey({ signingKey: 'k'.repeat(32) });

  it('signs a token id so only the same key verifies it, and builds the URL on PUBLIC_URL or the request origin', () => {
    const sig = waitpointSignature(key, 'a');
    expect(verifyWaitpointSignature(key, 'a', sig)).toBe(true);
    expect(verifyWaitpointSignature(key, 'b', sig)).toBe(false);
    expect(verifyWaitpointSignature(waitpointSigningKey({ signingKey: 'x'.repeat(32) }).key, 'a', sig)).toBe(false);
    expect(verifyWaitpointSignature(key, 'a', `${sig}x`)).toBe(false);
    expect(callbackUrl({ key, publicUrl: 'https://hooks.example/' }, 'http://internal:3000/v1/x', 'a')).toBe(`https://hooks.example/w/a/${sig}`);
    expect(callbackUrl({ key, publicUrl: null }, 'http://internal:3000/v1/x?y=1', 'a')).toBe(`http://internal:3000/w/a/${sig}`);
  });

  it('derives the key from WAITPOINT_SIGNING_KEY, else ENCRYPTION_KEY, else API_KEYS (order-free), naming the source', () => {
    expect(waitpointSigningKey({ signingKey: 's'.repeat(32), encryptionKey: 'e' }).source).toBe('WAITPOINT_SIGNING_KEY');
    expect(waitpointSigningKey({ encryptionKey: 'e', apiKeys: ['a'] }).source).toBe('ENCRYPTION_KEY');
    const ab = waitpointSigningKey({ apiKeys: ['a', 'b'] });
    expect(ab.source).toBe('API_KEYS');
    expect(ab.key.equals(waitpointSigningKey({ apiKeys: ['b', 'a'] }).key)).toBe(true);
    expect(ab.key.equals(waitpointSigningKey({ apiKeys: ['a', 'c'] }).key)).toBe(false);
    expect(waitpointSigningKey({}).source).toBe('none');
  });
});
