import { bigint, bigserial, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import { tenantScoped } from './columns';

/**
 * The audit log: one row per mutating API request, hash-chained per tenant.
 *
 * A row is inserted *unchained* (`seq`, `prevHash`, `hash` null) inside the transaction of the
 * change it records, so a run start never waits on the tenant's chain head. The chainer
 * (`flowline_audit_chain`, one pass at a time per tenant under an advisory lock) later gives the
 * committed rows their `seq` (1, 2, …, in the order the chainer finds them committed), the
 * previous row's hash and their own (`flowline_audit_hash`). A row is chained once its request
 * recorded the answer (`status` set), or once it is older than the grace the chainer is given
 * (the process ended between the commit and the answer: `status` stays null = not recorded).
 */
export const auditLog = pgTable(
  'audit_log',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    ...tenantScoped,
    /** the position in the tenant's chain; null until chained */
    seq: bigint('seq', { mode: 'number' }),
    at: timestamp('at', { withTimezone: true, precision: 6 }).notNull().defaultNow(),
    /** who acted (the request's principal) */
    principal: text('principal').notNull(),
    /** the prefix of the managed API key used, when there is one */
    keyPrefix: text('key_prefix'),
    /** stable dotted name of the route (`definition.update`, `run.cancel`, …) */
    action: text('action').notNull(),
    resourceType: text('resource_type').notNull(),
    resourceId: text('resource_id'),
    requestId: text('request_id').notNull(),
    clientAddress: text('client_address'),
    /** the HTTP status answered; null while the answer is not recorded */
    status: integer('status'),
    /** the error code answered (`NotFound`, `Forbidden`, …), null on success */
    errorCode: text('error_code'),
    /** RFC 6902 JSON Patch of a definition change, secret values redacted */
    patch: jsonb('patch'),
    prevHash: text('prev_hash'),
    hash: text('hash'),
  },
  (t) => [
    uniqueIndex('audit_log_tenant_seq_uq').on(t.tenantId, t.seq),
    index('audit_log_unchained_idx').on(t.tenantId, t.id).where(sql`seq is null`),
    index('audit_log_tenant_at_idx').on(t.tenantId, t.at),
  ],
);

/**
 * Per tenant: the chain's head (the last chained row's `seq` and `hash`, moved by the chainer)
 * and the checkpoint of retention (the last pruned row's `seq` and `hash`). Verify starts at the
 * checkpoint (the first kept row must follow it) and ends at the head (a deleted last row is
 * missed otherwise).
 */
export const auditChains = pgTable('audit_chains', {
  ...tenantScoped,
  headSeq: bigint('head_seq', { mode: 'number' }).notNull().default(0),
  headHash: text('head_hash').notNull().default(''),
  prunedSeq: bigint('pruned_seq', { mode: 'number' }).notNull().default(0),
  prunedHash: text('pruned_hash').notNull().default(''),
  prunedAt: timestamp('pruned_at', { withTimezone: true }),
}, (t) => [uniqueIndex('audit_chains_tenant_uq').on(t.tenantId)]);
