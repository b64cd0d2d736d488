import { bigint, customType, index, integer, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { tenantScoped } from './columns';

const bytea = customType<{ data: Buffer }>({ dataType: () => 'bytea' });

/**
 * An uploaded file of a tenant (POST /v1/files): its metadata and content hash. The content
 * lives in `file_chunks`, so an upload is written chunk by chunk as it streams in and a
 * read streams it back chunk by chunk: neither side ever holds a whole file in memory.
 * Every read is by (tenant, id): another tenant's id reads as absent.
 */
export const files = pgTable(
  'files',
  {
    id: uuid('id').primaryKey(),
    ...tenantScoped,
    name: text('name').notNull(),
    contentType: text('content_type').notNull(),
    kind: text('kind').notNull(),
    bytes: bigint('bytes', { mode: 'number' }).notNull(),
    sha256: text('sha256').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('files_tenant_idx').on(t.tenantId, t.id)],
);

/** The content of a file, in order of `seq` (each chunk at most the store's chunk size). */
export const fileChunks = pgTable(
  'file_chunks',
  {
    fileId: uuid('file_id')
      .notNull()
      .references(() => files.id, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    data: bytea('data').notNull(),
  },
  (t) => [primaryKey({ columns: [t.fileId, t.seq] })],
);
