import { sql } from 'drizzle-orm';
import { bigserial, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { tenantScoped } from './columns';

/**
 * A chat conversation of a tenant (CONTRACT §5): its id is client-chosen (1–128 chars).
 * `bound_run_id` is the run the last accepted message started; a new message may start a
 * run only while that run is terminal (compare-and-set on this column, see
 * store/conversations.ts), which makes "one live run per conversation" race-free.
 */
export const conversations = pgTable(
  'conversations',
  {
    ...tenantScoped,
    id: text('id').notNull(),
    boundRunId: uuid('bound_run_id'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.id] })],
);

/**
 * Messages of a conversation, oldest first by `seq`. A user message started run `run_id`
 * (its `request_id` is the send's idempotency key); an assistant message was published by
 * node `node_key` (attempt `attempt`) of run `run_id` under a deterministic id, so a
 * publish repeated after a crash inserts nothing.
 */
export const messages = pgTable(
  'messages',
  {
    id: uuid('id').primaryKey(),
    seq: bigserial('seq', { mode: 'number' }).notNull(),
    ...tenantScoped,
    conversationId: text('conversation_id').notNull(),
    role: text('role').notNull(),
    text: text('text').notNull(),
    attachments: jsonb('attachments')
      .notNull()
      .default(sql`'[]'::jsonb`),
    runId: uuid('run_id'),
    nodeKey: text('node_key'),
    attempt: integer('attempt'),
    requestId: text('request_id'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('messages_conversation_seq_idx').on(t.tenantId, t.conversationId, t.seq),
    uniqueIndex('messages_tenant_request_uq')
      .on(t.tenantId, t.requestId)
      .where(sql`request_id is not null`),
    index('messages_run_idx').on(t.runId),
  ],
);
