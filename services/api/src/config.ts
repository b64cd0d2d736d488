/**
 * The API's options: the CONTRACT §7 options it reads (shared schemas of libs/runtime) plus
 * its own transport knobs. Parsed once in main.ts; `process.env` is read nowhere else.
 */
import { z } from 'zod';
import {
  auditOptions,
  apiKeyOptions,
  coreOptions,
  connectionOptions,
  defineConfig,
  backlogOptions,
  dispatchOptions,
  encryptionOptions,
  httpOptions,
  logOptions, tracingOptions,
  mcpOptions,
  oidcIssue,
  oidcOptions,
  signedLinkOptions,
  workerOptions,
} from '@flowline/runtime';

/** Environment variables of the API process, with defaults. */
export const apiConfigSchema = defineConfig({
  ...connectionOptions,
  ...httpOptions,
  ...apiKeyOptions,
  ...coreOptions,
  ...encryptionOptions,
  ...auditOptions,
  ...oidcOptions,
  ...logOptions,
  ...tracingOptions,
  SHARD_COUNT: dispatchOptions.SHARD_COUNT,
  MAX_CONCURRENT_RUNS: dispatchOptions.MAX_CONCURRENT_RUNS,
  MAX_PENDING_RUNS: backlogOptions.MAX_PENDING_RUNS,
  TENANT_MAX_PENDING_RUNS: backlogOptions.TENANT_MAX_PENDING_RUNS,
  BACKLOG_RETRY_AFTER_S: backlogOptions.BACKLOG_RETRY_AFTER_S,
  TOOL_FILES_ROOT: workerOptions.TOOL_FILES_ROOT,
  TOOL_MODULES: workerOptions.TOOL_MODULES,
  ...mcpOptions,
  MCP_START_CHECK_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(60_000)
    .default(3_000)
    .describe("how long a run start waits for an MCP server's tool listing (to refuse a tool no longer listed); past it the tool is judged when called, ms"),
  WF_TEST_TOOLS: z.enum(['0', '1']).default('0').describe('1 registers the test tools (test_fail)'),
  QUEUE_PREFIX: z.string().min(1).default('{flowline}').describe('Redis prefix of queues and channels'),
  CONSOLE_DIST_DIR: z
    .string()
    .min(1)
    .optional()
    .describe("directory of the console's built assets served at /console (default: services/console/dist of this checkout)"),
  BULL_BOARD_WRITE: z
    .enum(['0', '1'])
    .default('0')
    .describe('1 lets the queue UI (/admin/queues, admin-scoped keys) retry, clean, promote and pause jobs; 0 = read-only'),
  ADMIN_SESSION_TTL_S: z.coerce
    .number()
    .int()
    .min(60)
    .max(86_400)
    .default(3_600)
    .describe('lifetime of a queue UI browser session (POST /admin/session sets its cookie), s'),
  MAX_RUN_WAIT_S: z.coerce
    .number()
    .int()
    .min(0)
    .max(3_600)
    .default(60)
    .describe('longest wait a run start may ask for (POST /v1/definitions/{id}/runs?wait=30s); a longer ask waits this long, s'),
  MAX_BACKFILL_SLOTS: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(1_000)
    .describe('most slots one schedule backfill may start (POST /v1/schedules/{id}/backfill answers 400 BackfillTooLarge past it)'),
  MAX_START_DELAY_DAYS: z.coerce
    .number()
    .int()
    .min(1)
    .max(3_660)
    .default(366)
    .describe('how far ahead a delayed start may be (startAt/delay on run creation, POST /v1/runs/{id}/reschedule), days'),
  MAX_PENDING_SIGNALS_PER_CHANNEL: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(100)
    .describe('most signals one channel of one run keeps unconsumed (POST /v1/runs/{id}/signals answers 409 SignalBacklogFull past it)'),
  MAX_SIGNAL_PAYLOAD_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_048_576)
    .default(65_536)
    .describe('largest signal payload (POST /v1/runs/{id}/signals), waitpoint completion body (POST /w/…, POST /v1/waitpoints/{id}/complete) and event data (POST /v1/events), UTF-8 bytes of its JSON'),
  ...signedLinkOptions,
  MAX_EVENTS_PER_REQUEST: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000)
    .default(100)
    .describe('most events one POST /v1/events may carry'),
  WEBHOOK_MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .min(1_024)
    .max(16_777_216)
    .default(1_048_576)
    .describe("largest body POST /hooks/{tenant}/{slug} reads, bytes; a hook's own maxBodyBytes is at most this"),
  EVENT_FANOUT_SWEEP_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(3_600_000)
    .default(5_000)
    .describe("how often each API replica finishes event fan-outs the intake left undone (a crash mid-way, a start deferred by a full backlog), ms; an event younger than this is left to the intake"),
  EVENT_FANOUT_BATCH: z.coerce.number().int().min(1).max(10_000).default(100).describe('most events one fan-out sweep takes'),
  MAX_CHAT_ANSWER_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_048_576)
    .default(32_768)
    .describe("longest ChatInput answer (the decide route's payload.text), UTF-8 bytes"),
  MAX_UPLOAD_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_073_741_824)
    .default(10_485_760)
    .describe('largest file content POST /v1/files keeps (413 PayloadTooLarge beyond it, nothing kept), bytes'),
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(1_000).default(10)
    .describe("connections of the API replica's Postgres pool"),
  DATABASE_ACQUIRE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000)
    .describe('how long a request waits for a free Postgres connection (or a new one to open) before it is answered 503 Overloaded with Retry-After, ms'),
  STREAM_POLL_MS: z.coerce.number().int().min(20).max(10_000).default(250).describe('SSE poll of the events table, ms'),
}).superRefine((v, ctx) => {
  // single sign-on needs a client and the bootstrap keys (an open server has nobody to sign in as)
  const oidc = oidcIssue(v);
  if (oidc !== null) ctx.addIssue({ code: 'custom', path: [oidc.path], message: oidc.message });
});

export type ApiConfig = z.output<typeof apiConfigSchema>;
