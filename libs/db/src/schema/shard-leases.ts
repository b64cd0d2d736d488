import { bigint, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Dispatchers and their heartbeats (database clock) for fair-share shard rebalancing. A
 * dispatcher counts as live while `expires_at > now()` (heartbeat + its own lease length) and,
 * when it names a `liveness_key`, while some session still holds that session-level advisory
 * lock: a dispatcher killed with SIGKILL loses its connection, Postgres releases the lock at
 * once, and its peers take its shards without waiting for the lease to run out.
 */
export const dispatchers = pgTable('dispatchers', {
  id: text('id').primaryKey(),
  startedAt: timestamp('started_at', { withTimezone: true }).notNull().defaultNow(),
  heartbeatAt: timestamp('heartbeat_at', { withTimezone: true }).notNull().defaultNow(),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull().defaultNow(),
  /** the advisory lock key its process holds on a connection of its own; null: judged by its lease alone */
  livenessKey: bigint('liveness_key', { mode: 'bigint' }),
});

/** One row per shard; a lease is owned while `expires_at > now()` (database clock). */
export const shardLeases = pgTable('shard_leases', {
  shard: integer('shard').primaryKey(),
  owner: text('owner'),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull().defaultNow(),
});
