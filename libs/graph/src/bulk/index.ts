/** Run metadata, run search and bulk actions by filter: the pure rules. */
export { checkRunMetadata, DEFAULT_METADATA_LIMITS, MAX_METADATA_KEY_CHARS, METADATA_KEY_PATTERN, metadataKeyProblem, metadataValueProblem } from './metadata';
export type { MetadataCheck, MetadataLimits, RunMetadata } from './metadata';
export { checkRunSearch, isEmptySearch, parseInstant, RUN_SEARCH_MEMBERS } from './run-search';
export type { RunSearch, RunSearchCheck, RunSearchInput } from './run-search';
export { escapeLike, MAX_RUN_SEARCH_TEXT_CHARS, MIN_RUN_ID_PREFIX_CHARS, readRunSearchText } from './run-search-text';
export type { RunSearchText } from './run-search-text';
export {
  BULK_ACTION_RULES,
  BULK_ACTIONS,
  BULK_JOB_STATUSES,
  bulkActionApplies,
  bulkJobStatus,
  bulkOperationId,
  bulkRunOutcome,
  checkBulkRequest,
  retryFailedAnswer,
} from './bulk-action';
export type {
  BulkAction,
  BulkActionRule,
  BulkCandidate,
  BulkForkOptions,
  BulkJobStatus,
  BulkProgress,
  BulkRequest,
  BulkRequestCheck,
  BulkRequestInput,
  BulkRunOutcome,
  BulkVerbAnswer,
} from './bulk-action';
export {
  BULK_MIGRATE_MEMBERS,
  BULK_PAUSE_REASONS,
  bulkBatchLimit,
  bulkCanarySize,
  bulkMigrateAnswer,
  bulkPauseReason,
  checkBulkMigrate,
  DEFAULT_ERROR_RATE_MIN_RUNS,
  INITIAL_BULK_GATE,
  resumedGate,
} from './bulk-migrate';
export type { BulkGateState, BulkMigrateAnswer, BulkMigrateInput, BulkMigrateOptions, BulkPauseReason } from './bulk-migrate';
