/**
 * The dispatcher's read: planner snapshots of many runs in ONE round trip.
 */
import type {
  ChildRunState,
  Graph,
  Intent,
  NodeRunState,
  RunSnapshot,
  RunState,
  WorkResult,
} from '@flowline/graph';
import type { Pool, PoolClient } from 'pg';

type Queryable = Pick<Pool, 'query'> | PoolClient;

/** A snapshot as stored: with the run's current `wake_at` (epoch ms), so an unchanged wake costs no write. */
export interface LoadedSnapshot extends RunSnapshot {
  wakeAt: number | null;
  shard: number;
}

/** Options of {@link loadSnapshots}. */
export interface LoadSnapshotsOptions {
  /** MAX_CONCURRENT_RUNS: live top-level runs per tenant */
  maxConcurrentRuns: number;
}

/** Run statuses that hold one of the tenant's MAX_CONCURRENT_RUNS slots (parked runs hold none). */
export const SLOT_HOLDING_RUN_STATUSES = ['Running', 'Cancelling'] as const;

const EMPTY_GRAPH: Graph = {
  schemaVersion: 1,
  kind: 'Standard',
  chat: null,
  inputSchema: null,
  outputSchema: null,
  nodes: [],
  edges: [],
};

/*
 * Inputs: $1 run ids, $2 slot-holding statuses.
 * Result: one row per existing run — the run as RunState JSON, its pinned plan_graph, wake_at,
 * shard, its node rows, unapplied intents (creation order), unapplied durable results, its child
 * runs (live ones and those a node row points at), and the live top-level run count of its tenant.
 * Times are epoch ms (flowline_ms).
 */
const LOAD_SQL = `
WITH target AS (
  SELECT id, tenant_id, status, failure_class, reason, paused, version, last_seq, input, total_attempts, breakpoints,
         step_allowance, edge_overrides, cancel_reason, created_at, started_at, finished_at, parent_run_id, depth,
         plan_graph, wake_at, shard
  FROM runs WHERE id = ANY($1::uuid[])),
live AS MATERIALIZED (
  SELECT t.tenant_id,
         (SELECT count(*) FROM runs l
          WHERE l.tenant_id = t.tenant_id AND l.status = ANY($2::text[]) AND l.parent_run_id IS NULL) AS n
  FROM (SELECT DISTINCT tenant_id FROM target) t)
SELECT
  json_build_object(
    'id', r.id, 'tenantId', r.tenant_id, 'status', r.status, 'failureClass', r.failure_class,
    'reason', r.reason, 'paused', r.paused, 'version', r.version, 'lastSeq', r.last_seq, 'input', r.input,
    'totalAttempts', r.total_attempts, 'breakpoints', r.breakpoints, 'stepAllowance', r.step_allowance,
    'edgeOverrides', r.edge_overrides, 'cancelReason', r.cancel_reason, 'createdAt', flowline_ms(r.created_at),
    'startedAt', flowline_ms(r.started_at), 'finishedAt', flowline_ms(r.finished_at),
    'parentRunId', r.parent_run_id, 'depth', r.depth) AS run,
  r.plan_graph AS graph,
  flowline_ms(r.wake_at) AS wake_at,
  r.shard,
  live.n AS tenant_live,
  (SELECT coalesce(json_agg(json_build_object(
     'nodeKey', n.node_key, 'kind', n.kind, 'status', n.status, 'attempt', n.attempt,
     'attemptLimit', n.attempt_limit, 'invocationId', n.invocation_id, 'failureClass', n.failure_class,
     'reason', n.reason, 'input', n.input, 'inputOverride', n.input_override, 'output', n.output,
     'notBefore', flowline_ms(n.not_before), 'deadlineAt', flowline_ms(n.deadline_at),
     'queuedAt', flowline_ms(n.queued_at), 'startedAt', flowline_ms(n.started_at),
     'finishedAt', flowline_ms(n.finished_at), 'steering', n.steering,
     'pendingDecisionKind', n.pending_decision_kind, 'decision', n.decision, 'held', n.held,
     'childRunId', n.child_run_id, 'loop', n.loop_state)), '[]'::json)
   FROM node_runs n WHERE n.run_id = r.id) AS nodes,
  (SELECT coalesce(json_agg(json_build_object('id', i.id, 'kind', i.kind, 'nodeKey', i.node_key,
     'payload', i.payload) ORDER BY i.created_at, i.id), '[]'::json)
   FROM intents i WHERE i.run_id = r.id AND i.applied_at IS NULL) AS intents,
  (SELECT coalesce(json_agg(json_build_object('invocationId', x.invocation_id, 'nodeKey', x.node_key,
     'outcome', x.outcome) ORDER BY x.created_at), '[]'::json)
   FROM node_results x WHERE x.run_id = r.id AND x.applied_at IS NULL) AS results,
  (SELECT coalesce(json_agg(json_build_object('childRunId', c.id, 'nodeKey', c.parent_node_key,
     'status', c.status, 'output', c.output, 'failureClass', c.failure_class, 'reason', c.reason)
     ORDER BY c.created_at, c.id), '[]'::json)
   FROM runs c
   WHERE c.parent_run_id = r.id
     AND (c.status NOT IN ('Completed', 'Failed', 'Cancelled')
          OR c.id IN (SELECT n.child_run_id FROM node_runs n WHERE n.run_id = r.id AND n.child_run_id IS NOT NULL))
  ) AS children
FROM target r JOIN live USING (tenant_id)
ORDER BY r.created_at, r.id`;

interface LoadRow {
  run: RunState;
  graph: Graph | null;
  wake_at: number | null;
  shard: number;
  tenant_live: number;
  nodes: NodeRunState[];
  intents: Array<{ id: string; kind: string; nodeKey: string | null; payload: Record<string, unknown> }>;
  results: WorkResult[];
  children: ChildRunState[];
}

/**
 * Loads planner snapshots of `runIds` (missing ids are left out) in one round trip, oldest run
 * first. `results` holds the durable (node_results) outcomes not yet applied; the dispatcher
 * adds those it took from Redis, and the `started` reports. Nodes follow the graph's order.
 * `runSlotAvailable`: a run that is not Pending, or is a child run (its parent's slot covers it),
 * always has one; Pending top-level runs share the tenant's free slots in creation order.
 */
export async function loadSnapshots(
  db: Queryable,
  runIds: string[],
  opts: LoadSnapshotsOptions,
): Promise<LoadedSnapshot[]> {
  if (runIds.length === 0) return [];
  const res = await db.query<LoadRow>({ name: 'flowline_load_snapshots', text: LOAD_SQL, values: [runIds, SLOT_HOLDING_RUN_STATUSES] });
  const free = new Map<string, number>();
  return res.rows.map((row) => {
    const graph = row.graph ?? EMPTY_GRAPH;
    const order = new Map(graph.nodes.map((n, i) => [n.key, i]));
    const nodes = [...row.nodes].sort(
      (a, b) =>
        (order.get(a.nodeKey) ?? Infinity) - (order.get(b.nodeKey) ?? Infinity) || cmp(a.nodeKey, b.nodeKey),
    );
    const tenant = row.run.tenantId;
    if (!free.has(tenant)) free.set(tenant, opts.maxConcurrentRuns - row.tenant_live);
    let runSlotAvailable = true;
    if (row.run.status === 'Pending' && row.run.parentRunId === null) {
      const left = free.get(tenant)!;
      runSlotAvailable = left > 0;
      if (runSlotAvailable) free.set(tenant, left - 1);
    }
    return {
      run: row.run,
      graph,
      nodes,
      results: row.results,
      started: [],
      intents: row.intents.map(toIntent),
      children: row.children,
      runSlotAvailable,
      wakeAt: row.wake_at,
      shard: row.shard,
    };
  });
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** intents row → Intent: `payload` carries the kind's own members (reason, output, operationId). */
function toIntent(row: LoadRow['intents'][number]): Intent {
  const base = { ...row.payload, id: row.id, kind: row.kind };
  if (row.kind === 'cancel')
    return { id: row.id, kind: 'cancel', reason: (row.payload.reason as string) ?? null };
  return { ...base, nodeKey: row.nodeKey } as Intent;
}
