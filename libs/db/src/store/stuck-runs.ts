/** Candidates of the dispatcher's stuck-run watchdog (libs/graph `stuckFindings` decides). */
import type { Queryable } from './transaction';

/** Run statuses a watchdog looks at: every live one. */
export const WATCHED_RUN_STATUSES = ['Scheduled', 'Pending', 'Running', 'WaitingForApproval', 'Cancelling'] as const;

/*
 * Inputs: $1 shards, $2 live statuses, $3 grace ms, $4 limit.
 * Result: up to $4 live runs of those shards owed a tick more than $3 ms ago that their
 * wake_at does not give: wake_at itself that old; a Queued/Running node's deadline or a
 * Pending node's backoff end that old while wake_at is NULL or in the future past it; or
 * unapplied intents with no wake_at at all. Oldest obligations are not ordered:
 * the watchdog takes the next batch on its next round.
 */
const CANDIDATES_SQL = `
SELECT r.id FROM runs r
WHERE r.shard = ANY($1::int[]) AND r.status = ANY($2::text[])
  AND (r.wake_at <= now() - $3 * interval '1 millisecond'
    OR EXISTS (
      SELECT 1 FROM node_runs n,
        LATERAL (SELECT CASE WHEN n.status IN ('Queued', 'Running') THEN n.deadline_at
                             WHEN n.status = 'Pending' THEN n.not_before END AS due) o
      WHERE n.run_id = r.id AND o.due <= now() - $3 * interval '1 millisecond'
        AND (r.wake_at IS NULL OR (r.wake_at > o.due AND r.wake_at > now())))
    OR (r.wake_at IS NULL AND EXISTS (SELECT 1 FROM intents i WHERE i.run_id = r.id AND i.applied_at IS NULL)))
LIMIT $4`;

/** Ids of live runs in `shards` that may be stuck (see CANDIDATES_SQL). */
export async function stuckRunCandidates(db: Queryable, shards: number[], graceMs: number, limit: number): Promise<string[]> {
  if (shards.length === 0 || limit <= 0) return [];
  const res = await db.query<{ id: string }>({
    name: 'flowline_stuck_run_candidates',
    text: CANDIDATES_SQL,
    values: [shards, WATCHED_RUN_STATUSES, graceMs, limit],
  });
  return res.rows.map((r) => r.id);
}
