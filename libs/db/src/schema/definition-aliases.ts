import { sql } from 'drizzle-orm';
import { foreignKey, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { definitions } from './definitions';
import { tenantScoped } from './columns';

/**
 * A definition's version aliases (`PUT /v1/definitions/{id}/aliases/{name}`): `current` (what a
 * start naming no version uses; absent: the latest version) and named ones (`canary`, …). Each
 * holds its weighted targets `[{version, percent}]` (percents summing to at most 100; the rest
 * of the starts go to `current`, and `current`'s rest to the latest version). Removed with the
 * definition (ON DELETE CASCADE).
 */
export const definitionAliases = pgTable(
  'definition_aliases',
  {
    definitionId: uuid('definition_id').notNull(),
    ...tenantScoped,
    name: text('name').notNull(),
    /** `AliasTarget[]` (libs/graph aliases): versions and their share of starts, in percent */
    targets: jsonb('targets').notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().default(sql`now()`),
  },
  (t) => [
    primaryKey({ columns: [t.definitionId, t.name] }),
    foreignKey({ columns: [t.definitionId], foreignColumns: [definitions.id] }).onDelete('cascade'),
  ],
);
