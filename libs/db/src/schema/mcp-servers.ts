import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { tenantScoped } from './columns';

/**
 * A tenant's MCP servers (`/v1/mcp-servers`): remote servers only (streamable HTTP or the
 * older HTTP+SSE transport). A stdio server is never a row: it comes from the deployment's
 * configuration file, so the API cannot be used to start a process. `headers` (credentials,
 * typically) are sealed at rest with ENCRYPTION_KEY (AAD `mcp_servers.headers.<id>`) and
 * never read back by the API; only the workers open them, to connect. `version` grows on
 * every update, so a worker's cached connection to the server is replaced after an edit.
 */
export const mcpServers = pgTable(
  'mcp_servers',
  {
    id: uuid('id')
      .primaryKey()
      .default(sql`gen_random_uuid()`),
    ...tenantScoped,
    name: text('name').notNull(),
    url: text('url').notNull(),
    /** 'streamable-http' | 'sse' */
    transport: text('transport').notNull(),
    /** `{ "<header>": "<value>" }`, sealed when encryption is on */
    headers: jsonb('headers').notNull(),
    /** the header names (never values), so a read can say which are set */
    headerNames: text('header_names')
      .array()
      .notNull()
      .default(sql`'{}'::text[]`),
    /** the tools a graph may use; null = every tool the server lists */
    allowedTools: text('allowed_tools').array(),
    timeoutMs: integer('timeout_ms').notNull(),
    version: integer('version').notNull().default(1),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('mcp_servers_tenant_name_idx').on(t.tenantId, t.name), index('mcp_servers_tenant_idx').on(t.tenantId, t.id)],
);
