/**
 * Signature checks of inbound webhook deliveries, over the raw bytes as received (never a
 * re-serialized parse): Standard Webhooks through its own library, and the schemes GitHub,
 * Stripe and Slack document, plus a custom HMAC header. Several secrets may be live at once (a
 * rotation): a delivery verifies when any unexpired one signs it. Pure but for the clock passed in.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { WebhookAuth, WebhookSecret } from '@flowline/db';

/** The verdict on a delivery's credentials. */
export type SignatureVerdict = { ok: true } | { ok: false; verdict: 'badSignature' | 'stale'; reason: string };

/** Standard Webhooks' own library refuses timestamps more than 5 minutes off: a tolerance cannot exceed it. */
export const STANDARD_WEBHOOKS_MAX_TOLERANCE_SEC = 300;

/** Default tolerance of timestamped schemes, seconds. */
export const DEFAULT_TOLERANCE_SEC = 300;

const header = (headers: Headers, name: string) => headers.get(name) ?? '';

function hmac(algorithm: string, secret: string, data: Buffer): Buffer {
  return createHmac(algorithm, secret).update(data).digest();
}

/** Constant-time comparison of a presented signature text with the expected bytes in `encoding`. */
function sameSignature(presented: string, expected: Buffer, encoding: 'hex' | 'base64'): boolean {
  const given = Buffer.from(presented.trim(), encoding);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function live(secrets: readonly WebhookSecret[], now: number): WebhookSecret[] {
  return secrets.filter((s) => s.notAfter === null || Date.parse(s.notAfter) > now);
}

/** A unix-seconds timestamp header against the tolerance. */
function staleness(ts: string, toleranceSec: number, now: number): SignatureVerdict | null {
  const t = Number(ts);
  if (!/^\d{1,12}$/.test(ts) || !Number.isFinite(t)) return { ok: false, verdict: 'badSignature', reason: 'the timestamp is missing or not unix seconds' };
  const off = Math.abs(now / 1000 - t);
  return off > toleranceSec ? { ok: false, verdict: 'stale', reason: `the timestamp is ${Math.round(off)} s off; the tolerance is ${toleranceSec} s` } : null;
}

const bad = (reason: string): SignatureVerdict => ({ ok: false, verdict: 'badSignature', reason });

/**
 * Verifies `body` as received with `headers` for a hook's `auth` and its `secrets`, at `now` (ms).
 * Timestamped schemes answer `stale` for a timestamp outside the tolerance even when signed.
 */
export function verifyDelivery(auth: WebhookAuth, secrets: readonly WebhookSecret[], body: Buffer, headers: Headers, now: number): SignatureVerdict {
  const keys = live(secrets, now);
  if (auth.type === 'none') return { ok: true };
  if (keys.length === 0) return bad('no secret of the hook is live (every one is past its notAfter)');
  if (auth.type === 'bearer') {
    const m = /^Bearer (.+)$/.exec(header(headers, 'authorization'));
    if (!m) return bad('no Authorization: Bearer token');
    const given = Buffer.from(m[1]!, 'utf8');
    return keys.some((k) => {
      const want = Buffer.from(k.value, 'utf8');
      return want.length === given.length && timingSafeEqual(want, given);
    })
      ? { ok: true }
      : bad('the bearer token is not one of the hook’s');
  }
  const tolerance = auth.toleranceSec ?? DEFAULT_TOLERANCE_SEC;
  switch (auth.preset ?? 'standardWebhooks') {
    case 'standardWebhooks': {
      const ts = header(headers, 'webhook-timestamp');
      const stale = staleness(ts, tolerance, now);
      if (stale) return stale;
      const plain = { 'webhook-id': header(headers, 'webhook-id'), 'webhook-timestamp': ts, 'webhook-signature': header(headers, 'webhook-signature') };
      for (const k of keys) {
        try {
          new Webhook(k.value).verify(body, plain, { jsonParse: false });
          return { ok: true };
        } catch (err) {
          if (!(err instanceof WebhookVerificationError)) throw err;
        }
      }
      return bad('no live secret signs it (webhook-id, webhook-timestamp, webhook-signature)');
    }
    case 'github': {
      const sig = header(headers, 'x-hub-signature-256');
      if (!sig.startsWith('sha256=')) return bad('no X-Hub-Signature-256: sha256=…');
      return keys.some((k) => sameSignature(sig.slice(7), hmac('sha256', k.value, body), 'hex')) ? { ok: true } : bad('X-Hub-Signature-256 does not match');
    }
    case 'stripe': {
      const parts = header(headers, 'stripe-signature').split(',').map((p) => p.split('=', 2) as [string, string?]);
      const t = parts.find(([k]) => k === 't')?.[1] ?? '';
      const v1 = parts.filter(([k]) => k === 'v1').map(([, v]) => v ?? '');
      if (t === '' || v1.length === 0) return bad('no Stripe-Signature t=…,v1=…');
      const stale = staleness(t, tolerance, now);
      if (stale) return stale;
      const signed = Buffer.concat([Buffer.from(`${t}.`), body]);
      return keys.some((k) => v1.some((s) => sameSignature(s, hmac('sha256', k.value, signed), 'hex'))) ? { ok: true } : bad('no v1 signature of Stripe-Signature matches');
    }
    case 'slack': {
      const ts = header(headers, 'x-slack-request-timestamp');
      const sig = header(headers, 'x-slack-signature');
      if (!sig.startsWith('v0=')) return bad('no X-Slack-Signature: v0=…');
      const stale = staleness(ts, tolerance, now);
      if (stale) return stale;
      const signed = Buffer.concat([Buffer.from(`v0:${ts}:`), body]);
      return keys.some((k) => sameSignature(sig.slice(3), hmac('sha256', k.value, signed), 'hex')) ? { ok: true } : bad('X-Slack-Signature does not match');
    }
    case 'custom': {
      const name = auth.header ?? 'x-signature';
      const prefix = auth.prefix ?? '';
      const sig = header(headers, name);
      if (!sig.startsWith(prefix) || sig.length === prefix.length) return bad(`no ${name}: ${prefix}…`);
      const given = sig.slice(prefix.length);
      return keys.some((k) => sameSignature(given, hmac(auth.algorithm ?? 'sha256', k.value, body), auth.encoding ?? 'hex')) ? { ok: true } : bad(`${name} does not match`);
    }
  }
}

/** The header whose value makes a repeat a duplicate when the hook names none: the preset's delivery id. */
export function defaultDedupeHeader(auth: WebhookAuth): string | null {
  if (auth.type !== 'hmac') return null;
  switch (auth.preset ?? 'standardWebhooks') {
    case 'standardWebhooks':
      return 'webhook-id';
    case 'github':
      return 'x-github-delivery';
    default:
      return null;
  }
}
