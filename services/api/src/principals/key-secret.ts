/**
 * The secret of a managed API key and what is stored in its place. A secret is
 * `fl_<tenant>_<43 base64url characters>` (32 random bytes): the prefix makes a leaked key
 * recognisable (secret scanners, logs) and names its tenant; only the random part protects it.
 * Postgres keeps HMAC-SHA256(pepper, secret): a copy of the database alone cannot check a
 * guessed secret. A presented key is looked up by that hash (index and cache alike): the
 * timing of an equality over HMAC outputs tells an attacker nothing, since without the pepper
 * they cannot choose which hash a guess produces — the constant-time comparison of the
 * bootstrap keys (auth.ts) is needed there only because those are compared as sent.
 */
import { createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { BlockList, isIP } from 'node:net';

/** The start of every managed key's secret. */
export const MANAGED_KEY_PREFIX = 'fl_';

/** Where the pepper came from (logged at boot, never the pepper). */
export type PepperSource = 'API_KEY_PEPPER' | 'ENCRYPTION_KEY' | 'none';

/**
 * The pepper of managed keys' hashes: API_KEY_PEPPER, else derived from ENCRYPTION_KEY (HKDF,
 * its own label, so neither key reveals the other), else none — managed keys then cannot be
 * created (409 `ManagedKeysDisabled`), and API_KEYS alone authenticates.
 */
export function apiKeyPepper(o: { pepper?: string | undefined; encryptionKey?: string | undefined }): { pepper: Buffer | null; source: PepperSource } {
  if (o.pepper) return { pepper: Buffer.from(o.pepper, 'utf8'), source: 'API_KEY_PEPPER' };
  if (o.encryptionKey) return { pepper: Buffer.from(hkdfSync('sha256', o.encryptionKey, 'flowline', 'api-key-pepper', 32)), source: 'ENCRYPTION_KEY' };
  return { pepper: null, source: 'none' };
}

/** The keyed hash (hex) stored for `secret`. */
export const keyedHash = (pepper: Buffer, secret: string): string => createHmac('sha256', pepper).update(secret, 'utf8').digest('hex');

/** A fresh secret with what may be shown of it afterwards (its prefix and last four characters). */
export function newKeySecret(tenant: string): { secret: string; prefix: string; lastFour: string } {
  // the tenant as a label only: characters a header or a scanner could trip on become '-'
  const label = tenant.replace(/[^A-Za-z0-9-]/g, '-').slice(0, 32);
  const prefix = `${MANAGED_KEY_PREFIX}${label}`;
  const secret = `${prefix}_${randomBytes(32).toString('base64url')}`;
  return { secret, prefix, lastFour: secret.slice(-4) };
}

/** A parsed CIDR list: the text as given and a matcher. */
export interface CidrSet {
  readonly cidrs: readonly string[];
  /** whether `address` (IPv4, IPv6 or IPv4-mapped IPv6) lies in one of them */
  has(address: string | null): boolean;
}

/** One CIDR as `{ address, bits, family }`, or null when malformed (a bare address is a /32 or /128). */
export function parseCidr(text: string): { address: string; bits: number; family: 'ipv4' | 'ipv6' } | null {
  const [address = '', bitsText, extra] = text.split('/');
  const v = isIP(address);
  if (v === 0 || extra !== undefined) return null;
  const max = v === 4 ? 32 : 128;
  const bits = bitsText === undefined ? max : /^\d{1,3}$/.test(bitsText) ? Number(bitsText) : NaN;
  if (!(bits >= 0 && bits <= max)) return null;
  return { address, bits, family: v === 4 ? 'ipv4' : 'ipv6' };
}

/** The matcher of a list of valid CIDRs (validate each with {@link parseCidr} first). */
export function cidrSet(cidrs: readonly string[]): CidrSet {
  const list = new BlockList();
  for (const c of cidrs) {
    const p = parseCidr(c);
    if (p) list.addSubnet(p.address, p.bits, p.family);
  }
  return {
    cidrs,
    // BlockList matches an IPv4 subnet against an IPv4-mapped IPv6 address (::ffff:a.b.c.d) too
    has: (address) => address !== null && isIP(address) !== 0 && list.check(address, isIP(address) === 4 ? 'ipv4' : 'ipv6'),
  };
}

/**
 * The client's address: the TCP peer, unless the peer is one of the `trusted` proxies — then
 * the nearest X-Forwarded-For entry (read right to left) that is not itself a trusted proxy.
 * Entries a trusted proxy did not append are the client's own claims, so only the part of the
 * chain behind trusted hops is believed. Null when unknown.
 */
export function clientAddressOf(peer: string | null, forwardedFor: string | undefined, trusted: CidrSet | null): string | null {
  if (peer === null || trusted === null || !trusted.has(peer) || forwardedFor === undefined) return peer;
  const hops = forwardedFor.split(',').map((h) => h.trim());
  let client = peer;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!;
    if (isIP(hop) === 0) break;
    client = hop;
    if (!trusted.has(hop)) break;
  }
  return client;
}

/** Whether every network of `inner` lies inside some network of `outer` (a key minting a narrower key). */
export function cidrsWithin(inner: readonly string[], outer: readonly string[]): boolean {
  const nets = outer.map(parseCidr);
  return inner.every((text) => {
    const c = parseCidr(text);
    if (!c) return false;
    return nets.some((o) => {
      if (!o || o.family !== c.family || c.bits < o.bits) return false;
      const one = new BlockList();
      one.addSubnet(o.address, o.bits, o.family);
      return one.check(c.address, c.family);
    });
  });
}
