/**
 * Options of the API's edge (request hygiene and rate limits), with defaults. Parsed once
 * in main.ts next to the API's own schema; tests build {@link EdgeOptions} directly.
 */
import { z } from 'zod';

/** Environment variables of the API's edge. */
export const edgeConfigSchema = z.object({
  BODY_DRAIN_MAX_BYTES: z.coerce.number().int().min(0).max(1024 * 1024 * 1024).default(8 * 1024 * 1024)
    .describe('an answer given before the request body was read (413, 401, 403…) first reads and discards up to this many body bytes so the keep-alive connection stays usable; a longer body closes the connection (Connection: close)'),
  BODY_DRAIN_TIMEOUT_MS: z.coerce.number().int().min(0).max(600_000).default(5_000)
    .describe('how long such an answer waits for the unread body to arrive before it closes the connection instead, ms'),
});

/** The edge's knobs. */
export interface EdgeOptions {
  bodyDrainMaxBytes: number;
  bodyDrainTimeoutMs: number;
}

/** Maps parsed environment to {@link EdgeOptions}. */
export function toEdgeOptions(cfg: z.output<typeof edgeConfigSchema>): EdgeOptions {
  return {
    bodyDrainMaxBytes: cfg.BODY_DRAIN_MAX_BYTES,
    bodyDrainTimeoutMs: cfg.BODY_DRAIN_TIMEOUT_MS,
  };
}

/** Defaults of {@link EdgeOptions} (the schema's defaults). */
export const DEFAULT_EDGE_OPTIONS: EdgeOptions = toEdgeOptions(edgeConfigSchema.parse({}));
