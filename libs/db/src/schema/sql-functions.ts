import { pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Which version of each SQL function file (libs/db/sql/functions/<name>.sql) this database
 * runs, by the file's sha256. `migrate` re-applies a file only when its hash differs, so a
 * replica's boot does not replace functions that are already current (a replacement would make
 * every other session replan the statements that call them).
 */
export const sqlFunctions = pgTable('sql_functions', {
  name: text('name').primaryKey(),
  sha256: text('sha256').notNull(),
  appliedAt: timestamp('applied_at', { withTimezone: true }).notNull().defaultNow(),
});
