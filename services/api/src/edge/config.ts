/**
 * Options of the API's edge (request hygiene and per-tenant rate limits), with defaults. Parsed once
 * in main.ts next to the API's own schema; tests build {@link EdgeOptions} directly.
 */
import { z } from 'zod';
import { MAX_BODY_BYTES } from '../body';
import type { AdmissionOptions } from './admission';
import type { RateLimitOptions } from './rate-limit';

const rate = (dflt: number, what: string) =>
  z.coerce.number().min(0).max(1_000_000).default(dflt)
    .describe(`${what} per tenant: tokens refilled per second, shared by every API replica through Redis (0 = not limited)`);
const burst = (dflt: number, what: string) =>
  z.coerce.number().int().min(1).max(10_000_000).default(dflt)
    .describe(`${what} per tenant allowed at once: the token bucket's size`);

const MiB = 1024 * 1024;
const inFlight = (dflt: number, max: number, what: string, refusal: '429 TooManyInFlight' | '503 Overloaded') =>
  z.coerce.number().int().min(0).max(max).default(dflt)
    .describe(`${what} in flight at once on one API replica; past it a request is answered ${refusal} with Retry-After before its body is read (0 = unbounded)`);

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
  RATE_LIMIT_WRITE_BYTES_PER_TOKEN: z.coerce.number().int().min(0).max(1024 * MiB).default(64 * 1024)
    .describe('a write takes one token of its bucket plus one per this many bytes of the body it announces (Content-Length; a 1 MiB create takes 17 with the default), never more than the burst; 0 = one token per write'),
  RATE_LIMIT_TIMEOUT_MS: z.coerce.number().int().min(1).max(10_000).default(250)
    .describe('a rate limit check Redis does not answer within this long lets the request through (fails open, warning logged), ms'),
  ADMISSION_TENANT_WRITES: inFlight(64, 1_000_000, 'REST write requests (every /v1 method but GET) of one tenant', '429 TooManyInFlight'),
  ADMISSION_TENANT_WRITE_BYTES: inFlight(2 * MiB, 1024 * MiB, "request body bytes of one tenant's writes (Content-Length, or counted as a chunked body streams in; at least 1 MiB, the largest body)", '429 TooManyInFlight'),
  ADMISSION_TENANT_READS: inFlight(128, 1_000_000, 'REST read requests (GET /v1/…) of one tenant, a budget of their own that writes never take,', '429 TooManyInFlight'),
  ADMISSION_REPLICA_WRITES: inFlight(256, 1_000_000, 'REST write requests of every tenant (at least ADMISSION_TENANT_WRITES)', '503 Overloaded'),
  ADMISSION_REPLICA_WRITE_BYTES: inFlight(8 * MiB, 1024 * MiB, "request body bytes of every tenant's writes (at least ADMISSION_TENANT_WRITE_BYTES)", '503 Overloaded'),
  ADMISSION_REPLICA_READS: inFlight(512, 1_000_000, 'REST read requests of every tenant (at least ADMISSION_TENANT_READS)', '503 Overloaded'),
  ADMISSION_RETRY_AFTER_S: z.coerce.number().int().min(1).max(3_600).default(1)
    .describe('the Retry-After of an in-flight refusal (429 TooManyInFlight, 503 Overloaded) and of a request that found no free database connection in time (503 Overloaded), s'),
}).superRefine((v, ctx) => {
  // a bound below the largest body would refuse a valid body even with nothing else in flight
  for (const key of ['ADMISSION_TENANT_WRITE_BYTES', 'ADMISSION_REPLICA_WRITE_BYTES'] as const) {
    if (v[key] !== 0 && v[key] < MAX_BODY_BYTES) ctx.addIssue({ code: 'custom', path: [key], message: `must be 0 (unbounded) or at least ${MAX_BODY_BYTES} (the largest request body)` });
  }
  // a replica bound below a tenant's would answer one busy tenant 503 (the replica is full) where it means 429
  for (const [tenant, replica] of [
    ['ADMISSION_TENANT_WRITES', 'ADMISSION_REPLICA_WRITES'],
    ['ADMISSION_TENANT_WRITE_BYTES', 'ADMISSION_REPLICA_WRITE_BYTES'],
    ['ADMISSION_TENANT_READS', 'ADMISSION_REPLICA_READS'],
  ] as const) {
    if (v[replica] !== 0 && v[tenant] > v[replica]) {
      ctx.addIssue({ code: 'custom', path: [replica], message: `must be 0 (unbounded) or at least ${tenant} (${v[tenant]})` });
    }
  }
});

/** The edge's knobs. */
export interface EdgeOptions {
  bodyDrainMaxBytes: number;
  bodyDrainTimeoutMs: number;
  /** per-tenant REST token buckets; null = no limit */
  rateLimit: RateLimitOptions | null;
  /** in-flight bounds per tenant and per replica (edge/admission.ts) */
  admission: AdmissionOptions;
}

/** Maps parsed environment to {@link EdgeOptions}. */
export function toEdgeOptions(cfg: z.output<typeof edgeConfigSchema>): EdgeOptions {
  return {
    bodyDrainMaxBytes: cfg.BODY_DRAIN_MAX_BYTES,
    bodyDrainTimeoutMs: cfg.BODY_DRAIN_TIMEOUT_MS,
    rateLimit: {
      writes: { perSecond: cfg.RATE_LIMIT_WRITES_PER_SECOND, burst: cfg.RATE_LIMIT_WRITE_BURST },
      reads: { perSecond: cfg.RATE_LIMIT_READS_PER_SECOND, burst: cfg.RATE_LIMIT_READ_BURST },
      writeBytesPerToken: cfg.RATE_LIMIT_WRITE_BYTES_PER_TOKEN,
      timeoutMs: cfg.RATE_LIMIT_TIMEOUT_MS,
    },
    admission: {
      tenantWrites: cfg.ADMISSION_TENANT_WRITES,
      tenantWriteBytes: cfg.ADMISSION_TENANT_WRITE_BYTES,
      tenantReads: cfg.ADMISSION_TENANT_READS,
      replicaWrites: cfg.ADMISSION_REPLICA_WRITES,
      replicaWriteBytes: cfg.ADMISSION_REPLICA_WRITE_BYTES,
      replicaReads: cfg.ADMISSION_REPLICA_READS,
      retryAfterSeconds: cfg.ADMISSION_RETRY_AFTER_S,
    },
  };
}

/** Defaults of {@link EdgeOptions} (the schema's defaults). */
export const DEFAULT_EDGE_OPTIONS: EdgeOptions = toEdgeOptions(edgeConfigSchema.parse({}));
