/**
 * API process: config → Postgres pool (migrated at boot) → Redis → tool registry → app →
 * HTTP server with the live channel (Socket.IO) attached, with releasers for graceful shutdown.
 */
import type { OidcOptions } from './routes/oidc';
import { UserSessions } from './principals/user-sessions';
import type { Server as HttpServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { serve } from '@hono/node-server';
import { checkEncryptionKeys, configureEncryptionKeys, createPool, mcpServerForUse, migrateAtBoot } from '@flowline/db';
import { connectRedis } from '@flowline/queue';
import { createLogger, encryptionKeyRing, initTracing, installShutdown, loadConfig, maxPendingRunsOf, toCoreOptions, trustedProxiesOf } from '@flowline/runtime';
import { bootMcpToolbox, createToolRegistry, parseAllowedHosts } from '@flowline/tools';
import { AuditChainer } from './audit/chainer';
import { createApp } from './app';
import type { AppDeps } from './context';
import { startEventFanoutSweep } from './event-fanout';
import { waitpointSigningKey } from './waitpoint-links';
import { apiKeyPepper } from './principals/key-secret';
import type { ManagedKeyOptions } from './principals/managed-keys';
import { apiConfigSchema } from './config';
import { edgeConfigSchema, toEdgeOptions } from './edge/config';
import { attachLive, liveConfigSchema, toLiveOptions } from './live';
import { createMetrics } from './metrics';

const cfg = loadConfig(apiConfigSchema);
const liveCfg = loadConfig(liveConfigSchema);
const edgeCfg = loadConfig(edgeConfigSchema);
const logger = createLogger('api', { level: cfg.LOG_LEVEL });
const shutdown = installShutdown({ logger });
// OTEL_EXPORTER_OTLP_ENDPOINT: request spans; released last, so the final spans are flushed
const tracing = initTracing('api', cfg.OTEL_EXPORTER_OTLP_ENDPOINT);
shutdown.onShutdown(() => tracing.shutdown(), 'tracing');
// process-wide: libs/db seals and opens graphs and documents with it (CONTRACT §7)
configureEncryptionKeys(encryptionKeyRing(cfg));

const pool = createPool(cfg.DATABASE_URL, {
  max: cfg.DATABASE_POOL_MAX,
  connectionTimeoutMs: cfg.DATABASE_ACQUIRE_TIMEOUT_MS,
  applicationName: 'flowline-api',
  onIdleError: (err) => logger.warn({ err }, 'idle Postgres client failed'),
});
shutdown.onShutdown(() => pool.end(), 'postgres');
await migrateAtBoot(pool, cfg.DATABASE_BOOT_WAIT_MS, logger);
// refuses to run without a key stored values may still be sealed with (a rotation not finished)
await checkEncryptionKeys(pool).catch((err: unknown) => {
  logger.fatal({ code: (err as { code?: string }).code, err }, (err as Error).message);
  process.exit(1);
});

const redis = connectRedis({ url: cfg.REDIS_URL, clusterNodes: cfg.REDIS_CLUSTER_NODES }, { maxRetriesPerRequest: 3 });
redis.on('error', (err) => logger.warn({ err }, 'redis error'));
shutdown.onShutdown(async () => {
  await redis.quit();
}, 'redis');

const tools = await createToolRegistry({
  testTools: cfg.WF_TEST_TOOLS === '1',
  modules: (cfg.TOOL_MODULES ?? '').split(',').map((s) => s.trim()).filter(Boolean),
  filesRoot: cfg.TOOL_FILES_ROOT ?? null,
});

// MCP: the API never starts a stdio server (only their names are read, so tenants may name
// them); it lists remote servers' tools at a run start, through the same URL guard as the workers
const mcp = bootMcpToolbox(cfg, (tenant, name) => mcpServerForUse(pool, tenant, name), { spawnStdio: false, logger });
shutdown.onShutdown(() => mcp.toolbox.close(), 'mcp-sessions');

const apiKeys = cfg.API_KEYS ? new Map(Object.entries(cfg.API_KEYS)) : null;
if (apiKeys === null) logger.warn('API_KEYS is unset: single tenant "default", no authentication');

// managed keys: API_KEYS stays the bootstrap (and the tests') way in; keys minted through
// /v1/api-keys are stored as HMACs under this pepper
const pepper = apiKeyPepper({ pepper: cfg.API_KEY_PEPPER, encryptionKey: cfg.ENCRYPTION_KEY ?? cfg.ENCRYPTION_KEYS?.default });
if (apiKeys !== null && pepper.source === 'none') logger.warn('API_KEY_PEPPER and ENCRYPTION_KEY are unset: managed API keys (/v1/api-keys) are disabled, API_KEYS alone authenticates');
else if (pepper.source === 'ENCRYPTION_KEY') logger.info('API_KEY_PEPPER is unset: managed API keys are hashed under a key derived from ENCRYPTION_KEY (rotating it invalidates every managed key)');
const managedKeys: ManagedKeyOptions = {
  pepper: pepper.pepper,
  cacheTtlMs: cfg.API_KEY_CACHE_TTL_MS,
  cacheMax: cfg.API_KEY_CACHE_MAX,
  lastUsedIntervalS: cfg.API_KEY_LAST_USED_INTERVAL_S,
  maxRotationGraceS: cfg.API_KEY_MAX_ROTATION_GRACE_S,
  trustedProxies: trustedProxiesOf(cfg),
};

const signing = waitpointSigningKey({ signingKey: cfg.WAITPOINT_SIGNING_KEY, encryptionKey: cfg.ENCRYPTION_KEY ?? cfg.ENCRYPTION_KEYS?.default, apiKeys: apiKeys?.keys() ?? null });
if (signing.source === 'API_KEYS') logger.warn('WAITPOINT_SIGNING_KEY is unset: waitpoint callback URLs are signed with a key derived from API_KEYS (rotating API_KEYS invalidates open URLs)');

// people signing in to the console through the issuer (absent: by key only)
const oidc: OidcOptions | null = cfg.OIDC_ISSUER && cfg.OIDC_CLIENT_ID
  ? {
      issuer: cfg.OIDC_ISSUER,
      clientId: cfg.OIDC_CLIENT_ID,
      clientSecret: cfg.OIDC_CLIENT_SECRET ?? null,
      redirectUrl: cfg.OIDC_REDIRECT_URL ?? null,
      scopes: cfg.OIDC_SCOPES,
      mapping: {
        userClaim: cfg.OIDC_USER_CLAIM,
        tenantClaim: cfg.OIDC_TENANT_CLAIM,
        fixedTenant: cfg.OIDC_TENANT ?? null,
        groupsClaim: cfg.OIDC_GROUPS_CLAIM,
        groupScopes: cfg.OIDC_GROUP_SCOPES,
      },
      sessionTtlS: cfg.OIDC_SESSION_TTL_S,
      loginTtlS: cfg.OIDC_LOGIN_TTL_S,
    }
  : null;
if (oidc !== null && Object.keys(oidc.mapping.groupScopes).length === 0) logger.warn('OIDC_GROUP_SCOPES is empty: every person is refused sign-in (no group holds a scope)');

const core = toCoreOptions(cfg);
const metrics = createMetrics();
// /readyz answers 503 from the first moment of shutdown (its releaser runs first: registered last)
let draining = false;
const auditOptions = { retentionDays: cfg.AUDIT_RETENTION_DAYS, chainGraceS: cfg.AUDIT_CHAIN_GRACE_S, sweepMs: cfg.AUDIT_SWEEP_MS, chainDelayMs: cfg.AUDIT_CHAIN_DELAY_MS };
const auditChainer = new AuditChainer(pool, auditOptions, logger);
const deps: AppDeps = {
  audit: { chainer: auditChainer, options: auditOptions },
  metrics,
  draining: () => draining,
  pool,
  redis,
  apiKeys,
  managedKeys,
  limits: {
    maxNodesPerDefinition: core.maxNodesPerDefinition,
    maxRunInputBytes: core.maxRunInputBytes,
    eventReplayLimit: cfg.EVENT_REPLAY_LIMIT,
    shardCount: cfg.SHARD_COUNT,
    streamPollMs: cfg.STREAM_POLL_MS,
    maxSteersPerNode: core.maxSteersPerNode,
    maxChatAnswerBytes: cfg.MAX_CHAT_ANSWER_BYTES,
    maxPendingSignalsPerChannel: cfg.MAX_PENDING_SIGNALS_PER_CHANNEL,
    maxSignalPayloadBytes: cfg.MAX_SIGNAL_PAYLOAD_BYTES,
    maxRunWaitS: cfg.MAX_RUN_WAIT_S,
    maxStartDelayDays: cfg.MAX_START_DELAY_DAYS,
    maxBackfillSlots: cfg.MAX_BACKFILL_SLOTS,
    maxConcurrentRuns: cfg.MAX_CONCURRENT_RUNS,
    maxTotalAttempts: core.maxTotalAttempts,
    metadata: { maxKeys: cfg.MAX_RUN_METADATA_KEYS, maxValueChars: cfg.MAX_RUN_METADATA_VALUE_CHARS },
    maxBulkRuns: cfg.MAX_BULK_RUNS,
    maxPendingRuns: maxPendingRunsOf(cfg),
    backlogRetryAfterS: cfg.BACKLOG_RETRY_AFTER_S,
    maxUploadBytes: cfg.MAX_UPLOAD_BYTES,
    maxEventsPerRequest: cfg.MAX_EVENTS_PER_REQUEST,
    webhookMaxBodyBytes: cfg.WEBHOOK_MAX_BODY_BYTES,
  },
  waitpoints: { key: signing.key, publicUrl: cfg.PUBLIC_URL ?? null },
  tools: { catalog: () => tools.catalog(), parserCatalog: () => tools.asParserCatalog() },
  queuePrefix: cfg.QUEUE_PREFIX,
  logger,
  consoleDir: cfg.CONSOLE_DIST_DIR ?? fileURLToPath(new URL('../../console/dist', import.meta.url)),
  edge: toEdgeOptions(edgeCfg),
  bullBoardWrite: cfg.BULL_BOARD_WRITE === '1',
  adminSessionTtlS: cfg.ADMIN_SESSION_TTL_S,
  oidc,
  mcp: {
    toolbox: mcp.toolbox,
    stdioNames: mcp.stdioNames,
    allowedHosts: parseAllowedHosts(cfg.MCP_ALLOWED_HOSTS),
    startCheckTimeoutMs: cfg.MCP_START_CHECK_TIMEOUT_MS,
  },
};
const app = createApp(deps);
// events' fan-outs a crash or a full backlog left undone: finished by whichever replica sweeps first
const stopFanoutSweep = startEventFanoutSweep(deps, { everyMs: cfg.EVENT_FANOUT_SWEEP_MS, minAgeMs: cfg.EVENT_FANOUT_SWEEP_MS, batch: cfg.EVENT_FANOUT_BATCH });
shutdown.onShutdown(stopFanoutSweep, 'event-fanout-sweep');
// audit rows no request chained (a replica ended mid-pass, a row past its grace) and retention
shutdown.onShutdown(auditChainer.start(), 'audit-sweep');

const server = serve({ fetch: app.fetch, port: cfg.PORT }, (info) => {
  logger.info({ port: info.port }, 'api listening');
});
shutdown.onShutdown(
  () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
    }),
  'http',
);
const live = attachLive(server as HttpServer, {
  pool,
  redis,
  apiKeys,
  managedKeys,
  queuePrefix: cfg.QUEUE_PREFIX,
  eventReplayLimit: cfg.EVENT_REPLAY_LIMIT,
  options: toLiveOptions(liveCfg),
  logger,
  metrics,
  sessions: oidc ? new UserSessions(redis, cfg.QUEUE_PREFIX) : null,
});
shutdown.onShutdown(() => live.close(), 'live');
shutdown.onShutdown(() => {
  draining = true;
}, 'readiness');
