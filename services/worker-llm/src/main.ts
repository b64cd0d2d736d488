/**
 * worker-llm process: config → Redis → providers and tool registry → BullMQ worker on
 * the llm lane → graceful shutdown (SIGTERM: stop taking jobs, let in-flight calls
 * finish within SHUTDOWN_GRACE_MS, interrupt the rest, exit 0). Without LLM_BASE_URL
 * the built-in deterministic `scripted` provider answers. With LLM_BASE_URL and no
 * LLM_MODEL the provider's GET /models names the model: several models stop the boot
 * (or, found later, shut the worker down with exit 1); no answer yet keeps asking in the
 * background.
 */
import { connectRedis, laneTelemetry } from '@flowline/queue';
import {
  createLogger,
  encryptionKeyRing,
  createMetricsRegistry,
  initTracing,
  installShutdown,
  laneWorkerSettings,
  loadConfig,
  serveLaneWorker,
  toolRegistrySettings,
} from '@flowline/runtime';
import { bootMcpToolbox, createToolRegistry, installLeakedErrorPolicy } from '@flowline/tools';
import { configureEncryptionKeys, createPool, mcpServerForUse, pgFileStore, runTenantOf, savedAgentForNode } from '@flowline/db';
import { fileStoreResolver, loadAttachmentResolver, type AttachmentResolver } from './attachment-resolver';
import { llmWorkerConfigSchema } from './config';
import { ambiguityMessage } from './providers/model-discovery';
import { createProviderRegistry } from './providers/registry';
import { createLlmWorkerMetrics } from './metrics';
import { createLlmWorker } from './worker';
import { pgAgentSteps } from './nodes/agent-transcript';

const config = loadConfig(llmWorkerConfigSchema);
const logger = createLogger('worker-llm', { level: config.LOG_LEVEL });
// OTEL_EXPORTER_OTLP_ENDPOINT: each job's process span, the node's span and its model calls' (GenAI attributes)
const tracing = initTracing('worker-llm', config.OTEL_EXPORTER_OTLP_ENDPOINT);

const tools = await createToolRegistry({ ...toolRegistrySettings(config), httpFetch: { allowPrivate: config.HTTP_FETCH_ALLOW_PRIVATE } });

// Reads uploads (the default attachment resolver) and the tenants' MCP server records, and
// writes Agent transcripts. The
// pool opens a connection only when one is read, and is not closed at shutdown (releasers run
// before the drain, while a draining node may still be reading); exit closes it.
const pool = createPool(config.DATABASE_URL, {
  max: config.FILE_STORE_POOL_MAX,
  applicationName: 'flowline-worker-llm',
  onIdleError: (err) => logger.warn({ err }, 'file store connection error'),
});
// MCP server headers are sealed with ENCRYPTION_KEY
configureEncryptionKeys(encryptionKeyRing(config));
const mcp = bootMcpToolbox(config, (tenant, name) => mcpServerForUse(pool, tenant, name), { spawnStdio: true, logger }).toolbox;

let attachmentResolver: AttachmentResolver;
// The default: uploads read from the file store as the run's tenant.
if (config.ATTACHMENT_RESOLVER_MODULE === undefined) {
  attachmentResolver = fileStoreResolver(pgFileStore(pool), (runId) => runTenantOf(pool, runId), {
    maxImageBytes: config.MAX_ATTACHMENT_IMAGE_BYTES,
    maxTextFileBytes: config.MAX_ATTACHMENT_FILE_BYTES,
  });
} else {
  try {
    attachmentResolver = await loadAttachmentResolver(config.ATTACHMENT_RESOLVER_MODULE);
  } catch (err) {
    // As loadConfig reports an invalid option: the message names the option and the module.
    process.stderr.write(`invalid configuration:\n  ${err instanceof Error ? err.message : 'ATTACHMENT_RESOLVER_MODULE: cannot load'}\n`);
    process.exit(1);
  }
}

const providers = createProviderRegistry({
  baseUrl: config.LLM_BASE_URL ?? null,
  apiKey: config.LLM_API_KEY ?? null,
  defaultModel: config.LLM_MODEL ?? null,
  providers: config.LLM_PROVIDERS,
  maxConcurrentCalls: config.LLM_MAX_CONCURRENT_CALLS,
  tokensPerMinute: config.LLM_TOKENS_PER_MINUTE,
  stream: config.LLM_STREAM,
  logprobs: config.LLM_LOGPROBS,
  vision: config.LLM_VISION,
  timeoutMs: config.LLM_REQUEST_TIMEOUT_MS,
  onErrorDetail: (invocationId, detail) => logger.debug({ invocationId, ...detail }, 'model provider error'),
  logger,
  discovery: {
    timeoutMs: config.LLM_MODELS_TIMEOUT_MS,
    retryMinMs: config.LLM_MODELS_RETRY_MIN_MS,
    retryMaxMs: config.LLM_MODELS_RETRY_MAX_MS,
    // the worker cannot choose: it drains what it runs and exits 1 (its next boot says why)
    onAmbiguous: () => void shutdown.shutdown('LLM_MODEL is unset and the provider serves several models', 1),
  },
});

if (providers.discovery) {
  const found = await providers.discovery.refresh();
  if (found.kind === 'ambiguous') {
    // As loadConfig reports an invalid option: the message names LLM_MODEL and the ids.
    process.stderr.write(`invalid configuration:\n  ${ambiguityMessage(found.models)}\n`);
    process.exit(1);
  }
}

const redis = connectRedis({ url: config.REDIS_URL, clusterNodes: config.REDIS_CLUSTER_NODES }, { maxRetriesPerRequest: null });
redis.on('error', (err) => logger.warn({ err }, 'redis connection error'));

const registry = createMetricsRegistry();
const worker = createLlmWorker({
  metrics: createLlmWorkerMetrics(registry),
  redis,
  providers,
  tools,
  logger,
  ...laneWorkerSettings(config),
  telemetry: tracing.enabled ? laneTelemetry() : undefined,
  maxInputBytes: config.MAX_RUN_INPUT_BYTES,
  templateLimits: { maxOutputBytes: config.MAX_TEMPLATE_OUTPUT_BYTES, renderLimitMs: config.TEMPLATE_RENDER_LIMIT_MS },
  attachments: { resolver: attachmentResolver, maxTextBytes: config.MAX_ATTACHMENT_TEXT_BYTES },
  admissionLeaseMs: config.LLM_ADMISSION_LEASE_MS,
  activityMaxLen: config.LLM_ACTIVITY_MAXLEN,
  activityTtlSeconds: config.LLM_ACTIVITY_TTL_SECONDS,
  mcp: { toolbox: mcp, tenantOf: (runId) => runTenantOf(pool, runId) },
  savedAgent: (runId, nodeKey, ref) => savedAgentForNode(pool, runId, nodeKey, ref),
  // each Agent step is checkpointed in Postgres: a kill, a Redis flush or a park resumes from it
  agentSteps: pgAgentSteps(pool),
  maxTranscriptBytes: config.MAX_AGENT_TRANSCRIPT_BYTES,
});

const shutdown = installShutdown({ graceMs: config.SHUTDOWN_GRACE_MS + 10_000, logger });
// registered before the worker's releasers, so it runs after the drain (last registered runs
// first): MCP sessions end, and stdio servers exit, once no Agent needs them
shutdown.onShutdown(() => mcp.close(), 'mcp-sessions');
// an Agent's tools include TOOL_MODULES: a leaked error fails its call, then the worker drains and exits 1
installLeakedErrorPolicy({ logger, drainAndExit: (reason) => void shutdown.shutdown(reason, 1) });
await serveLaneWorker({
  worker,
  name: 'llm-worker',
  redis,
  tracing,
  shutdown,
  logger,
  options: config,
  registry,
  releasers: [[() => providers.discovery?.stop(), 'model-discovery']],
});
// the provider may start after the worker: keep asking until it names the model
providers.discovery?.start();
logger.info(
  { concurrency: config.LANE_CONCURRENCY, prefix: config.QUEUE_PREFIX, defaultProvider: providers.defaultName },
  'worker-llm ready',
);
