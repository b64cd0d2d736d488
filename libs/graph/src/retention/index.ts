/** Retention of terminal runs: the pruner's pure decision. */
export {
  DAY_MS,
  isRunExpired,
  MAX_RETENTION_DAYS,
  parseTenantRetention,
  planRetention,
  retentionCutoff,
  retentionDaysOf,
  retentionEnabled,
  TenantRetentionError,
} from './retention';
export type { RetentionCutoff, RetentionPolicy } from './retention';
