/** Shard leases among dispatchers, expiring on the database clock (see flowline_claim_shards). */
import type { Queryable } from './transaction';

/**
 * Heartbeats `dispatcherId` and rebalances: renews its leases, releases those beyond its fair
 * share (ceil(shardCount / live dispatchers)), takes expired or unowned shards up to it.
 * Returns the shards it owns now, ascending; call again well within `leaseMs` (e.g. every
 * leaseMs / 3). A dispatcher that stops calling loses its shards after `leaseMs`.
 */
export async function claimShards(
  db: Queryable,
  dispatcherId: string,
  shardCount: number,
  leaseMs: number,
): Promise<number[]> {
  const res = await db.query<{ shards: number[] }>({
    name: 'flowline_claim_shards',
    text: 'SELECT flowline_claim_shards($1, $2, $3) AS shards',
    values: [dispatcherId, shardCount, Math.round(leaseMs)],
  });
  return res.rows[0]!.shards;
}

/*
 * Input: $1 dispatcher id. Effect: its leases are freed (expired now) and its row removed,
 * so the others take its shards on their next claim. Result: shards released.
 */
const RELEASE_SQL = `
WITH released AS (
  UPDATE shard_leases SET owner = NULL, expires_at = now() WHERE owner = $1 RETURNING shard),
gone AS (DELETE FROM dispatchers WHERE id = $1 RETURNING id)
SELECT count(*)::int AS n FROM released`;

/** Gives up every shard of `dispatcherId` at shutdown. */
export async function releaseShards(db: Queryable, dispatcherId: string): Promise<number> {
  const res = await db.query<{ n: number }>(RELEASE_SQL, [dispatcherId]);
  return res.rows[0]!.n;
}
