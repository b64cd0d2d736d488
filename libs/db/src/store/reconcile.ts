/** Reconciliation reads/writes a dispatcher runs when it (re)gains shards. */
import { INLINE_KINDS, type NodeKind } from '@flowline/graph';
import type { Queryable } from './transaction';

/** A Queued/Running node row: work that a worker may or may not hold. */
export interface InflightWork {
  runId: string;
  nodeKey: string;
  kind: NodeKind;
  status: 'Queued' | 'Running';
  invocationId: string | null;
  attempt: number;
  queuedAt: number | null;
  deadlineAt: number | null;
}

/*
 * Input: $1 shards. Result: Queued/Running node rows of runs in those shards
 * (node_runs_inflight_idx), oldest queued first.
 */
const INFLIGHT_SQL = `
SELECT n.run_id, n.node_key, n.kind, n.status, n.invocation_id, n.attempt,
       flowline_ms(n.queued_at) AS queued_at, flowline_ms(n.deadline_at) AS deadline_at
FROM node_runs n JOIN runs r ON r.id = n.run_id
WHERE n.status IN ('Queued', 'Running') AND r.shard = ANY($1::int[])
ORDER BY n.queued_at NULLS FIRST, n.run_id, n.node_key`;

/** In-flight work of `shards`, for re-enqueueing (same invocation id) after a Redis loss or takeover. */
export async function findRunsWithInflightWork(db: Queryable, shards: number[]): Promise<InflightWork[]> {
  if (shards.length === 0) return [];
  const res = await db.query({ name: 'flowline_inflight_work', text: INFLIGHT_SQL, values: [shards] });
  return res.rows.map((r) => ({
    runId: r.run_id,
    nodeKey: r.node_key,
    kind: r.kind,
    status: r.status,
    invocationId: r.invocation_id,
    attempt: r.attempt,
    queuedAt: r.queued_at === null ? null : Number(r.queued_at),
    deadlineAt: r.deadline_at === null ? null : Number(r.deadline_at),
  }));
}

/*
 * Inputs: $1 shards, $2 inline kinds. Guard: node status = 'Running' (a tick that died mid-way
 * cannot have left an inline node Running legitimately; no worker holds it).
 * Effect: those nodes → Pending (invocation cleared); their runs version+1 and due now.
 * Result: the reset (run id, node key) pairs.
 */
const RESET_INLINE_SQL = `
WITH reset AS (
  UPDATE node_runs n SET status = 'Pending', invocation_id = NULL
  FROM runs r
  WHERE r.id = n.run_id AND r.shard = ANY($1::int[]) AND n.status = 'Running' AND n.kind = ANY($2::text[])
  RETURNING n.run_id, n.node_key),
bumped AS (
  UPDATE runs SET version = version + 1, wake_at = now() WHERE id IN (SELECT DISTINCT run_id FROM reset))
SELECT run_id, node_key FROM reset`;

/** Returns inline-kind nodes left Running in `shards` to Pending and wakes their runs. */
export async function reconcileInlineRunning(
  db: Queryable,
  shards: number[],
): Promise<Array<{ runId: string; nodeKey: string }>> {
  if (shards.length === 0) return [];
  const res = await db.query<{ run_id: string; node_key: string }>(RESET_INLINE_SQL, [
    shards,
    [...INLINE_KINDS],
  ]);
  return res.rows.map((r) => ({ runId: r.run_id, nodeKey: r.node_key }));
}
