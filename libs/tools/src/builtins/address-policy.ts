/**
 * Network policy of `http_fetch`: which resolved addresses are private (loopback,
 * private, link-local, CGNAT, multicast, documentation, reserved — IPv4 and IPv6,
 * including IPv4 embedded in IPv6: mapped, compatible, translated, NAT64 and 6to4)
 * and which URLs an allow-list of prefixes admits. Anything unparseable is private
 * (fail closed).
 */
import { isIP } from 'node:net';
import { toolInvalid } from '../tool-error';

/** [network, prefix length] over IPv4 as 32-bit unsigned numbers. */
const PRIVATE_V4: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];

function v4ToNumber(address: string): number | null {
  const parts = address.split('.');
  if (parts.length !== 4) return null;
  let n = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return null;
    const octet = Number(part);
    if (octet > 255) return null;
    n = n * 256 + octet;
  }
  return n;
}

function v4InRange(n: number, network: string, bits: number): boolean {
  const base = v4ToNumber(network) ?? 0;
  const size = 2 ** (32 - bits);
  return Math.floor(n / size) === Math.floor(base / size);
}

function isPrivateV4Number(n: number): boolean {
  return PRIVATE_V4.some(([network, bits]) => v4InRange(n, network, bits));
}

/** Eight 16-bit groups of an IPv6 address (zone id dropped), or null. */
export function parseIPv6(input: string): number[] | null {
  let address = input.replace(/%.*$/, '');
  const tail: number[] = [];
  const v4Match = /^(.*:)(\d{1,3}(?:\.\d{1,3}){3})$/.exec(address);
  if (v4Match) {
    const n = v4ToNumber(v4Match[2] ?? '');
    if (n === null) return null;
    tail.push(Math.floor(n / 65536), n % 65536);
    const head = v4Match[1] ?? '';
    // `::ffff:1.2.3.4` → `::ffff`, `::1.2.3.4` → `::`
    address = head.endsWith('::') ? head : head.slice(0, -1);
  }
  const halves = address.split('::');
  if (halves.length > 2) return null;
  const parse = (s: string): number[] | null => {
    if (s === '') return [];
    const out: number[] = [];
    for (const group of s.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return null;
      out.push(parseInt(group, 16));
    }
    return out;
  };
  const head = parse(halves[0] ?? '');
  const rest = halves.length === 2 ? parse(halves[1] ?? '') : [];
  if (head === null || rest === null) return null;
  const explicit = head.length + rest.length + tail.length;
  if (halves.length === 1) {
    if (explicit !== 8) return null;
    return [...head, ...tail];
  }
  if (explicit > 7) return null;
  return [...head, ...new Array<number>(8 - explicit).fill(0), ...rest, ...tail];
}

function embeddedV4(g: number[], hi: number, lo: number): number {
  return (g[hi] ?? 0) * 65536 + (g[lo] ?? 0);
}

function isPrivateV6(g: number[]): boolean {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0] = g;
  const firstFiveZero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  // ::/96 (unspecified, loopback, IPv4-compatible) and ::ffff:0:0/96 (mapped)
  if (firstFiveZero && (g5 === 0 || g5 === 0xffff)) return isPrivateV4Number(embeddedV4(g, 6, 7));
  // ::ffff:0:0:0/96 (IPv4-translated)
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0xffff && g5 === 0) return isPrivateV4Number(embeddedV4(g, 6, 7));
  // 64:ff9b::/96 NAT64 well-known prefix
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return isPrivateV4Number(embeddedV4(g, 6, 7));
  // 64:ff9b:1::/48 local-use NAT64
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return true;
  // 2002::/16 6to4 embeds an IPv4 address in groups 1–2
  if (g0 === 0x2002) return isPrivateV4Number(embeddedV4(g, 1, 2));
  // 2001::/32 Teredo (obfuscated client address) and 2001:db8::/32 documentation
  if (g0 === 0x2001 && (g1 === 0 || g1 === 0xdb8)) return true;
  // 100::/64 discard-only
  if (g0 === 0x100 && g1 === 0 && g2 === 0 && g3 === 0) return true;
  if ((g0 & 0xfe00) === 0xfc00) return true; // fc00::/7 unique local
  if ((g0 & 0xffc0) === 0xfe80) return true; // fe80::/10 link-local
  if ((g0 & 0xffc0) === 0xfec0) return true; // fec0::/10 site-local (deprecated)
  if ((g0 & 0xff00) === 0xff00) return true; // ff00::/8 multicast
  return false;
}

/** true when connecting to `address` (an IP literal) must be refused without HTTP_FETCH_ALLOW_PRIVATE. */
export function isPrivateAddress(address: string): boolean {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const family = isIP(bare.replace(/%.*$/, ''));
  if (family === 4) {
    const n = v4ToNumber(bare);
    return n === null || isPrivateV4Number(n);
  }
  if (family === 6) {
    const groups = parseIPv6(bare);
    return groups === null || isPrivateV6(groups);
  }
  return true;
}

/**
 * Normalises an `allowedUrls` list: each entry an absolute http(s) URL without
 * credentials; bare origins gain their `/`.
 * @throws ToolError ValidationFailed on an empty list or a bad entry
 */
export function normalizeAllowedUrls(list: readonly string[]): string[] {
  if (list.length === 0) throw toolInvalid('http_fetch needs a non-empty allowedUrls list on its node');
  return list.map((entry, i) => {
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      throw toolInvalid(`allowedUrls[${i}] is not an absolute URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw toolInvalid(`allowedUrls[${i}] is not http(s)`);
    if (url.username !== '' || url.password !== '') throw toolInvalid(`allowedUrls[${i}] must not carry credentials`);
    return url.href;
  });
}

/**
 * true when `url` starts with one of the normalised prefixes at a boundary: the
 * prefix ends with `/`, or the URL continues with `/`, `?` or `#` (so
 * `https://a.example/v1` admits `/v1/x` but not `/v1evil`).
 */
export function isUrlAllowed(url: URL, prefixes: readonly string[]): boolean {
  if (url.username !== '' || url.password !== '') return false;
  const href = url.href;
  return prefixes.some((prefix) => {
    if (!href.startsWith(prefix)) return false;
    if (href.length === prefix.length || prefix.endsWith('/')) return true;
    return '/?#'.includes(href.charAt(prefix.length));
  });
}
