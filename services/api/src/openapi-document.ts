/**
 * The OpenAPI document exactly as `GET /openapi.json` serves it, built in-process without
 * reaching Postgres or Redis (the document is a function of the route schemas alone): the
 * docs generator renders the REST reference from it and the tests lint it.
 */
import pg from 'pg';
import pino from 'pino';
import { Redis } from 'ioredis';
import { createApp } from './app';
import { apiConfigSchema } from './config';

/** An OpenAPI 3.1 document, as JSON. */
export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description?: string };
  servers?: Array<{ url: string; description?: string }>;
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: Record<string, Record<string, unknown>>;
  [member: string]: unknown;
}

/** The members of one operation the docs read; the rest is kept as is. */
export interface OpenApiOperation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Array<Record<string, string[]>>;
  parameters?: Array<{ name: string; in: string; required?: boolean; description?: string; schema?: unknown }>;
  requestBody?: { content?: Record<string, { schema?: unknown }>; required?: boolean };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: unknown }> }>;
  [member: string]: unknown;
}

/** Builds the app on idle clients (a pool that never connects, a lazy Redis) and reads `/openapi.json`. */
export async function servedOpenApiDocument(): Promise<OpenApiDocument> {
  const cfg = apiConfigSchema.parse({});
  const pool = new pg.Pool({ max: 1 });
  const redis = new Redis({ lazyConnect: true });
  try {
    const app = createApp({
      pool,
      redis,
      apiKeys: null,
      limits: {
        maxNodesPerDefinition: cfg.MAX_NODES_PER_DEFINITION,
        maxRunInputBytes: cfg.MAX_RUN_INPUT_BYTES,
        eventReplayLimit: cfg.EVENT_REPLAY_LIMIT,
        shardCount: cfg.SHARD_COUNT,
        streamPollMs: cfg.STREAM_POLL_MS,
        maxSteersPerNode: cfg.MAX_STEERS_PER_NODE,
      },
      tools: { catalog: () => [], parserCatalog: () => new Map() },
      queuePrefix: cfg.QUEUE_PREFIX,
      logger: pino({ level: 'silent' }),
    });
    const res = await app.request('/openapi.json');
    if (res.status !== 200) throw new Error(`/openapi.json answered ${res.status}`);
    return (await res.json()) as OpenApiDocument;
  } finally {
    redis.disconnect();
    await pool.end();
  }
}
