export { parseConfig, parseConfigOrThrow, loadConfig, ConfigError } from './config';
export type { ConfigResult, LoadConfigIo } from './config';
export {
  connectionOptions,
  httpOptions,
  apiKeyOptions,
  trustedProxiesOf,
  coreOptions,
  templateOptions,
  dispatchOptions,
  backlogOptions,
  maxPendingRunsOf,
  MAX_PENDING_RUNS_CEILING,
  workerOptions,
  mcpOptions,
  encryptionOptions,
  auditOptions,
  encryptionKeyRing,
  resealOptions,
  logOptions,
  allOptions,
  defineConfig,
  toCoreOptions,
  describeOptions,
  API_KEY_SCOPES,
  TENANT_SCOPES,
  hashTagOf,
} from './options';
export type { ApiKeyGrant, ApiKeyScope, RedisClusterSeed } from './options';
export { oidcIssue, oidcOptions, parseGroupScopes } from './oidc-options';
export { approvalLinkPath, approvalLinkSignature, signedLinkOptions, verifyApprovalLink, waitpointSigningKey, type SigningKeySource } from './signed-links';
export { createLogger, REDACT_PATHS } from './logger';
export { redactUrlUserinfo, serializeError } from './redact';
export type { Logger, CreateLoggerOptions } from './logger';
export { runLoop, runPasses, wakeableSleep } from './service';
export type { Service, RunLoopOptions, LoopHandle } from './service';
export { createShutdown, installShutdown, onShutdown } from './shutdown';
export type { Shutdown, ShutdownOptions, Releaser } from './shutdown';
export { systemClock } from './clock';
export type { Clock } from './clock';
export { opsOptions, createMetricsRegistry, startOpsServer, startWorkerOpsPort } from './ops-server';
export { flagOption, laneWorkerOptions, laneWorkerSettings, serveLaneWorker, toolModulesOf, toolRegistrySettings } from './lane-process';
export { metricsOn } from './metric-helpers';
export type { MetricsOn } from './metric-helpers';
export type { LaneProcessWorker, ServeLaneWorkerOptions } from './lane-process';
export type { OpsServer, OpsServerOptions, Unready } from './ops-server';
export { workerStallOptions, stallReason, checkStall } from './worker-stall';
export type { WorkerProgress } from './worker-stall';
export {
  tracingOptions,
  initTracing,
  tracingEnabled,
  flowlineTracer,
  activeTraceParent,
  activeTraceId,
  contextOfTraceParent,
  contextOfHeaders,
  withSpan,
  startSpan,
  contextWithSpan,
  SpanKind,
  SpanStatusCode,
} from './tracing';
export type { Tracing, SpanOptions, Span, Attributes, Context } from './tracing';
