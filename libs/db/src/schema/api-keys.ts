import { index, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { tenantScoped } from './columns';

/**
 * Managed API keys (`/v1/api-keys`): who a key acts as (`service:<id>`), what it may do and
 * where. The secret itself is never stored: {@link apiKeySecrets} holds its keyed hash. A
 * revoked key keeps its row (`revoked_at`) so its history still names it; it no longer
 * authenticates because its secrets are deleted with the revocation.
 */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: uuid('id').primaryKey(),
    ...tenantScoped,
    name: text('name').notNull(),
    /** the scopes held, in the order of `API_KEY_SCOPES` */
    scopes: text('scopes').array().notNull(),
    /** the definitions whose runs it may touch; null = any */
    definitionIds: text('definition_ids').array(),
    /** the client networks it may be used from (CIDR); null = anywhere */
    cidrs: text('cidrs').array(),
    /** the principal that created it */
    owner: text('owner').notNull(),
    /** the recognisable start of its current secret (`fl_<tenant>`) and the secret's last four characters */
    prefix: text('prefix').notNull(),
    lastFour: text('last_four').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
    rotatedAt: timestamp('rotated_at', { withTimezone: true }),
    /** written at most once per API_KEY_LAST_USED_INTERVAL_S */
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    lastUsedAddress: text('last_used_address'),
  },
  (t) => [index('api_keys_tenant_idx').on(t.tenantId, t.createdAt.desc(), t.id)],
);

/**
 * The secrets of a managed key, by keyed hash (HMAC-SHA256 under API_KEY_PEPPER, hex): one
 * while the key is at rest, two during a rotation's grace (the old one with `expires_at`).
 */
export const apiKeySecrets = pgTable(
  'api_key_secrets',
  {
    hash: text('hash').primaryKey(),
    keyId: uuid('key_id')
      .notNull()
      .references(() => apiKeys.id, { onDelete: 'cascade' }),
    ...tenantScoped,
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /** the end of a rotation's grace; null = valid while the key is */
    expiresAt: timestamp('expires_at', { withTimezone: true }),
  },
  (t) => [index('api_key_secrets_key_idx').on(t.keyId)],
);
