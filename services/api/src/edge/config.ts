/**
 * Options of the API's edge (request hygiene and per-tenant rate limits), with defaults. Parsed once
 * in main.ts next to the API's own schema; tests build {@link EdgeOptions} directly.
 */
import { z } from 'zod';
import type { RateLimitOptions } from './rate-limit';

const rate = (dflt: number, what: string) =>
  z.coerce.number().min(0).max(1_000_000).default(dflt)
    .describe(`${what} per tenant: tokens refilled per second, shared by every API replica through Redis (0 = not limited)`);
const burst = (dflt: number, what: string) =>
  z.coerce.number().int().min(1).max(10_000_000).default(dflt)
    .describe(`${what} per tenant allowed at once: the token bucket's size`);

/** Environment variables of the API's edge. */
export const edgeConfigSchema = z.object({
  BODY_DRAIN_MAX_BYTES: z.coerce.number().int().min(0).max(1024 * 1024 * 1024).default(8 * 1024 * 1024)
    .describe('an answer given before the request body was read (413, 401, 403…) first reads and discards up to this many body bytes so the keep-alive connection stays usable; a longer body closes the connection (Connection: close)'),
  BODY_DRAIN_TIMEOUT_MS: z.coerce.number().int().min(0).max(600_000).default(5_000)
    .describe('how long such an answer waits for the unread body to arrive before it closes the connection instead, ms'),
  RATE_LIMIT_WRITES_PER_SECOND: rate(1_000, 'REST writes (every /v1 method but GET)'),
  RATE_LIMIT_WRITE_BURST: burst(2_000, 'REST writes'),
  RATE_LIMIT_READS_PER_SECOND: rate(5_000, 'REST reads (GET /v1/…)'),
  RATE_LIMIT_READ_BURST: burst(10_000, 'REST reads'),
  RATE_LIMIT_TIMEOUT_MS: z.coerce.number().int().min(1).max(10_000).default(250)
    .describe('a rate limit check Redis does not answer within this long lets the request through (fails open, warning logged), ms'),
});

/** The edge's knobs. */
export interface EdgeOptions {
  bodyDrainMaxBytes: number;
  bodyDrainTimeoutMs: number;
  /** per-tenant REST token buckets; null = no limit */
  rateLimit: RateLimitOptions | null;
}

/** Maps parsed environment to {@link EdgeOptions}. */
export function toEdgeOptions(cfg: z.output<typeof edgeConfigSchema>): EdgeOptions {
  return {
    bodyDrainMaxBytes: cfg.BODY_DRAIN_MAX_BYTES,
    bodyDrainTimeoutMs: cfg.BODY_DRAIN_TIMEOUT_MS,
    rateLimit: {
      writes: { perSecond: cfg.RATE_LIMIT_WRITES_PER_SECOND, burst: cfg.RATE_LIMIT_WRITE_BURST },
      reads: { perSecond: cfg.RATE_LIMIT_READS_PER_SECOND, burst: cfg.RATE_LIMIT_READ_BURST },
      timeoutMs: cfg.RATE_LIMIT_TIMEOUT_MS,
    },
  };
}

/** Defaults of {@link EdgeOptions} (the schema's defaults). */
export const DEFAULT_EDGE_OPTIONS: EdgeOptions = toEdgeOptions(edgeConfigSchema.parse({}));
