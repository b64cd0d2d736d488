/**
 * Runs constructed by direct SQL for store and retention tests: a run row with whatever
 * status and age a test needs, plus a row in every table that names a run (events,
 * node_runs, intents, an Agent transcript step, a conversation message and the conversation bound to
 * it), so a test can show exactly which runs' rows are gone.
 */
import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';

export interface RunRowsSpec {
  tenantId: string;
  status: string;
  /** null for a run that has not finished */
  finishedAt: Date | null;
  parentRunId?: string | null;
  /** the run is in this conversation, which is bound to it, with one message it started */
  conversationId?: string | null;
  /** @default 0 */
  shard?: number;
}

/** The tables (besides runs) whose rows name a run by run_id. */
export const RUN_ROW_TABLES = ['events', 'node_runs', 'intents', 'messages', 'agent_steps'] as const;

/** Inserts one run and a row naming it in every table of {@link RUN_ROW_TABLES}, in one transaction; returns its id. */
export async function insertRunRows(pool: Pool, spec: RunRowsSpec): Promise<string> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const id = await insertRows(client, spec);
    await client.query('COMMIT');
    return id;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

async function insertRows(pool: PoolClient, spec: RunRowsSpec): Promise<string> {
  const id = randomUUID();
  const terminal = spec.finishedAt !== null;
  const createdAt = spec.finishedAt ? new Date(spec.finishedAt.getTime() - 60_000) : new Date(Date.now() - 365 * 86_400_000);
  await pool.query(
    `INSERT INTO runs (id, tenant_id, definition_id, definition_version, graph, plan_graph, graph_hash, status,
                       shard, last_seq, parent_run_id, conversation_id, created_at, started_at, finished_at)
     VALUES ($1, $2, $3, 1, '{}', '{}', 'h', $4, $5, 2, $6, $7, $8, $8, $9)`,
    [id, spec.tenantId, randomUUID(), spec.status, spec.shard ?? 0, spec.parentRunId ?? null, spec.conversationId ?? null, createdAt, spec.finishedAt],
  );
  await pool.query(`INSERT INTO events (run_id, seq, kind) VALUES ($1, 1, 'run.created'), ($1, 2, 'run.started')`, [id]);
  await pool.query(
    `INSERT INTO node_runs (run_id, node_key, kind, status, attempt_limit) VALUES ($1, 'start', 'Start', $2, 1), ($1, 'end', 'End', $2, 1)`,
    [id, terminal ? 'Succeeded' : 'Pending'],
  );
  await pool.query(`INSERT INTO intents (run_id, kind, applied_at) VALUES ($1, 'resume', now())`, [id]);
  await pool.query(
    `INSERT INTO agent_steps (run_id, node_key, step, tenant_id, generation, attempt, kind, payload, bytes) VALUES ($1, 'researcher', 1, $2, 1, 1, 'model', '{}', 2)`,
    [id, spec.tenantId],
  );
  if (spec.conversationId) {
    await pool.query(
      `INSERT INTO conversations (tenant_id, id, bound_run_id) VALUES ($1, $2, $3)
       ON CONFLICT (tenant_id, id) DO UPDATE SET bound_run_id = EXCLUDED.bound_run_id`,
      [spec.tenantId, spec.conversationId, id],
    );
  }
  await pool.query(
    `INSERT INTO messages (id, tenant_id, conversation_id, role, text, run_id) VALUES ($1, $2, $3, 'user', 'hi', $4)`,
    [randomUUID(), spec.tenantId, spec.conversationId ?? `conv-${id}`, id],
  );
  return id;
}

/** For each of `runIds`, how many rows name it in runs and in each of {@link RUN_ROW_TABLES} (all 0 when gone). */
export async function runRowCounts(pool: Pool, runIds: readonly string[]): Promise<Map<string, Record<string, number>>> {
  const out = new Map<string, Record<string, number>>(runIds.map((id) => [id, { runs: 0, ...Object.fromEntries(RUN_ROW_TABLES.map((t) => [t, 0])) }]));
  const runs = await pool.query<{ id: string }>(`SELECT id FROM runs WHERE id = ANY($1::uuid[])`, [runIds]);
  for (const r of runs.rows) out.get(r.id)!.runs = 1;
  for (const table of RUN_ROW_TABLES) {
    const res = await pool.query<{ run_id: string; n: number }>(
      `SELECT run_id, count(*)::int AS n FROM ${table} WHERE run_id = ANY($1::uuid[]) GROUP BY run_id`,
      [runIds],
    );
    for (const r of res.rows) out.get(r.run_id)![table] = r.n;
  }
  return out;
}
