export * from './schema';
export { createPool, PoolTimeoutError } from './pool';
export type { Pool, PoolClient, PoolOptions } from './pool';
export {
  configureEncryption,
  configureEncryptionKeys,
  currentKeyId,
  DEFAULT_KEY_ID,
  encryptionEnabled,
  EncryptedValueError,
  onUnreadableRun,
  openJson,
  openJsonText,
  sealJson,
  sealJsonText,
} from './crypto';
export type { Envelope, KeyRing, Sealed } from './crypto';
export { checkEncryptionKeys, EncryptionKeyMissingError, olderKeysInUse, resealPass, SEALED_COLUMNS, staleValueCount } from './reseal';
export type { ResealOptions, ResealPass, SealedColumn } from './reseal';
export { FUNCTIONS_FOLDER, functionSources, migrate, migrateAtBoot, migrationsHash, MIGRATIONS_FOLDER, type BootLog, type FunctionSource } from './migrate';
export * from './store/definitions';
export * from './store/definition-versions';
export * from './store/definition-aliases';
export * from './store/run-create';
export * from './store/run-fork';
export * from './store/run-migrate';
export * from './store/run-reads';
export * from './store/intents';
export * from './store/approvals';
export { claimConcurrency, loadSnapshots, SLOT_HOLDING_RUN_STATUSES } from './store/run-snapshots';
export type { LoadedSnapshot, LoadSnapshotsOptions } from './store/run-snapshots';
export { applyPlans, forceQuarantine, toApplyItem } from './store/run-apply';
export { getRunState, insertStateSeed, loadStateLog, loadStateLogs } from './store/run-state';
export type { ApplyItem, ApplyOptions, ApplyOutcome } from './store/run-apply';
export { dueRuns, setWake } from './store/run-wake';
export { getRunSignalChannels, sendSignal, type SendSignalInput, type SendSignalOutcome } from './store/run-signals';
export {
  completeWaitpoint, decodeWaitpointCursor, getWaitpoint, listWaitpoints, revokeWaitpoint, WAITPOINT_STATUSES,
  type CompleteWaitpointOutcome, type ListWaitpointsParams, type RevokeWaitpointOutcome, type WaitpointRecord, type WaitpointStatus,
} from './store/waitpoints';
export { sendInboundEvents, type InboundEventInput } from './store/inbound-events';
export {
  eventsDueForFanout,
  eventSubscribers,
  getInboundEvent,
  inboundEventsByIds,
  isEventCursor,
  listEventMatches,
  listInboundEvents,
  recordEventFanout,
  type EventMatch,
  type EventListQuery,
  type EventMatchRow,
  type EventSubscriber,
  type ListedEvent,
  type StoredEvent,
} from './store/event-fanout';
export { claimShards, deadDispatcherExists, DispatcherLiveness, heldShardCount, releaseShards } from './store/shard-leases';
export { getRunBlockerFacts } from './store/blocker-facts';
export { stuckRunCandidates, WATCHED_RUN_STATUSES } from './store/stuck-runs';
export type { RunBlockerFacts } from './store/blocker-facts';
export { findRunsWithInflightWork, reconcileInlineRunning } from './store/reconcile';
export type { InflightWork } from './store/reconcile';
export * from './store/operator';
export * from './store/conversations';
export { NestedConnectionError, withTransaction, rollback } from './store/transaction';
export type { Queryable, Tx } from './store/transaction';
export { agentStepAt, appendAgentStep, listAgentSteps, loadAgentSteps, pendingToolCall } from './store/agent-steps';
export type { AgentStepPage, AgentStepRead } from './store/agent-steps';
export type { AgentStep, AgentStepKind, PendingToolCall } from './store/agent-steps';
export { pruneExpiredRuns, tenantsWithTerminalRuns, withRetentionLock } from './store/retention';
export type { PruneCounts } from './store/retention';
export { claimBulkJob, countBulkCandidates, failedNodesOf, getBulkJob, listBulkJobRuns, nextBulkRuns, recordBulkBatch, resumeBulkJob, submitBulkJob } from './store/bulk-jobs';
export type { BulkGateOptions, BulkJobRow, BulkJobRunRow, BulkRunResult, ResumeBulkResult, SubmitBulkParams, SubmitBulkResult } from './store/bulk-jobs';
export { runSearchSql } from './store/run-search';
export { DEFAULT_FILE_CHUNK_BYTES, fileKindOf, FileTooLargeError, pgFileStore, runTenantOf } from './store/files';
export type { FilePutOptions, FileStore, StoredFile } from './store/files';
export {
  createMcpServer,
  deleteMcpServer,
  existingMcpServerNames,
  getMcpServer,
  listMcpServers,
  mcpServerForUse,
  McpServerNameTakenError,
  updateMcpServer,
} from './store/mcp-servers';
export type { McpServerForUse, McpServerInput, McpServerRecord } from './store/mcp-servers';
export {
  createSavedAgent,
  decodeAgentCursor,
  decodeAgentVersionCursor,
  deleteSavedAgent,
  getSavedAgent,
  isSavedAgentId,
  listSavedAgents,
  listSavedAgentVersions,
  pinSavedAgents,
  savedAgentCatalog,
  savedAgentForNode,
  SavedAgentNameTakenError,
  updateSavedAgent,
} from './store/saved-agents';
export type { AgentPinRequest, AgentPins, PinnedSavedAgent, SavedAgentInput, SavedAgentRecord, SavedAgentVersionSummary } from './store/saved-agents';
export {
  deleteWebhook,
  getDelivery,
  getWebhook,
  insertWebhook,
  listDeliveries,
  listWebhooks,
  publicWebhook,
  recordDelivery,
  updateWebhook,
  webhookBySlug,
  type DeliveryInput,
  type DeliveryRow,
  type DeliveryVerdict,
  type WebhookAuth,
  type WebhookForDelivery,
  type WebhookInput,
  type WebhookResponse,
  type WebhookRow,
  type WebhookSecret,
  type WebhookTarget,
} from './store/webhooks';
export * from './store/schedules';
export { claimAuditEntry, currentAuditEntry, insertAuditRow, recordAuditOutcome, runWithAuditEntry } from './store/audit-context';
export type { AuditEntry } from './store/audit-context';
export { chainAudit, chainAuditFully, exportAudit, listAudit, pruneAudit, tenantsWithAuditChain, tenantsWithPendingAudit, verifyAudit } from './store/audit';
export type { AuditFilter, AuditPage, AuditRecord, AuditVerification } from './store/audit';
export {
  decodeApiKeyCursor,
  definitionOfSubject,
  getApiKey,
  insertApiKey,
  listApiKeys,
  resolveApiKeySecret,
  revokeApiKey,
  rotateApiKey,
  touchApiKey,
} from './store/api-keys';
export type { ApiKeyConstraints, ApiKeyInsert, ApiKeyRecord, DefinitionSubject, ResolvedApiKey } from './store/api-keys';
