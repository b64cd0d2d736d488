/** Migration of a live run to another version of its definition: the pure decision and the rows it leaves. */
export { freshRow, hasStarted, keptOverrides, MIGRATION_REASON_CODES, planMigration } from './migration-plan';
export type { MigrationAction, MigrationMapping, MigrationPlan, MigrationReason, MigrationReasonCode, MigrationRequest, MigrationVerdict } from './migration-plan';
export { applyMigration, migrateSnapshot } from './apply-migration';
export { planRunMigration } from './plan-run-migration';
export type { MigratedRun } from './apply-migration';
