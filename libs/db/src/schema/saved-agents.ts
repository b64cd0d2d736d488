import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { tenantScoped } from './columns';

/**
 * A tenant's saved agents (`/v1/agents`): reusable Agent settings an Agent node names with
 * `config.agentDefinitionId`. The row holds the name (unique per tenant) and the latest
 * version; each write adds a row to `saved_agent_versions`, which are never rewritten, so a run
 * that pinned a version (`runs.agent_pins`) reads the same members for its whole life.
 */
export const savedAgents = pgTable(
  'saved_agents',
  {
    id: uuid('id')
      .primaryKey()
      .default(sql`gen_random_uuid()`),
    ...tenantScoped,
    name: text('name').notNull(),
    version: integer('version').notNull().default(1),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('saved_agents_tenant_name_idx').on(t.tenantId, t.name), index('saved_agents_tenant_created_idx').on(t.tenantId, t.createdAt.desc(), t.id)],
);

/**
 * Every version of a saved agent: its members (`instructions`, `model`, `tools`,
 * `toolApprovals`, `responseJsonSchema`, `reasoningEffort`, `maxIterations`) as one JSON
 * object, sealed at rest like a definition's graph (AAD `saved_agent_versions.members.<id>/<version>`).
 */
export const savedAgentVersions = pgTable(
  'saved_agent_versions',
  {
    agentId: uuid('agent_id')
      .notNull()
      .references(() => savedAgents.id, { onDelete: 'cascade' }),
    ...tenantScoped,
    version: integer('version').notNull(),
    name: text('name').notNull(),
    members: jsonb('members').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.agentId, t.version] })],
);
