/**
 * Options of the live channel (Socket.IO + SSE relay), with defaults. Parsed once in
 * main.ts next to the API's own schema; tests build {@link LiveOptions} directly.
 */
import { z } from 'zod';

/** Environment variables of the live channel. */
export const liveConfigSchema = z.object({
  LIVE_MERGE_WINDOW_MS: z.coerce.number().int().min(0).max(5_000).default(50)
    .describe('pings for one run within this window are merged into the highest seq'),
  LIVE_SUBSCRIBE_RATE: z.coerce.number().positive().max(100_000).default(500)
    .describe('subscribeRun admissions per second per replica (token bucket refill)'),
  LIVE_SUBSCRIBE_BURST: z.coerce.number().int().min(1).max(100_000).default(200)
    .describe('subscribeRun admissions allowed at once per replica (token bucket size)'),
  LIVE_SUBSCRIBE_MAX_WAITING: z.coerce.number().int().min(0).max(1_000_000).default(5_000)
    .describe('subscribeRun calls queued for a token before further ones are refused TooManyRequests'),
  LIVE_MAX_SUBSCRIPTIONS_PER_SOCKET: z.coerce.number().int().min(1).max(100_000).default(1_000)
    .describe('run rooms one socket may join'),
  LIVE_MAX_ACTIVITY_STREAMS: z.coerce.number().int().min(0).max(10_000).default(200)
    .describe('concurrent streamNodeActivity readers per replica (one Redis connection each)'),
  LIVE_ACTIVITY_BLOCK_MS: z.coerce.number().int().min(100).max(60_000).default(5_000)
    .describe('XREAD BLOCK of an activity reader; after an empty block the node row is re-checked'),
});

/** The live channel's knobs. */
export interface LiveOptions {
  mergeWindowMs: number;
  subscribeRate: number;
  subscribeBurst: number;
  subscribeMaxWaiting: number;
  maxSubscriptionsPerSocket: number;
  maxActivityStreams: number;
  activityBlockMs: number;
}

/** Defaults of {@link LiveOptions} (the schema's defaults). */
export const DEFAULT_LIVE_OPTIONS: LiveOptions = toLiveOptions(liveConfigSchema.parse({}));

/** Maps parsed environment to {@link LiveOptions}. */
export function toLiveOptions(cfg: z.output<typeof liveConfigSchema>): LiveOptions {
  return {
    mergeWindowMs: cfg.LIVE_MERGE_WINDOW_MS,
    subscribeRate: cfg.LIVE_SUBSCRIBE_RATE,
    subscribeBurst: cfg.LIVE_SUBSCRIBE_BURST,
    subscribeMaxWaiting: cfg.LIVE_SUBSCRIBE_MAX_WAITING,
    maxSubscriptionsPerSocket: cfg.LIVE_MAX_SUBSCRIPTIONS_PER_SOCKET,
    maxActivityStreams: cfg.LIVE_MAX_ACTIVITY_STREAMS,
    activityBlockMs: cfg.LIVE_ACTIVITY_BLOCK_MS,
  };
}
