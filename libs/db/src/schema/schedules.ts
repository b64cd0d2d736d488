import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { tenantScoped } from './columns';

/**
 * A tenant's schedules (`/v1/schedules`): a definition started on a cron or interval spec
 * (`spec`, libs/graph ScheduleSpec) under an overlap and catch-up policy (`policy`). `key` is
 * the tenant's own name for it (a POST with a known key updates it). `next_fire_at` is the due
 * index the dispatchers sweep (the next slot plus its deterministic jitter; null: none left or
 * paused); `last_slot_at` the newest slot already decided, from which the next pass counts.
 */
export const schedules = pgTable(
  'schedules',
  {
    id: uuid('id')
      .primaryKey()
      .default(sql`gen_random_uuid()`),
    ...tenantScoped,
    key: text('key').notNull(),
    definitionId: uuid('definition_id').notNull(),
    /** the definition version each run pins; null: the definition's current version at each slot */
    definitionVersion: integer('definition_version'),
    /** a version alias resolved at each slot (not with a pinned version); null: `current` */
    alias: text('alias'),
    /**
     * With a pinned version: that version's graph as `definition_versions` stores it (sealed to the
     * definition and version under ENCRYPTION_KEY), its parsed plan graph (sealed the same way) and
     * hash, copied into each run as the API copies the definition's current ones. Null otherwise.
     */
    pinnedGraph: jsonb('pinned_graph'),
    pinnedPlanGraph: jsonb('pinned_plan_graph'),
    pinnedGraphHash: text('pinned_graph_hash'),
    input: jsonb('input').notNull().default(sql`'null'::jsonb`),
    metadata: jsonb('metadata').notNull().default(sql`'{}'::jsonb`),
    spec: jsonb('spec').notNull(),
    policy: jsonb('policy').notNull(),
    paused: boolean('paused').notNull().default(false),
    /** why it is paused (an operator's note, or the failed run that paused it under pauseOnFailure) */
    pausedReason: text('paused_reason'),
    nextFireAt: timestamp('next_fire_at', { withTimezone: true }),
    lastSlotAt: timestamp('last_slot_at', { withTimezone: true }),
    /** CAS guard of the API's updates */
    version: integer('version').notNull().default(1),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('schedules_tenant_key_uq').on(t.tenantId, t.key),
    index('schedules_tenant_created_idx').on(t.tenantId, t.createdAt.desc(), t.id),
    index('schedules_due_idx')
      .on(t.nextFireAt)
      .where(sql`next_fire_at is not null and not paused`),
  ],
);

/**
 * The slot ledger: one row per slot of a schedule, written exactly once whichever dispatcher
 * decides it (primary key: schedule and slot instant). `outcome`: started, skippedOverlap,
 * skippedCatchup, buffered (waits for the live run to end, then reads started), or
 * cancelledPrevious (started after cancelling the live runs); `run_id` the run it started, `reason`
 * why it did not. `source`: `cron` (the spec's slot), `trigger` (trigger now) or `backfill`.
 */
export const scheduleSlots = pgTable(
  'schedule_slots',
  {
    scheduleId: uuid('schedule_id')
      .notNull()
      .references(() => schedules.id, { onDelete: 'cascade' }),
    ...tenantScoped,
    slotAt: timestamp('slot_at', { withTimezone: true }).notNull(),
    source: text('source').notNull().default('cron'),
    outcome: text('outcome').notNull(),
    runId: uuid('run_id'),
    reason: text('reason'),
    decidedAt: timestamp('decided_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('schedule_slots_pk').on(t.scheduleId, t.slotAt),
    index('schedule_slots_buffered_idx')
      .on(t.scheduleId, t.slotAt)
      .where(sql`outcome = 'buffered'`),
  ],
);
