/**
 * Dispatcher process: config → Postgres pool → Redis → migrate → dispatcher →
 * graceful shutdown (SIGTERM/SIGINT: stop loops, release shards, close clients, exit 0).
 */
import { checkEncryptionKeys, configureEncryptionKeys, createPool, migrateAtBoot, onUnreadableRun } from '@flowline/db';
import { connectRedis, publishWake } from '@flowline/queue';
import { createLogger, encryptionKeyRing, createMetricsRegistry, initTracing, installShutdown, loadConfig, maxPendingRunsOf } from '@flowline/runtime';
import { createResealMetrics, NO_RESEAL_METRICS, startReseal } from './reseal';
import { dispatcherConfigSchema } from './config';
import { createDispatcher } from './dispatcher';
import { createDispatcherMetrics, NO_METRICS, type DispatcherReadings } from './metrics';
import { startDispatcherOps } from './ops';
import { startBulkRunner } from './bulk-jobs';
import { createRetentionMetrics, NO_RETENTION_METRICS, retentionPolicyOf, startRetention } from './retention';
import { createScheduleMetrics, NO_SCHEDULE_METRICS, startScheduleFirer } from './schedule-fire';

const config = loadConfig(dispatcherConfigSchema);
const log = createLogger('dispatcher', { level: config.LOG_LEVEL });
const shutdown = installShutdown({ logger: log, graceMs: 15_000 });
// OTEL_EXPORTER_OTLP_ENDPOINT: a span per node dispatch; released last, so the final spans are flushed
const tracing = initTracing('dispatcher', config.OTEL_EXPORTER_OTLP_ENDPOINT);
shutdown.onShutdown(() => tracing.shutdown(), 'tracing');
// process-wide: libs/db seals and opens graphs and documents with it (CONTRACT §7)
configureEncryptionKeys(encryptionKeyRing(config));
// a run with a value that does not decrypt is left out of ticks (named, never its content);
// it stays due, so each run is logged at most once per UNREADABLE_LOG_EVERY_MS
const UNREADABLE_LOG_EVERY_MS = 300_000;
const unreadableLoggedAt = new Map<string, number>();
onUnreadableRun((runId, err) => {
  const now = Date.now();
  if (now - (unreadableLoggedAt.get(runId) ?? -Infinity) < UNREADABLE_LOG_EVERY_MS) return;
  if (unreadableLoggedAt.size >= 10_000) unreadableLoggedAt.clear();
  unreadableLoggedAt.set(runId, now);
  log.error({ runId, code: err.code, details: err.details }, 'run left out: stored value cannot be decrypted (logged once per 5 min)');
});

const pool = createPool(config.DATABASE_URL, {
  applicationName: `flowline-dispatcher:${config.DISPATCHER_ID}`,
  onIdleError: (err) => log.warn({ err }, 'idle Postgres client failed'),
});
shutdown.onShutdown(() => pool.end(), 'postgres');
const redis = connectRedis({ url: config.REDIS_URL, clusterNodes: config.REDIS_CLUSTER_NODES }, { maxRetriesPerRequest: null });
redis.on('error', (err) => log.warn({ err }, 'redis error'));
shutdown.onShutdown(() => redis.disconnect(), 'redis');

await migrateAtBoot(pool, config.DATABASE_BOOT_WAIT_MS, log);
// refuses to run without a key stored values may still be sealed with (a rotation not finished)
await checkEncryptionKeys(pool).catch((err: unknown) => {
  log.fatal({ code: (err as { code?: string }).code, err }, (err as Error).message);
  process.exit(1);
});
// /readyz answers 503 from the first moment of shutdown; the ops port closes last
let draining = false;
// the ops port starts before the dispatcher exists: its watchdog counts read through this
let stuckCounts: () => Readonly<Record<string, number>> | null = () => null;
let readings: DispatcherReadings | null = null;
let metrics = NO_METRICS;
let retentionMetrics = NO_RETENTION_METRICS;
let scheduleMetrics = NO_SCHEDULE_METRICS;
let resealMetrics = NO_RESEAL_METRICS;
if (config.OPS_PORT !== undefined) {
  const registry = createMetricsRegistry();
  metrics = createDispatcherMetrics(registry, () => readings);
  retentionMetrics = createRetentionMetrics(registry);
  scheduleMetrics = createScheduleMetrics(registry);
  resealMetrics = createResealMetrics(registry);
  const ops = await startDispatcherOps({
    port: config.OPS_PORT,
    registry,
    readyTimeoutMs: config.READY_CHECK_TIMEOUT_MS,
    pool,
    redis,
    queuePrefix: config.QUEUE_PREFIX,
    draining: () => draining,
    stuck: () => stuckCounts(),
    logger: log,
  });
  shutdown.onShutdown(() => ops.close(), 'ops-port');
}
const dispatcher = createDispatcher({ config, pool, redis, log, metrics });
stuckCounts = () => dispatcher.totals().stuck;
readings = {
  id: dispatcher.id,
  shardsOwned: () => dispatcher.ownedShards().length,
  leaseRenewFailures: () => dispatcher.totals().leaseRenewFailures,
  healed: () => dispatcher.totals().healed,
};
shutdown.onShutdown(() => dispatcher.stop(), 'dispatcher');
shutdown.onShutdown(() => {
  draining = true;
}, 'readiness');
await dispatcher.start();
// retention pruner: stops before the pool closes (releasers run last-in first-out)
const retention = startRetention({
  pool,
  policy: retentionPolicyOf(config),
  batchSize: config.RETENTION_BATCH_SIZE,
  batchPauseMs: config.RETENTION_BATCH_PAUSE_MS,
  intervalMs: config.RETENTION_INTERVAL_MS,
  log,
  metrics: retentionMetrics,
});
if (retention) shutdown.onShutdown(() => retention.stop(), 'retention');
// bulk actions by filter: any replica claims an open job under a lease
const bulk = startBulkRunner({
  pool,
  redis,
  queuePrefix: config.QUEUE_PREFIX,
  shardCount: config.SHARD_COUNT,
  owner: dispatcher.id,
  batchSize: config.BULK_BATCH_SIZE,
  leaseMs: config.BULK_LEASE_MS,
  batchPauseMs: config.BULK_BATCH_PAUSE_MS,
  errorRateMinRuns: config.BULK_ERROR_RATE_MIN_RUNS,
  pollMs: config.BULK_POLL_MS,
  log,
});
shutdown.onShutdown(() => bulk.stop(), 'bulk-jobs');
// schedules: any replica fires due slots; the ledger's key and the runs' request ids make each slot once
const schedules = startScheduleFirer({
  pool,
  shardCount: config.SHARD_COUNT,
  maxPendingRuns: maxPendingRunsOf(config),
  batchSize: config.SCHEDULE_BATCH_SIZE,
  maxSlotsPerPass: config.SCHEDULE_MAX_SLOTS_PER_PASS,
  onTimeMs: config.SCHEDULE_ON_TIME_MS,
  pollMs: config.SCHEDULE_POLL_MS,
  log,
  metrics: scheduleMetrics,
  wake: (runId, tenantId) => publishWake(redis, { runId, tenantId }, config.QUEUE_PREFIX, config.SHARD_COUNT),
});
shutdown.onShutdown(() => schedules.stop(), 'schedules');
// key rotation: values sealed with an older ENCRYPTION_KEYS entry are moved to the current one
const reseal = startReseal({ pool, intervalMs: config.ENCRYPTION_RESEAL_INTERVAL_MS, batch: config.ENCRYPTION_RESEAL_BATCH, log, metrics: resealMetrics });
if (reseal) shutdown.onShutdown(() => reseal.stop(), 'reseal');
