import { sql } from 'drizzle-orm';
import { boolean, index, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { tenantScoped } from './columns';

/**
 * Events sent to the deployment (`POST /v1/events`), kept so a Wait's event arm can take one
 * received after it began. `id` is the sender's (or a generated) id: the same id again within a
 * tenant is the same event (deduplicated, never a second row). Distinct from `events`, a run's
 * own change log.
 */
export const inboundEvents = pgTable(
  'inbound_events',
  {
    ...tenantScoped,
    id: text('id').notNull(),
    name: text('name').notNull(),
    data: jsonb('data').notNull(),
    /** the sender's timestamp, when given */
    ts: timestamp('ts', { withTimezone: true }),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
    /**
     * True until every definition subscribed to its name has been judged (and its run started):
     * the intake fans out at once, and a sweep finishes what a crashed or refused fan-out left.
     */
    fanoutDue: boolean('fanout_due').notNull().default(false),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.id] }),
    index('inbound_events_name_idx').on(t.tenantId, t.name, t.receivedAt),
    // GET /v1/events without a name: the tenant's newest first, a page at a time
    index('inbound_events_received_idx').on(t.tenantId, t.receivedAt, t.id),
    index('inbound_events_fanout_idx').on(t.receivedAt).where(sql`${t.fanoutDue}`),
  ],
);

/**
 * What each subscribed definition made of an event (`GET /v1/events/{id}`): matched (with the
 * run it started), notMatched or filterError (with why), or deferred (the start was refused for
 * now, e.g. the tenant's backlog is full; the sweep tries again). One row per event and
 * definition, rewritten by a replay.
 */
export const eventMatches = pgTable(
  'event_matches',
  {
    ...tenantScoped,
    eventId: text('event_id').notNull(),
    definitionId: uuid('definition_id').notNull(),
    /** 'matched' | 'notMatched' | 'filterError' | 'deferred' | 'refused' */
    outcome: text('outcome').notNull(),
    reason: text('reason'),
    runId: uuid('run_id'),
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.eventId, t.definitionId] })],
);
