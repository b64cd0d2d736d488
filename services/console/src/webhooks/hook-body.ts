/**
 * The request bodies the webhooks page sends, built from what the form holds (create) or from a
 * hook as answered (rotation): pure, so the page's rules are tested without a browser.
 */
import type { Webhook, WebhookBody, WebhookSecretBody } from '@flowline/client';

/** How a hook verifies its deliveries, as the form offers it. */
export const VERIFICATIONS = ['standardWebhooks', 'github', 'stripe', 'slack', 'custom', 'bearer', 'none'] as const;
export type Verification = (typeof VERIFICATIONS)[number];

export const VERIFICATION_LABELS: Record<Verification, string> = {
  standardWebhooks: 'Standard Webhooks (HMAC)',
  github: 'GitHub (HMAC)',
  stripe: 'Stripe (HMAC)',
  slack: 'Slack (HMAC)',
  custom: 'Custom HMAC',
  bearer: 'Bearer token',
  none: 'None (anyone with the URL)',
};

export interface HookForm {
  slug: string;
  target: { kind: 'definition'; definitionId: string } | { kind: 'event'; event: string };
  verification: Verification;
  /** blank: the server generates one (shown once) */
  secret: string;
  /** custom HMAC only */
  custom: { header: string; algorithm: 'sha256' | 'sha512' | 'sha1'; encoding: 'hex' | 'base64'; prefix: string };
}

/** The `POST /v1/webhooks` body of the form. */
export function createBody(f: HookForm): WebhookBody {
  const secrets: WebhookSecretBody[] = [{ id: 'primary', ...(f.secret.trim() !== '' ? { value: f.secret.trim() } : {}) }];
  const auth: WebhookBody['auth'] =
    f.verification === 'none'
      ? { type: 'none' }
      : f.verification === 'bearer'
        ? { type: 'bearer', secrets }
        : {
            type: 'hmac',
            preset: f.verification,
            secrets,
            ...(f.verification === 'custom'
              ? {
                  ...(f.custom.header.trim() ? { header: f.custom.header.trim() } : {}),
                  algorithm: f.custom.algorithm,
                  encoding: f.custom.encoding,
                  ...(f.custom.prefix ? { prefix: f.custom.prefix } : {}),
                }
              : {}),
          };
  return {
    ...(f.slug.trim() !== '' ? { slug: f.slug.trim() } : {}),
    target: f.target.kind === 'definition' ? { definitionId: f.target.definitionId } : { event: f.target.event.trim() },
    auth,
  };
}

/** How a hook verifies, in the form's words. */
export function verificationOf(hook: Pick<Webhook, 'auth'>): Verification {
  if (hook.auth.type === 'none' || hook.auth.type === 'bearer') return hook.auth.type;
  const preset = hook.auth.preset;
  return typeof preset === 'string' && (VERIFICATIONS as readonly string[]).includes(preset) ? (preset as Verification) : 'standardWebhooks';
}

/**
 * The `PUT /v1/webhooks/{id}` body of a rotation: the hook as it is, its current secrets kept
 * (listed by id without a value keeps the stored value) and ending at `oldNotAfter`, and a new
 * secret `newId` (its `value`, or blank: generated and answered once).
 */
export function rotationBody(hook: Webhook, r: { newId: string; value: string; oldNotAfter: string | null }): WebhookBody {
  const { secrets = [], ...auth } = hook.auth;
  const kept: WebhookSecretBody[] = secrets.map((s) => ({ id: s.id, notAfter: r.oldNotAfter ?? s.notAfter }));
  const added: WebhookSecretBody = { id: r.newId, ...(r.value.trim() !== '' ? { value: r.value.trim() } : {}) };
  return {
    slug: hook.slug,
    target: hook.target,
    auth: { ...auth, secrets: [...kept, added] } as WebhookBody['auth'],
    dedupeHeader: hook.dedupeHeader,
    maxBodyBytes: hook.maxBodyBytes,
    response: hook.response,
  };
}
