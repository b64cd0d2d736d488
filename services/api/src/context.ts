import type { WaitpointLinks } from './waitpoint-links';
/**
 * What the app is built from (its dependencies) and what each request carries.
 */
import type { Pool } from 'pg';
import type { OidcOptions } from './routes/oidc';
import type { FileStore } from '@flowline/db';
import type { RedisConnection } from '@flowline/queue';
import type { Logger } from 'pino';
import type { MetadataLimits, ToolCatalog } from '@flowline/graph';
import type { ApiKeyScope } from '@flowline/runtime';
import type { ApiKeyTable, Principal } from './auth';
import type { ManagedKeyOptions } from './principals/managed-keys';
import type { EdgeOptions } from './edge/config';
import type { ApiMetrics } from './metrics';
import type { ApiMcp } from './mcp-catalog';
import type { AuditChainer, AuditOptions } from './audit/chainer';

/** A tool as `GET /v1/tools` lists it (CONTRACT §8). */
export interface ToolCatalogEntry {
  name: string;
  description: string;
  argumentsSchema: unknown;
  requiresAllowedUrls: boolean;
}

/** The tool registry as the API needs it. */
export interface ApiTools {
  /** catalog entries, for the tools route */
  catalog(): ToolCatalogEntry[];
  /** the parser's view, for graph validation (unknown tool, allowedUrls rule) */
  parserCatalog(): ToolCatalog;
}

/** Limits the routes enforce. */
export interface ApiLimits {
  maxNodesPerDefinition: number;
  maxRunInputBytes: number;
  eventReplayLimit: number;
  shardCount: number;
  streamPollMs: number;
  /** MAX_RUN_WAIT_S: the longest `?wait=` of a run start, seconds @default 60 */
  maxRunWaitS?: number;
  /** MAX_BACKFILL_SLOTS: most slots one schedule backfill starts @default 1000 */
  maxBackfillSlots?: number;
  /** MAX_START_DELAY_DAYS: how far ahead a delayed start (`startAt`/`delay`, reschedule) may be, days @default 366 */
  maxStartDelayDays?: number;
  /** MAX_CHAT_ANSWER_BYTES: the longest ChatInput answer, UTF-8 bytes @default 32768 */
  maxChatAnswerBytes?: number;
  /** MAX_PENDING_SIGNALS_PER_CHANNEL: unconsumed signals one channel of one run keeps @default 100 */
  maxPendingSignalsPerChannel?: number;
  /** MAX_SIGNAL_PAYLOAD_BYTES: largest signal payload, UTF-8 bytes of its JSON @default 65536 */
  maxSignalPayloadBytes?: number;
  /** MAX_STEERS_PER_NODE */
  maxSteersPerNode: number;
  /** MAX_TOTAL_ATTEMPTS (the budgetExhausted blocker names a spent retry budget with it) @default not judged */
  maxTotalAttempts?: number;
  /** MAX_CONCURRENT_RUNS (the run-slot blocker reads it) @default 100 */
  maxConcurrentRuns?: number;
  /** MAX_RUN_METADATA_KEYS, MAX_RUN_METADATA_VALUE_CHARS @default { maxKeys: 16, maxValueChars: 256 } */
  metadata?: MetadataLimits;
  /** MAX_BULK_RUNS: most runs one bulk action applies to @default 100000 */
  maxBulkRuns?: number;
  /** MAX_PENDING_RUNS of a tenant (TENANT_MAX_PENDING_RUNS, else MAX_PENDING_RUNS; 0 = unbounded) @default unbounded */
  maxPendingRuns?: (tenantId: string) => number;
  /** BACKLOG_RETRY_AFTER_S: the Retry-After of a 429 BacklogFull @default 5 */
  backlogRetryAfterS?: number;
  /** MAX_UPLOAD_BYTES: largest file content POST /v1/files keeps @default 10 MiB */
  maxUploadBytes?: number;
  /** MAX_EVENTS_PER_REQUEST: most events one POST /v1/events carries @default 100 */
  maxEventsPerRequest?: number;
  /** WEBHOOK_MAX_BODY_BYTES: the largest body a webhook delivery may carry @default 1048576 */
  webhookMaxBodyBytes?: number;
}

/** Everything `createApp` needs; integration tests build it from real Postgres and Redis. */
export interface AppDeps {
  pool: Pool;
  redis: RedisConnection;
  /** key → tenant and scopes (a bare tenant string holds every scope); null = single-tenant `default` without auth */
  apiKeys: ApiKeyTable | null;
  /** managed API keys (`/v1/api-keys`): the pepper and the cache's tuning @default disabled (no pepper) */
  managedKeys?: ManagedKeyOptions;
  limits: ApiLimits;
  tools: ApiTools;
  /** Redis prefix of queues and channels (libs/queue) */
  queuePrefix: string;
  logger: Logger;
  /** the console's built assets, served at `/console`; absent = no console route */
  consoleDir?: string | null;
  /** request hygiene and rate limits; the defaults of `edgeConfigSchema` when absent */
  edge?: EdgeOptions;
  /** true once shutdown began: `/readyz` answers 503 @default never */
  draining?: () => boolean;
  /** the process's metrics (shared with the live channel); a fresh set when absent */
  metrics?: ApiMetrics;
  /** BULL_BOARD_WRITE: the queue UI at /admin/queues may retry, clean, promote, pause… jobs @default false (read-only) */
  bullBoardWrite?: boolean;
  /** ADMIN_SESSION_TTL_S: lifetime of a queue UI browser session, s @default 3600 */
  adminSessionTtlS?: number;
  /** people signing in through OpenID Connect (the OIDC_* options) @default off: the console signs in by key */
  oidc?: OidcOptions | null;
  /** where uploads live @default the Postgres file store over `pool` */
  files?: FileStore;
  /** the signing key and public origin of waitpoint callback URLs @default a key derived from `apiKeys` (waitpoint-links.ts), each request's origin */
  waitpoints?: WaitpointLinks;
  /** MCP servers: the deployment's stdio names, the URL guard and the start check's toolbox @default none of them */
  mcp?: ApiMcp;
  /** the audit log's options and chainer (main.ts starts its sweep) @default DEFAULT_AUDIT_OPTIONS and a chainer over `pool` */
  audit?: { chainer?: AuditChainer; options?: AuditOptions };
}

/** Hono env: per-request variables. */
export interface AppEnv {
  Variables: {
    tenant: string;
    /** what the request's key may do (every scope in single-tenant mode) */
    scopes: ReadonlySet<ApiKeyScope>;
    /**
     * Who acts: a managed key (`service:<key id>`, with its constraints), an API_KEYS entry
     * (`key:` and the first 16 hex digits of the key's SHA-256 digest) or `anonymous` in
     * single-tenant mode without keys. Its id is recorded as a run's initiator, a definition
     * version's author, an intent's and an approval's principal.
     */
    principal: Principal;
    /** the JSON body parsed losslessly (big numbers kept), undefined without a body */
    body: unknown;
    /**
     * Gives the request's admission slot back before its answer is ready: a start that then
     * waits for its run (`?wait=`) holds no slot of its tenant while it sleeps. Absent when
     * admission is off.
     */
    releaseAdmission?: () => void;
  };
}
