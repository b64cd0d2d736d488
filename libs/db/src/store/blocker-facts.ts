/** The run-level facts of "why isn't this run moving?" (GET /v1/runs/{id}/blockers): one round trip. */
import { SLOT_HOLDING_RUN_STATUSES } from './run-snapshots';
import type { Queryable } from './transaction';

export interface RunBlockerFacts {
  /** database clock, epoch ms: leases expire on it */
  now: number;
  shard: number;
  /** the shard's lease owner, null when never taken or released */
  owner: string | null;
  /** epoch ms; null without a lease row */
  expiresAt: number | null;
  /** the tenant's top-level runs holding a MAX_CONCURRENT_RUNS slot */
  live: number;
  /** Pending top-level runs of the tenant before this one in admission order: higher priority, or the same and older (0 unless it is one) */
  ahead: number;
  /** the run's concurrency key, null without one: its places held, its unplaced Pending runs ahead of this one */
  concurrency: { value: string; limit: number; claimed: boolean; live: number; ahead: number } | null;
  /** the principal that created the run (an approval's `forbid: initiator`), null when unknown */
  initiator: string | null;
  /** the principal that saved the run's definition version (`forbid: definitionAuthor`), null when unknown */
  definitionAuthor: string | null;
}

/*
 * Inputs: $1 run id, $2 tenant, $3 slot-holding statuses. Guard: the run belongs to the tenant.
 * Result: zero rows (unknown run) or one — the shard lease, the tenant's live top-level run
 * count (runs_tenant_status_idx) and, for a Pending top-level run, how many Pending top-level
 * runs of the tenant come before it (higher priority, or the same and older: they take the next free slots first),
 * and who created the run and saved its definition version (an approval gate's forbid rules).
 */
const FACTS_SQL = `
SELECT flowline_ms(now()) AS now, r.shard, l.owner, flowline_ms(l.expires_at) AS expires_at,
  (SELECT count(*) FROM runs x
   WHERE x.tenant_id = r.tenant_id AND x.status = ANY($3::text[]) AND x.parent_run_id IS NULL)::int AS live,
  (CASE WHEN r.status = 'Pending' AND r.parent_run_id IS NULL THEN
     (SELECT count(*) FROM runs x
      WHERE x.tenant_id = r.tenant_id AND x.status = 'Pending' AND x.parent_run_id IS NULL
        AND (x.priority > r.priority OR (x.priority = r.priority AND (x.created_at, x.id) < (r.created_at, r.id))))
   ELSE 0 END)::int AS ahead,
  r.concurrency_key, r.concurrency_limit, r.concurrency_claimed,
  (CASE WHEN r.concurrency_key IS NOT NULL THEN
     (SELECT count(*) FROM runs x
      WHERE x.tenant_id = r.tenant_id AND x.definition_id = r.definition_id AND x.concurrency_key = r.concurrency_key
        AND x.concurrency_claimed AND x.status NOT IN ('Completed', 'Failed', 'Cancelled'))
   ELSE 0 END)::int AS key_live,
  (CASE WHEN r.concurrency_key IS NOT NULL AND r.status = 'Pending' AND NOT r.concurrency_claimed THEN
     (SELECT count(*) FROM runs x
      WHERE x.tenant_id = r.tenant_id AND x.definition_id = r.definition_id AND x.concurrency_key = r.concurrency_key
        AND x.status = 'Pending' AND x.parent_run_id IS NULL AND NOT x.concurrency_claimed
        AND (x.priority > r.priority OR (x.priority = r.priority AND (x.created_at, x.id) < (r.created_at, r.id))))
   ELSE 0 END)::int AS key_ahead,
  r.created_by AS initiator,
  (SELECT dv.created_by FROM definition_versions dv WHERE dv.definition_id = r.definition_id AND dv.version = r.definition_version) AS author
FROM runs r LEFT JOIN shard_leases l ON l.shard = r.shard
WHERE r.id = $1 AND r.tenant_id = $2`;

/** The run-level blocker facts of `runId`, or null when the tenant has no such run. */
export async function getRunBlockerFacts(db: Queryable, tenantId: string, runId: string): Promise<RunBlockerFacts | null> {
  const res = await db.query<{
    now: number; shard: number; owner: string | null; expires_at: number | null; live: number; ahead: number;
    concurrency_key: string | null; concurrency_limit: number | null; concurrency_claimed: boolean; key_live: number; key_ahead: number;
    initiator: string | null; author: string | null;
  }>({
    name: 'flowline_run_blocker_facts',
    text: FACTS_SQL,
    values: [runId, tenantId, SLOT_HOLDING_RUN_STATUSES],
  });
  const row = res.rows[0];
  if (!row) return null;
  const concurrency =
    row.concurrency_key === null
      ? null
      : { value: row.concurrency_key, limit: row.concurrency_limit ?? 1, claimed: row.concurrency_claimed, live: row.key_live, ahead: row.key_ahead };
  return {
    now: Number(row.now), shard: row.shard, owner: row.owner, expiresAt: row.expires_at === null ? null : Number(row.expires_at), live: row.live, ahead: row.ahead, concurrency,
    initiator: row.initiator, definitionAuthor: row.author,
  };
}
