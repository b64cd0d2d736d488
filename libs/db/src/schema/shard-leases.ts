import { integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Dispatchers and their heartbeats (database clock) for fair-share shard rebalancing. A
 * dispatcher counts as live while `expires_at > now()` (heartbeat + its own lease length).
 */
export const dispatchers = pgTable('dispatchers', {
  id: text('id').primaryKey(),
  startedAt: timestamp('started_at', { withTimezone: true }).notNull().defaultNow(),
  heartbeatAt: timestamp('heartbeat_at', { withTimezone: true }).notNull().defaultNow(),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull().defaultNow(),
});

/** One row per shard; a lease is owned while `expires_at > now()` (database clock). */
export const shardLeases = pgTable('shard_leases', {
  shard: integer('shard').primaryKey(),
  owner: text('owner'),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull().defaultNow(),
});
