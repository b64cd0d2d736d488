/**
 * Retention: the pruner's statements. Which tenants' runs are expired is libs/graph
 * `planRetention`; here a tenant's expired runs are found on `runs_tenant_terminal_finished_idx`
 * (0010_retention.sql) and deleted in batches, each batch one statement (its own short
 * transaction) that takes at most `limit` run rows, oldest finished first, skipping rows another
 * transaction holds, and deletes them with every row naming them:
 * events, node_runs, run_state_writes, intents, run_signals, waitpoints, agent_steps, the conversation messages they started or
 * published; a conversation bound to a pruned run is unbound (a new message may start a run).
 * A run is never pruned while a child of it is live, nor while its parent is kept (live, or
 * terminal and not yet expired): the parent's node still names it.
 */
import type { PoolClient } from 'pg';
import { TERMINAL_RUN_STATUSES_SQL } from './status-sql';
import type { Queryable } from './transaction';

/** Rows one batch deleted, by table. */
export interface PruneCounts {
  runs: number;
  events: number;
  nodeRuns: number;
  intents: number;
  messages: number;
  /** conversations unbound from a pruned run */
  conversations: number;
}

/* Loose index scan over runs_tenant_terminal_finished_idx: one probe per distinct tenant. */
const TENANTS_SQL = `
WITH RECURSIVE t AS (
  (SELECT tenant_id FROM runs WHERE status IN (${TERMINAL_RUN_STATUSES_SQL}) ORDER BY tenant_id LIMIT 1)
  UNION ALL
  SELECT (SELECT r.tenant_id FROM runs r
          WHERE r.status IN (${TERMINAL_RUN_STATUSES_SQL}) AND r.tenant_id > t.tenant_id
          ORDER BY r.tenant_id LIMIT 1)
  FROM t WHERE t.tenant_id IS NOT NULL
)
SELECT tenant_id FROM t WHERE tenant_id IS NOT NULL`;

/** The tenants that hold at least one terminal run, in tenant order. */
export async function tenantsWithTerminalRuns(db: Queryable): Promise<string[]> {
  const res = await db.query<{ tenant_id: string }>({ name: 'flowline_retention_tenants', text: TENANTS_SQL });
  return res.rows.map((r) => r.tenant_id);
}

/*
 * Inputs: $1 tenant, $2 cutoff (runs finished strictly before it are expired), $3 limit.
 * The status list is literal so the planner matches the partial index.
 */
const PRUNE_SQL = `
WITH doomed AS (
  SELECT r.id FROM runs r
  WHERE r.tenant_id = $1 AND r.status IN (${TERMINAL_RUN_STATUSES_SQL}) AND r.finished_at < $2
    AND NOT EXISTS (SELECT 1 FROM runs c WHERE c.parent_run_id = r.id AND c.status NOT IN (${TERMINAL_RUN_STATUSES_SQL}))
    AND NOT EXISTS (SELECT 1 FROM runs p WHERE p.id = r.parent_run_id
                    AND NOT (p.status IN (${TERMINAL_RUN_STATUSES_SQL}) AND p.finished_at < $2))
  ORDER BY r.finished_at
  LIMIT $3
  FOR UPDATE OF r SKIP LOCKED
),
ev AS (DELETE FROM events e USING doomed d WHERE e.run_id = d.id RETURNING 1),
nr AS (DELETE FROM node_runs n USING doomed d WHERE n.run_id = d.id RETURNING 1),
st AS (DELETE FROM run_state_writes w USING doomed d WHERE w.run_id = d.id RETURNING 1),
it AS (DELETE FROM intents i USING doomed d WHERE i.run_id = d.id RETURNING 1),
sg AS (DELETE FROM run_signals s USING doomed d WHERE s.run_id = d.id RETURNING 1),
wp AS (DELETE FROM waitpoints w USING doomed d WHERE w.run_id = d.id RETURNING 1),
ag AS (DELETE FROM agent_steps a USING doomed d WHERE a.run_id = d.id RETURNING 1),
msg AS (DELETE FROM messages m USING doomed d WHERE m.run_id = d.id RETURNING 1),
conv AS (UPDATE conversations c SET bound_run_id = NULL, updated_at = now()
         FROM doomed d WHERE c.bound_run_id = d.id RETURNING 1),
gone AS (DELETE FROM runs r USING doomed d WHERE r.id = d.id RETURNING 1)
SELECT (SELECT count(*) FROM gone)::int AS runs,
       (SELECT count(*) FROM ev)::int AS events,
       (SELECT count(*) FROM nr)::int AS node_runs,
       (SELECT count(*) FROM it)::int AS intents,
       (SELECT count(*) FROM msg)::int AS messages,
       (SELECT count(*) FROM conv)::int AS conversations`;

/**
 * Deletes up to `limit` expired runs of `tenantId` (terminal, finished before `cutoff`) and
 * every row naming them, in one statement. Fewer than `limit` runs means none are left now.
 */
export async function pruneExpiredRuns(db: Queryable, tenantId: string, cutoff: Date, limit: number): Promise<PruneCounts> {
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`);
  const res = await db.query<{
    runs: number;
    events: number;
    node_runs: number;
    intents: number;
    messages: number;
    conversations: number;
  }>({ name: 'flowline_retention_prune', text: PRUNE_SQL, values: [tenantId, cutoff, limit] });
  const r = res.rows[0]!;
  return {
    runs: r.runs,
    events: r.events,
    nodeRuns: r.node_runs,
    intents: r.intents,
    messages: r.messages,
    conversations: r.conversations,
  };
}

/** Session advisory lock of the pruner (two-key form: a space apart from the run and migration keys). */
const RETENTION_LOCK = [7_316_120, 9] as const;

/**
 * Runs `body` on a checked-out connection holding the pruner's session advisory lock, or
 * returns `null` at once when another replica holds it (one replica prunes at a time).
 */
export async function withRetentionLock<T>(pool: { connect(): Promise<PoolClient> }, body: (client: PoolClient) => Promise<T>): Promise<T | null> {
  const client = await pool.connect();
  let broken = false;
  try {
    const got = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS ok', [...RETENTION_LOCK]);
    if (!got.rows[0]?.ok) return null;
    try {
      return await body(client);
    } finally {
      await client.query('SELECT pg_advisory_unlock($1, $2)', [...RETENTION_LOCK]);
    }
  } catch (err) {
    broken = true;
    throw err;
  } finally {
    // a client whose unlock may not have run is destroyed so the session lock dies with it
    client.release(broken);
  }
}
