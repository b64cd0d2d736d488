import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/** Work outcomes that must outlive Redis, one per invocation (first write wins). */
export const nodeResults = pgTable(
  'node_results',
  {
    invocationId: uuid('invocation_id').primaryKey(),
    runId: uuid('run_id').notNull(),
    nodeKey: text('node_key').notNull(),
    /** a `WorkOutcome` of libs/graph */
    outcome: jsonb('outcome').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    appliedAt: timestamp('applied_at', { withTimezone: true }),
  },
  (t) => [
    // retention deletes a pruned run's results, applied or not (0009_retention.sql)
    index('node_results_run_idx').on(t.runId),
    index('node_results_unapplied_idx')
      .on(t.runId)
      .where(sql`applied_at is null`),
  ],
);
