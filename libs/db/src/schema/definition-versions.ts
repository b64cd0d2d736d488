import { sql } from 'drizzle-orm';
import { foreignKey, integer, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { definitions } from './definitions';
import { tenantScoped } from './columns';

/**
 * Every saved version of a definition: one row per (definition, version), written by the
 * same statement that writes the definition row (create, update, duplicate), removed with
 * the definition (ON DELETE CASCADE). `graph` is the definition's `graph` value at that
 * version as stored, so under ENCRYPTION_KEY it is the same ciphertext, sealed to the
 * definition row and version (`definitions.graph`, `<id>@<version>`).
 */
export const definitionVersions = pgTable(
  'definition_versions',
  {
    definitionId: uuid('definition_id').notNull(),
    ...tenantScoped,
    version: integer('version').notNull(),
    name: text('name').notNull(),
    description: text('description'),
    /** 'Standard' | 'Chat' */
    kind: text('kind').notNull(),
    /** the document as submitted (sealed like `definitions.graph`) */
    graph: jsonb('graph').notNull(),
    graphHash: text('graph_hash').notNull(),
    /**
     * the version's parsed plan graph, sealed like `definitions.plan_graph` of that version, so a
     * schedule's alias or a child pin can run a version other than the latest without parsing
     * (the dispatchers hold no parser). Null for versions saved before it was recorded.
     */
    planGraph: jsonb('plan_graph'),
    nodeCount: integer('node_count').notNull(),
    /** the principal whose key saved this version (an approval's `forbid: definitionAuthor`); null when unknown */
    createdBy: text('created_by'),
    /** when this version was saved */
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().default(sql`now()`),
    /**
     * when the version was retired (`DELETE /v1/definitions/{id}/versions/{v}`): hidden from the
     * version list, refused to starts, aliases, forks and migrations; the row stays for history
     * (the diff, the version read, runs that pinned it). Null while in service.
     */
    retiredAt: timestamp('retired_at', { withTimezone: true }),
  },
  (t) => [
    primaryKey({ columns: [t.definitionId, t.version] }),
    foreignKey({ columns: [t.definitionId], foreignColumns: [definitions.id] }).onDelete('cascade'),
  ],
);
