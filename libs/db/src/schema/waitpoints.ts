import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { tenantScoped } from './columns';

/**
 * Waitpoints: one row per token or event arm of a parked Wait node, inserted in the plan commit
 * that parks the Wait and settled in the commit that ends it. A token's row is what its signed
 * callback URL (`POST /w/{id}/{signature}`) and `POST /v1/waitpoints/{id}/complete` complete:
 * `waiting` → `completed` by a compare-and-set that also bumps the run's version, so the planner
 * either sees the completion or cannot commit; `expired` and `revoked` are written by the planner
 * (timeout fired, another arm won or the Wait ended) only over `waiting`. `consumed_at` marks the
 * row settled by its Wait (used, expired or withdrawn): the snapshot load reads only unsettled rows.
 */
export const waitpoints = pgTable(
  'waitpoints',
  {
    id: uuid('id').primaryKey(),
    ...tenantScoped,
    runId: uuid('run_id').notNull(),
    nodeKey: text('node_key').notNull(),
    /** the arm's place in the Wait config (0 for a plain Wait) */
    armIndex: integer('arm_index').notNull(),
    /** token | event */
    kind: text('kind').notNull(),
    /** waiting | completed | expired | revoked */
    status: text('status').notNull().default('waiting'),
    /** a token's JSON Schema for its payload */
    schema: jsonb('schema'),
    singleUse: boolean('single_use').notNull().default(true),
    /** an event arm's event name */
    eventName: text('event_name'),
    /** a completed token's body, or the event an event arm took */
    payload: jsonb('payload'),
    eventId: text('event_id'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    completedAt: timestamp('completed_at', { withTimezone: true }),
    consumedAt: timestamp('consumed_at', { withTimezone: true }),
  },
  (t) => [
    index('waitpoints_run_idx').on(t.runId, t.createdAt),
    index('waitpoints_tenant_status_idx').on(t.tenantId, t.status, t.createdAt),
    // the event intake finds the runs an event wakes by its name
    index('waitpoints_event_waiting_idx')
      .on(t.tenantId, t.eventName)
      .where(sql`kind = 'event' and consumed_at is null`),
  ],
);
