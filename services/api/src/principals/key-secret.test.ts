import { describe, expect, it } from 'vitest';
import { apiKeyPepper, cidrSet, cidrsWithin, clientAddressOf, keyedHash, newKeySecret, parseCidr } from './key-secret';

describe('managed key secrets', () => {
  it('makes a recognisable secret per tenant whose shown parts are its prefix and last four characters', () => {
    const a = newKeySecret('acme');
    const b = newKeySecret('acme');
    expect(a.secret).toMatch(/^fl_acme_[A-Za-z0-9_-]{43}$/);
    expect(a.secret).not.toBe(b.secret);
    expect(a.prefix).toBe('fl_acme');
    expect(a.lastFour).toBe(a.secret.slice(-4));
    // a tenant name with characters a header or a scanner could trip on is a label only
    expect(newKeySecret('team a/b:c').prefix).toBe('fl_team-a-b-c');
  });

  it('takes API_KEY_PEPPER, else derives one from ENCRYPTION_KEY, else has none', () => {
    const given = apiKeyPepper({ pepper: 'p'.repeat(32), encryptionKey: 'e'.repeat(64) });
    expect(given.source).toBe('API_KEY_PEPPER');
    const derived = apiKeyPepper({ encryptionKey: 'e'.repeat(64) });
    expect(derived.source).toBe('ENCRYPTION_KEY');
    expect(derived.pepper?.length).toBe(32);
    // derived, not the encryption key itself
    expect(derived.pepper?.toString('hex')).not.toBe('e'.repeat(64));
    expect(apiKeyPepper({})).toEqual({ pepper: null, source: 'none' });
    // the hash depends on the pepper
    expect(keyedHash(given.pepper!, 'fl_x_1')).not.toBe(keyedHash(derived.pepper!, 'fl_x_1'));
  });

  it('parses CIDRs and bare addresses, refusing anything else', () => {
    expect(parseCidr('10.0.0.0/8')).toEqual({ address: '10.0.0.0', bits: 8, family: 'ipv4' });
    expect(parseCidr('2001:db8::/32')).toEqual({ address: '2001:db8::', bits: 32, family: 'ipv6' });
    expect(parseCidr('127.0.0.1')).toEqual({ address: '127.0.0.1', bits: 32, family: 'ipv4' });
    for (const bad of ['10.0.0.0/33', '::/129', '10.0.0/8', 'host/8', '10.0.0.0/8/1', '10.0.0.0/x', '']) expect(parseCidr(bad)).toBeNull();
  });

  it('matches IPv4, IPv6 and IPv4-mapped IPv6 client addresses; an unknown address matches nothing', () => {
    const set = cidrSet(['10.0.0.0/8', '2001:db8::/32']);
    expect(set.has('10.1.2.3')).toBe(true);
    expect(set.has('::ffff:10.1.2.3')).toBe(true);
    expect(set.has('2001:db8::1')).toBe(true);
    expect(set.has('11.0.0.1')).toBe(false);
    expect(set.has(null)).toBe(false);
    expect(set.has('not an address')).toBe(false);
  });

  it('tells a narrower network list from a wider one', () => {
    expect(cidrsWithin(['10.1.0.0/16', '10.2.3.4'], ['10.0.0.0/8'])).toBe(true);
    expect(cidrsWithin(['10.0.0.0/8'], ['10.1.0.0/16'])).toBe(false);
    expect(cidrsWithin(['11.0.0.0/16'], ['10.0.0.0/8'])).toBe(false);
    expect(cidrsWithin(['2001:db8:1::/48'], ['2001:db8::/32', '10.0.0.0/8'])).toBe(true);
    expect(cidrsWithin(['0.0.0.0/0'], ['10.0.0.0/8'])).toBe(false);
  });

  it('believes X-Forwarded-For only as far as trusted proxies appended it', () => {
    const trusted = cidrSet(['10.0.0.0/8']);
    expect(clientAddressOf('10.0.0.1', '198.51.100.7', trusted)).toBe('198.51.100.7');
    // a spoofed entry left of the real client is the client's own claim
    expect(clientAddressOf('10.0.0.1', '1.2.3.4, 198.51.100.7, 10.0.0.2', trusted)).toBe('198.51.100.7');
    // an untrusted peer's header is ignored; so is any header without trusted proxies
    expect(clientAddressOf('198.51.100.9', '1.2.3.4', trusted)).toBe('198.51.100.9');
    expect(clientAddressOf('10.0.0.1', '1.2.3.4', null)).toBe('10.0.0.1');
    // a garbled hop stops the walk at the last address believed
    expect(clientAddressOf('10.0.0.1', 'garbage, 10.0.0.3', trusted)).toBe('10.0.0.3');
    expect(clientAddressOf('10.0.0.1', undefined, trusted)).toBe('10.0.0.1');
    expect(clientAddressOf(null, '1.2.3.4', trusted)).toBeNull();
  });
});
