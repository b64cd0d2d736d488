import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/**
 * Operator intents written by the API (with a wake of the run) and consumed by the
 * planner in `created_at` order. `payload` holds the kind-specific members of the
 * `Intent` union (reason, output, operationId) — `id`, `kind`, `node_key` are columns.
 */
export const intents = pgTable(
  'intents',
  {
    id: uuid('id')
      .primaryKey()
      .default(sql`gen_random_uuid()`),
    runId: uuid('run_id').notNull(),
    kind: text('kind').notNull(),
    nodeKey: text('node_key'),
    payload: jsonb('payload')
      .notNull()
      .default(sql`'{}'::jsonb`),
    /** who asked for it (`service:…`, `key:…`, `anonymous`): the request's principal; null when unknown */
    principal: text('principal'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    appliedAt: timestamp('applied_at', { withTimezone: true }),
  },
  (t) => [
    // retention deletes a pruned run's intents, applied or not (0009_retention.sql)
    index('intents_run_idx').on(t.runId),
    index('intents_unapplied_idx')
      .on(t.runId, t.createdAt)
      .where(sql`applied_at is null`),
  ],
);
