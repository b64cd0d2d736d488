/**
 * Reads behind the live channel: the subscribe snapshot and
 * the activity target of a node. Every read is tenant-scoped; another tenant's run reads
 * as absent.
 */
import type { Pool } from 'pg';
import { listRunEvents } from '@flowline/db';
import type { LiveEvent, RunSnapshot } from '@flowline/queue';

/** Child runs deeper than this below the subscribed run are not listed. */
const MAX_CHILD_DEPTH = 32;

interface StateRow {
  status: string;
  last_seq: number;
  queued: number;
  running: number;
  decisions: Array<{ nodeKey: string; runId: string }>;
  inputs: Array<{ nodeKey: string; runId: string }>;
}

/**
 * The subscribe snapshot: status, the run's own Queued/Running node counts, pending
 * decisions (`Approve`/`Operator`) and inputs (`Answer`) of the run and its child runs,
 * and up to `limit` events after `afterSeq` (one row past the limit tells
 * `replayTruncated`). `watermark` is the highest seq the snapshot covers: the last
 * replayed event when truncated, else the larger of that and min(afterSeq, last seq).
 * Null when the run is gone or not the tenant's.
 */
export async function readRunSnapshot(
  pool: Pool,
  tenant: string,
  runId: string,
  afterSeq: number,
  limit: number,
): Promise<RunSnapshot | null> {
  const res = await pool.query<StateRow>(
    `WITH RECURSIVE head AS (SELECT id, status, last_seq FROM runs WHERE id = $1 AND tenant_id = $2),
     tree AS (
       SELECT id, 0 AS depth FROM head
       UNION ALL
       SELECT r.id, t.depth + 1 FROM runs r JOIN tree t ON r.parent_run_id = t.id WHERE r.parent_run_id IS NOT NULL AND t.depth < $3
     ),
     live AS (
       SELECT n.run_id, n.node_key, n.status, n.pending_decision_kind
       FROM node_runs n JOIN tree t ON n.run_id = t.id
       WHERE n.status IN ('Queued', 'Running', 'WaitingForApproval')
     )
     SELECT h.status, h.last_seq,
       (SELECT count(*) FROM live WHERE run_id = h.id AND status = 'Queued')::int AS queued,
       (SELECT count(*) FROM live WHERE run_id = h.id AND status = 'Running')::int AS running,
       (SELECT coalesce(json_agg(json_build_object('nodeKey', node_key, 'runId', run_id) ORDER BY run_id = h.id DESC, run_id, node_key), '[]'::json)
          FROM live WHERE status = 'WaitingForApproval' AND pending_decision_kind IS DISTINCT FROM 'Answer') AS decisions,
       (SELECT coalesce(json_agg(json_build_object('nodeKey', node_key, 'runId', run_id) ORDER BY run_id = h.id DESC, run_id, node_key), '[]'::json)
          FROM live WHERE status = 'WaitingForApproval' AND pending_decision_kind = 'Answer') AS inputs
     FROM head h`,
    [runId, tenant, MAX_CHILD_DEPTH],
  );
  const s = res.rows[0];
  if (!s) return null;
  const page = await listRunEvents(pool, runId, afterSeq, limit);
  const events: LiveEvent[] = page.events.map((e) => ({
    seq: e.seq,
    kind: e.kind,
    nodeKey: e.nodeKey,
    at: e.at.toISOString(),
    detail: e.detail,
  }));
  const lastReplayed = events.at(-1)?.seq ?? 0;
  const watermark = page.truncated ? lastReplayed : Math.max(lastReplayed, Math.min(afterSeq, s.last_seq));
  return {
    status: s.status,
    queued: s.queued,
    running: s.running,
    pendingDecisions: s.decisions,
    pendingInputs: s.inputs,
    watermark,
    events,
    replayTruncated: page.truncated,
  };
}

/** The node's status and current invocation id on the tenant's run; null when absent. */
export async function readNodeActivityTarget(
  pool: Pick<Pool, 'query'>,
  tenant: string,
  runId: string,
  nodeKey: string,
): Promise<{ status: string; invocationId: string | null } | null> {
  const res = await pool.query<{ status: string; invocation_id: string | null }>(
    `SELECT n.status, n.invocation_id FROM node_runs n JOIN runs r ON r.id = n.run_id
     WHERE n.run_id = $1 AND n.node_key = $2 AND r.tenant_id = $3`,
    [runId, nodeKey, tenant],
  );
  const r = res.rows[0];
  return r ? { status: r.status, invocationId: r.invocation_id } : null;
}
