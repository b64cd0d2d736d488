import { BlockList } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPrivateAddress, isUrlAllowed, normalizeAllowedUrls, parseIPv6 } from './address-policy';

describe('private address policy', () => {
  it.each([
    '127.0.0.1', '127.1.2.3', '10.0.0.5', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254',
    '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '198.18.0.1',
  ])('refuses the IPv4 address %s', (address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '93.184.216.34'])('admits the public IPv4 address %s', (address) => {
    expect(isPrivateAddress(address)).toBe(false);
  });

  it.each([
    '::1', '::', 'fe80::1', 'fe80::1%eth0', 'fc00::1', 'fd12:3456::1', 'ff02::1', '2001:db8::1',
    '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.1.2.3', '::127.0.0.1', '64:ff9b::a9fe:a9fe', '2002:c0a8:0101::1',
    '::ffff:0:192.168.0.1', '[::1]',
  ])('refuses the IPv6 address %s', (address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });

  it.each(['2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:0808:0808::1'])(
    'admits the public IPv6 address %s',
    (address) => {
      expect(isPrivateAddress(address)).toBe(false);
    },
  );

  it('treats anything that is not an IP literal as private', () => {
    expect(isPrivateAddress('localhost')).toBe(true);
    expect(isPrivateAddress('1.2.3')).toBe(true);
  });

  it('parses compressed and dotted-tail IPv6 forms into eight groups', () => {
    expect(parseIPv6('::ffff:1.2.3.4')).toEqual([0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304]);
    expect(parseIPv6('1:2:3:4:5:6:7:8')).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(parseIPv6('1::8')).toEqual([1, 0, 0, 0, 0, 0, 0, 8]);
    expect(parseIPv6('1:2:3')).toBeNull();
  });
});

describe('allowed URL prefixes', () => {
  const prefixes = normalizeAllowedUrls(['https://api.example.com', 'http://docs.example.org/v1']);

  it('admits URLs under a prefix at a path boundary', () => {
    expect(isUrlAllowed(new URL('https://api.example.com/x?y=1'), prefixes)).toBe(true);
    expect(isUrlAllowed(new URL('https://API.example.com'), prefixes)).toBe(true);
    expect(isUrlAllowed(new URL('http://docs.example.org/v1/page'), prefixes)).toBe(true);
    expect(isUrlAllowed(new URL('http://docs.example.org/v1?q'), prefixes)).toBe(true);
  });

  it('refuses look-alike hosts, sibling paths, other schemes and credentials', () => {
    expect(isUrlAllowed(new URL('https://api.example.com.evil.net/'), prefixes)).toBe(false);
    expect(isUrlAllowed(new URL('http://docs.example.org/v10'), prefixes)).toBe(false);
    expect(isUrlAllowed(new URL('http://api.example.com/'), prefixes)).toBe(false);
    expect(isUrlAllowed(new URL('https://user:pw@api.example.com/'), prefixes)).toBe(false);
  });

  it('refuses an empty list and entries that are not absolute http(s) URLs', () => {
    expect(() => normalizeAllowedUrls([])).toThrow(/non-empty/);
    expect(() => normalizeAllowedUrls(['/relative'])).toThrow(/absolute/);
    expect(() => normalizeAllowedUrls(['ftp://x.example/'])).toThrow(/http/);
  });
});

describe('private address policy properties', () => {
  const octets = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255));
  const reference = new BlockList();
  for (const [net, bits] of [
    ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
    ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
    ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
  ] as const) {
    reference.addSubnet(net, bits, 'ipv4');
  }

  it('agrees with node:net BlockList on every IPv4 address', () => {
    fc.assert(
      fc.property(octets, (o) => {
        const address = o.join('.');
        expect(isPrivateAddress(address)).toBe(reference.check(address, 'ipv4'));
      }),
      { numRuns: 2_000 },
    );
  });

  it('judges an IPv4 address the same when it is mapped, hex-mapped or NAT64-embedded in IPv6', () => {
    fc.assert(
      fc.property(octets, (o) => {
        const v4 = o.join('.');
        const hi = ((o[0] << 8) | o[1]).toString(16);
        const lo = ((o[2] << 8) | o[3]).toString(16);
        const expected = isPrivateAddress(v4);
        expect(isPrivateAddress(`::ffff:${v4}`)).toBe(expected);
        expect(isPrivateAddress(`::ffff:${hi}:${lo}`)).toBe(expected);
        expect(isPrivateAddress(`64:ff9b::${hi}:${lo}`)).toBe(expected);
      }),
      { numRuns: 2_000 },
    );
  });
});
