/**
 * Signed callback URLs of waitpoint tokens: `POST /w/{tokenId}/{signature}`, the signature an
 * HMAC-SHA256 of the token id under the deployment's signing key (base64url). The URL is the
 * only credential a caller needs, so the key decides who can complete a token: it comes from
 * WAITPOINT_SIGNING_KEY, or — unset — is derived (HKDF-SHA256) from ENCRYPTION_KEY, else from
 * API_KEYS (every replica holds the same, so the URLs verify on all of them; rotating the source
 * invalidates outstanding URLs). With none of them the deployment runs without authentication
 * and the derived key is public: such URLs are as open as every other route there.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { approvalLinkPath } from '@flowline/runtime';

export { approvalLinkSignature, verifyApprovalLink, waitpointSigningKey, type SigningKeySource } from '@flowline/runtime';

/** The key and the public base URL the callback URLs are built from. */
export interface WaitpointLinks {
  key: Buffer;
  /** PUBLIC_URL: the origin callers reach the API at; null = the request's own origin */
  publicUrl: string | null;
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

/** The absolute approval link of `principal` on a gate, against PUBLIC_URL or the request's origin. */
export function approvalLinkUrl(links: WaitpointLinks, requestUrl: string, runId: string, nodeKey: string, principal: string): string {
  const base = (links.publicUrl ?? new URL(requestUrl).origin).replace(/\/+$/, '');
  return `${base}${approvalLinkPath(links.key, runId, nodeKey, principal)}`;
}
