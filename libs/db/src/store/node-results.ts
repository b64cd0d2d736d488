/** Durable work outcomes (node_results): the optional path for outcomes that must outlive Redis. */
import type { WorkOutcome } from '@flowline/graph';
import { encryptionEnabled, sealJson } from '../crypto';
import { encodeJson } from '../json-codec';
import type { Queryable } from './transaction';

/** One outcome to persist. */
export interface NodeResultInput {
  invocationId: string;
  runId: string;
  nodeKey: string;
  outcome: WorkOutcome;
}

/*
 * Input: $1 JSON array of NodeResultInput. Guard: first write per invocation wins
 * (ON CONFLICT DO NOTHING). Effect: runs that got a new result become due now.
 * Result: invocation ids actually inserted.
 */
const RECORD_SQL = `
WITH ins AS (
  INSERT INTO node_results (invocation_id, run_id, node_key, outcome)
  SELECT x."invocationId", x."runId", x."nodeKey", x.outcome
  FROM jsonb_to_recordset($1::jsonb) AS x("invocationId" uuid, "runId" uuid, "nodeKey" text, outcome jsonb)
  ON CONFLICT (invocation_id) DO NOTHING
  RETURNING invocation_id, run_id),
woke AS (
  UPDATE runs SET wake_at = least(coalesce(wake_at, now()), now()) WHERE id IN (SELECT DISTINCT run_id FROM ins))
SELECT invocation_id FROM ins`;

/** Persists outcomes (one statement) and wakes their runs; loadSnapshots returns them until applied. */
export async function recordResults(db: Queryable, results: NodeResultInput[]): Promise<string[]> {
  if (results.length === 0) return [];
  const rows = encryptionEnabled()
    ? results.map((r) => ({
        ...r,
        outcome: sealJson(r.outcome, { table: 'node_results', column: 'outcome', row: r.invocationId }),
      }))
    : results;
  const res = await db.query<{ invocation_id: string }>(RECORD_SQL, [encodeJson(rows)]);
  return res.rows.map((r) => r.invocation_id);
}
