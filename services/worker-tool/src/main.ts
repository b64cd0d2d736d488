/**
 * worker-tool process: config → Redis → tool registry → BullMQ worker on the tool
 * lane → graceful shutdown (SIGTERM: stop taking jobs, let in-flight calls finish
 * within SHUTDOWN_GRACE_MS, interrupt the rest, exit 0). An error a tool module leaks
 * (uncaught 'error' event, unhandled rejection) fails the call it belongs to and drains
 * the worker the same way, then exits 1 (installLeakedErrorPolicy).
 */
import { connectRedis, laneTelemetry } from '@flowline/queue';
import { createLogger, encryptionKeyRing, initTracing, installShutdown, laneWorkerSettings, loadConfig, serveLaneWorker, toolRegistrySettings } from '@flowline/runtime';
import { configureEncryptionKeys, createPool, mcpServerForUse, runTenantOf } from '@flowline/db';
import { bootMcpToolbox, createToolRegistry, installLeakedErrorPolicy } from '@flowline/tools';
import { toolWorkerConfigSchema } from './config';
import { createToolWorker } from './worker';

const config = loadConfig(toolWorkerConfigSchema);
const logger = createLogger('worker-tool', { level: config.LOG_LEVEL });
// OTEL_EXPORTER_OTLP_ENDPOINT: each job's process span and the tool call's span
const tracing = initTracing('worker-tool', config.OTEL_EXPORTER_OTLP_ENDPOINT);

const registry = await createToolRegistry({
  ...toolRegistrySettings(config),
  httpFetch: {
    allowPrivate: config.HTTP_FETCH_ALLOW_PRIVATE,
    maxResponseBytes: config.HTTP_FETCH_MAX_RESPONSE_BYTES,
    timeoutMs: config.HTTP_FETCH_TIMEOUT_MS,
  },
});

// MCP tools: the tenant's servers are read from Postgres (headers opened with ENCRYPTION_KEY),
// the deployment's stdio servers from MCP_STDIO_SERVERS_FILE. The pool connects only when an
// MCP tool is called, and is not closed at shutdown (a draining call may still read); exit closes it.
configureEncryptionKeys(encryptionKeyRing(config));
const pool = createPool(config.DATABASE_URL, {
  max: config.MCP_DB_POOL_MAX,
  applicationName: 'flowline-worker-tool',
  onIdleError: (err) => logger.warn({ err }, 'MCP server store connection error'),
});
const mcp = bootMcpToolbox(config, (tenant, name) => mcpServerForUse(pool, tenant, name), { spawnStdio: true, logger }).toolbox;

const redis = connectRedis({ url: config.REDIS_URL, clusterNodes: config.REDIS_CLUSTER_NODES }, { maxRetriesPerRequest: null });
redis.on('error', (err) => logger.warn({ err }, 'redis connection error'));

const worker = createToolWorker({
  redis,
  registry,
  logger,
  ...laneWorkerSettings(config),
  templateLimits: { maxOutputBytes: config.MAX_TEMPLATE_OUTPUT_BYTES, renderLimitMs: config.TEMPLATE_RENDER_LIMIT_MS },
  telemetry: tracing.enabled ? laneTelemetry() : undefined,
  mcp: { toolbox: mcp, tenantOf: (runId) => runTenantOf(pool, runId) },
});

// The worker bounds its own stop (grace + interrupt + abandon); the process-wide
// deadline only guards against a hung Redis close.
const shutdown = installShutdown({ graceMs: config.SHUTDOWN_GRACE_MS + 10_000, logger });
installLeakedErrorPolicy({ logger, drainAndExit: (reason) => void shutdown.shutdown(reason, 1) });
// registered before the worker's releasers, so it runs after the drain (last registered runs
// first): MCP sessions end, and stdio servers exit, once no call needs them
shutdown.onShutdown(() => mcp.close(), 'mcp-sessions');
await serveLaneWorker({ worker, name: 'tool-worker', redis, tracing, shutdown, logger, options: config });
logger.info(
  { concurrency: config.LANE_CONCURRENCY, prefix: config.QUEUE_PREFIX, tools: registry.catalog().map((t) => t.name) },
  'worker-tool ready',
);
