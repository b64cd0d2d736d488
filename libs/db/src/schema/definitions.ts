import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { tenantScoped } from './columns';

/**
 * Workflow definitions. `graph` is the document exactly as submitted (what GET returns);
 * `plan_graph` is the parsed `Graph` model of libs/graph (defaults filled in), written by
 * whoever writes `graph`, so that run creation — including child runs created inside the
 * dispatcher's apply function — pins both without re-parsing.
 */
export const definitions = pgTable(
  'definitions',
  {
    id: uuid('id')
      .primaryKey()
      .default(sql`gen_random_uuid()`),
    ...tenantScoped,
    name: text('name').notNull(),
    description: text('description'),
    /** 'Standard' | 'Chat' */
    kind: text('kind').notNull(),
    version: integer('version').notNull().default(1),
    /** the document as submitted */
    graph: jsonb('graph').notNull(),
    /** the parsed Graph model (libs/graph `Graph`) of `graph` */
    planGraph: jsonb('plan_graph').notNull(),
    /** sha256 of the canonical JSON of `graph` */
    graphHash: text('graph_hash').notNull(),
    nodeCount: integer('node_count').notNull(),
    /**
     * The definitions this one names (Subworkflow and Map `definitionId`, Loop `body`), kept in the
     * clear beside a possibly sealed graph so a delete can refuse while another definition
     * of the tenant still names it.
     */
    refs: uuid('refs')
      .array()
      .notNull()
      .default(sql`'{}'::uuid[]`),
    /**
     * The event names and patterns its graph's `triggers` listen for, kept in the clear beside a
     * possibly sealed graph so `POST /v1/events` finds the subscribers of a name in one read.
     */
    triggerEvents: text('trigger_events')
      .array()
      .notNull()
      .default(sql`'{}'::text[]`),
    /**
     * False while the definition is disabled: new runs of it are refused, runs already
     * started go on. Not part of the graph, so flipping it writes no new version.
     */
    enabled: boolean('enabled').notNull().default(true),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('definitions_tenant_created_idx').on(t.tenantId, t.createdAt.desc(), t.id),
    index('definitions_refs_idx').using('gin', t.refs),
    index('definitions_triggers_idx').on(t.tenantId).where(sql`cardinality(${t.triggerEvents}) > 0`),
  ],
);
