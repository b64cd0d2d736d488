import { index, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
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
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.id] }), index('inbound_events_name_idx').on(t.tenantId, t.name, t.receivedAt)],
);
