import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { tenantScoped } from './columns';

/**
 * Signals sent to a run (`POST /v1/runs/{id}/signals`), kept until a Wait node of the run
 * consumes them: a signal that arrives before its Wait is reached waits here, so there is no
 * window in which one is lost. The planner consumes the oldest unconsumed signal of a channel
 * (`created_at`, then `id`); the consumption (`consumed_at`, `consumed_by`) commits in the
 * run's version-guarded apply, with the Wait's success. `request_id` makes a send idempotent
 * per run.
 */
export const runSignals = pgTable(
  'run_signals',
  {
    id: uuid('id')
      .primaryKey()
      .default(sql`gen_random_uuid()`),
    runId: uuid('run_id').notNull(),
    ...tenantScoped,
    channel: text('channel').notNull(),
    payload: jsonb('payload').notNull(),
    requestId: text('request_id').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    consumedAt: timestamp('consumed_at', { withTimezone: true }),
    /** the Wait node that consumed it */
    consumedBy: text('consumed_by'),
  },
  (t) => [
    uniqueIndex('run_signals_request_idx').on(t.runId, t.requestId),
    index('run_signals_unconsumed_idx')
      .on(t.runId, t.channel, t.createdAt)
      .where(sql`consumed_at is null`),
  ],
);
