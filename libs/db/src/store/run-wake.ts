/** The due-work index: `runs.wake_at` per shard. */
import type { Queryable } from './transaction';

/*
 * Inputs: $1 shards, $2 limit. Guard: wake_at <= now() (database clock).
 * Result: up to $2 run ids, most overdue first — one index range scan of
 * runs_shard_wake_idx per shard (LATERAL), merged.
 */
const DUE_SQL = `
SELECT d.id FROM unnest($1::int[]) AS s(shard)
CROSS JOIN LATERAL (
  SELECT id, wake_at FROM runs
  WHERE shard = s.shard AND wake_at IS NOT NULL AND wake_at <= now()
  ORDER BY wake_at LIMIT $2) d
ORDER BY d.wake_at LIMIT $2`;

/** Ids of runs in `shards` whose wake time has come, most overdue first. */
export async function dueRuns(db: Queryable, shards: number[], limit: number): Promise<string[]> {
  if (shards.length === 0 || limit <= 0) return [];
  const res = await db.query<{ id: string }>({ name: 'flowline_due_runs', text: DUE_SQL, values: [shards, limit] });
  return res.rows.map((r) => r.id);
}

/*
 * Inputs: $1 run ids, $2 time (NULL = now()).
 * Effect: wake_at = the earlier of its current value and $2 (a wake never postpones another).
 * Result: number of runs touched.
 */
const SET_WAKE_SQL = `
UPDATE runs SET wake_at = least(coalesce(wake_at, coalesce($2::timestamptz, now())), coalesce($2::timestamptz, now()))
WHERE id = ANY($1::uuid[])`;

/** Makes runs due no later than `atMs` (default: now, on the database clock). */
export async function setWake(db: Queryable, runIds: string[], atMs?: number): Promise<number> {
  if (runIds.length === 0) return 0;
  const at = atMs === undefined ? null : new Date(atMs).toISOString();
  const res = await db.query({ name: 'flowline_set_wake', text: SET_WAKE_SQL, values: [runIds, at] });
  return res.rowCount ?? 0;
}
