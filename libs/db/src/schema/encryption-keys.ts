import { pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * The at-rest encryption keys stored values may still be sealed with, by id (never the key
 * itself). A process registers its current key at boot; the re-seal marks every other key
 * retired once a full pass finds no value sealed with it. A process whose configuration lacks
 * a key that is not retired refuses to boot: values sealed with it would become unreadable.
 */
export const encryptionKeys = pgTable('encryption_keys', {
  id: text('id').primaryKey(),
  firstSeenAt: timestamp('first_seen_at', { withTimezone: true }).notNull().defaultNow(),
  /** when the re-seal found no value sealed with it any more; null while values may use it */
  retiredAt: timestamp('retired_at', { withTimezone: true }),
});
