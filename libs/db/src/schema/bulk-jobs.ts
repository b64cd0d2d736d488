import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { tenantScoped } from './columns';

/**
 * Bulk actions by filter (`POST /v1/runs/bulk`): one row per job. The set of runs
 * is fixed at submission in `bulk_job_runs`; a dispatcher claims the job with a lease
 * (`lease_owner` until `lease_expires_at`, renewed per batch) and works through the runs in
 * id order from `cursor`, so a replica killed mid-way leaves the job to another, which
 * resumes after the last batch committed.
 */
export const bulkJobs = pgTable(
  'bulk_jobs',
  {
    id: uuid('id').primaryKey(),
    ...tenantScoped,
    requestId: text('request_id'),
    /** cancel | retry-failed | resume | fork | migrate (libs/graph BULK_ACTIONS) */
    action: text('action').notNull(),
    /** the checked RunSearch the job was submitted with */
    filter: jsonb('filter').notNull(),
    /** the action's options (fork: fromNodeKey, failedOnly; migrate: toVersion, nodeMap, canaryPercent, maxErrorRate), else {} */
    options: jsonb('options')
      .notNull()
      .default(sql`'{}'::jsonb`),
    /** Pending | Running | Paused | Completed | Failed (libs/graph bulkJobStatus) */
    status: text('status').notNull(),
    total: integer('total').notNull(),
    /** runs applied or with nothing left to do */
    done: integer('done').notNull().default(0),
    /** runs the action was refused on */
    failed: integer('failed').notNull().default(0),
    /** the last run id processed (runs are processed in id order), null before the first batch */
    cursor: uuid('cursor'),
    leaseOwner: text('lease_owner'),
    leaseExpiresAt: timestamp('lease_expires_at', { withTimezone: true }),
    /** times a dispatcher claimed the job (more than 1: a replica took it over) */
    claims: integer('claims').notNull().default(0),
    /** why a Paused job stopped: canary | errorRate (libs/graph BULK_PAUSE_REASONS); null otherwise */
    pauseReason: text('pause_reason'),
    /** a migrate's canary share was released by a resume (the job no longer stops after it) */
    canaryReleased: boolean('canary_released').notNull().default(false),
    /** done and failed at the last resume: a migrate's error rate is measured over the runs processed since */
    rateBaseDone: integer('rate_base_done').notNull().default(0),
    rateBaseFailed: integer('rate_base_failed').notNull().default(0),
    /** the principal that submitted the job: the intents it writes record it; null when unknown */
    createdBy: text('created_by'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('bulk_jobs_tenant_request_uq')
      .on(t.tenantId, t.requestId)
      .where(sql`request_id is not null`),
    index('bulk_jobs_open_idx')
      .on(t.createdAt)
      .where(sql`status in ('Pending', 'Running')`),
  ],
);

/** The runs of a job, fixed at submission; `outcome` (applied | noop | refused) once processed. */
export const bulkJobRuns = pgTable(
  'bulk_job_runs',
  {
    bulkId: uuid('bulk_id').notNull(),
    runId: uuid('run_id').notNull(),
    outcome: text('outcome'),
    /** why the action was refused on this run (a code), else null */
    reason: text('reason'),
    /** a refused migrate's planner reasons `[{code, nodeKey, message}]`, else null */
    details: jsonb('details'),
  },
  (t) => [primaryKey({ columns: [t.bulkId, t.runId] })],
);
