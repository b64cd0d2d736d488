/**
 * The key signed links are made with — waitpoint callback URLs and approval links — and the
 * approval link's signature. The API verifies them; the dispatcher signs the approval links of
 * its notifications with the same key, derived the same way from the same options
 * (WAITPOINT_SIGNING_KEY, else ENCRYPTION_KEY, else — API only — API_KEYS).
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

/** The options signed links are made from (API and dispatcher alike). */
export const signedLinkOptions = {
  WAITPOINT_SIGNING_KEY: z
    .string()
    .min(32, 'must be at least 32 characters')
    .optional()
    .describe('HMAC key of waitpoint callback URLs (POST /w/{tokenId}/{signature}) and approval links (POST /w/a/…); unset: derived from ENCRYPTION_KEY, else (API) from API_KEYS (rotating those then invalidates open URLs) (secret)'),
  PUBLIC_URL: z
    .string()
    .url()
    .refine((v) => /^https?:$/.test(new URL(v).protocol), 'must be an http(s) URL')
    .optional()
    .describe("the origin callers reach the API (and its console) at, for callback URLs, approval links and the links of approval notifications (unset: each request's own origin; in notifications http://localhost:3000)"),
};

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

/** The path of `principal`'s approval link on a gate (the API serves it; notifications carry it). */
export function approvalLinkPath(key: Buffer, runId: string, nodeKey: string, principal: string): string {
  return `/w/a/${runId}/${encodeURIComponent(nodeKey)}/${encodeURIComponent(principal)}/${approvalLinkSignature(key, runId, nodeKey, principal)}`;
}
