import { index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { tenantScoped } from './columns';

/**
 * Inbound webhooks: `POST /hooks/{tenant}/{slug}` verified (`auth`, with `secrets` sealed at rest
 * and never read back) and turned into a run of a definition or an event (`target`). Resolved
 * from here on every request, by every API replica: no in-memory registration to lose.
 */
export const webhooks = pgTable(
  'webhooks',
  {
    id: uuid('id').primaryKey(),
    ...tenantScoped,
    slug: text('slug').notNull(),
    /** `{ definitionId }` or `{ event }` */
    target: jsonb('target').notNull(),
    /** the verification without its secrets: `{ type, preset?, toleranceSec?, header?, algorithm?, encoding?, prefix? }` */
    auth: jsonb('auth').notNull(),
    /** sealed JSON `[{ id, value, notAfter }]` */
    secrets: jsonb('secrets').notNull(),
    /** the header whose value makes a delivery a duplicate (null: none) */
    dedupeHeader: text('dedupe_header'),
    maxBodyBytes: integer('max_body_bytes').notNull(),
    /** `{ mode: 'async' | 'sync', timeoutMs }` */
    response: jsonb('response').notNull(),
    version: integer('version').notNull().default(1),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('webhooks_tenant_slug_idx').on(t.tenantId, t.slug)],
);

/**
 * Every delivery to a webhook with its verdict (verified, badSignature, stale, duplicate,
 * tooLarge, noMatch, refused), what it started, and its body (sealed) so a verified one can be
 * replayed.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey(),
    ...tenantScoped,
    webhookId: uuid('webhook_id').notNull(),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
    verdict: text('verdict').notNull(),
    /** the HTTP status answered */
    status: integer('status').notNull(),
    reason: text('reason'),
    /** the dedupe header's value, when the hook names one and the request carried it */
    dedupeKey: text('dedupe_key'),
    contentType: text('content_type'),
    /** sealed JSON `{ b64 }` of the raw body: null for a refused signature or a body over the bound */
    body: jsonb('body'),
    runId: uuid('run_id'),
    eventId: text('event_id'),
  },
  (t) => [index('webhook_deliveries_hook_idx').on(t.webhookId, t.receivedAt.desc(), t.id)],
);
