/**
 * Signed callback URLs of waitpoint tokens: `POST /w/{tokenId}/{signature}`, the signature an
 * HMAC-SHA256 of the token id under the deployment's signing key (base64url). The URL is the
 * only credential a caller needs, so the key decides who can complete a token: it comes from
 * WAITPOINT_SIGNING_KEY, or — unset — is derived (HKDF-SHA256) from ENCRYPTION_KEY, else from
 * API_KEYS (every replica holds the same, so the URLs verify on all of them; rotating the source
 * invalidates outstanding URLs). With none of them the deployment runs without authentication
 * and the derived key is public: such URLs are as open as every other route there.
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/** The key and the public base URL the callback URLs are built from. */
export interface WaitpointLinks {
  key: Buffer;
  /** PUBLIC_URL: the origin callers reach the API at; null = the request's own origin */
  publicUrl: string | null;
}

/** Where the signing key came from (logged at boot, never the key). */
export type SigningKeySource = 'WAITPOINT_SIGNING_KEY' | 'ENCRYPTION_KEY' | 'API_KEYS' | 'none';

const derive = (secret: string, info: string) => Buffer.from(hkdfSync('sha256', secret, 'flowline', info, 32));

/** The signing key from the options, by precedence (see the module comment). */
export function waitpointSigningKey(o: { signingKey?: string | undefined; encryptionKey?: string | undefined; apiKeys?: Iterable<string> | null }): {
  key: Buffer;
  source: SigningKeySource;
} {
  if (o.signingKey) return { key: Buffer.from(o.signingKey, 'utf8'), source: 'WAITPOINT_SIGNING_KEY' };
  if (o.encryptionKey) return { key: derive(o.encryptionKey, 'waitpoint-signing'), source: 'ENCRYPTION_KEY' };
  const keys = o.apiKeys ? [...o.apiKeys].sort() : [];
  if (keys.length > 0) return { key: derive(keys.join('\n'), 'waitpoint-signing'), source: 'API_KEYS' };
  return { key: derive('flowline-without-authentication', 'waitpoint-signing'), source: 'none' };
}

/** The signature of token `id`. */
export function waitpointSignature(key: Buffer, id: string): string {
  return createHmac('sha256', key).update(`waitpoint:${id}`).digest('base64url');
}

/** Whether `signature` is token `id`'s (constant time). */
export function verifyWaitpointSignature(key: Buffer, id: string, signature: string): boolean {
  const want = Buffer.from(waitpointSignature(key, id));
  const got = Buffer.from(signature);
  return got.length === want.length && timingSafeEqual(got, want);
}

/** The callback path of token `id`. */
export function callbackPath(key: Buffer, id: string): string {
  return `/w/${id}/${waitpointSignature(key, id)}`;
}

/** The absolute callback URL of token `id`, against PUBLIC_URL or the request's origin. */
export function callbackUrl(links: WaitpointLinks, requestUrl: string, id: string): string {
  const base = (links.publicUrl ?? new URL(requestUrl).origin).replace(/\/+$/, '');
  return `${base}${callbackPath(links.key, id)}`;
}

/**
 * The signature of an approval link: one principal named by a policy Pause's quorum deciding
 * that gate (`POST /w/a/{runId}/{nodeKey}/{principal}/{signature}`), under the same key as
 * waitpoint callbacks. The link is that principal's credential for that gate only.
 */
export function approvalLinkSignature(key: Buffer, runId: string, nodeKey: string, principal: string): string {
  return createHmac('sha256', key).update(`approval:${runId}\u0000${nodeKey}\u0000${principal}`).digest('base64url');
}

/** Whether `signature` is the approval link's (constant time). */
export function verifyApprovalLink(key: Buffer, runId: string, nodeKey: string, principal: string, signature: string): boolean {
  const want = Buffer.from(approvalLinkSignature(key, runId, nodeKey, principal));
  const got = Buffer.from(signature);
  return got.length === want.length && timingSafeEqual(got, want);
}

/** The absolute approval link of `principal` on a gate, against PUBLIC_URL or the request's origin. */
export function approvalLinkUrl(links: WaitpointLinks, requestUrl: string, runId: string, nodeKey: string, principal: string): string {
  const base = (links.publicUrl ?? new URL(requestUrl).origin).replace(/\/+$/, '');
  const seg = (v: string) => encodeURIComponent(v);
  return `${base}/w/a/${runId}/${seg(nodeKey)}/${seg(principal)}/${approvalLinkSignature(links.key, runId, nodeKey, principal)}`;
}

