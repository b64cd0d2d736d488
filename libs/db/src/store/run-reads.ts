/**
 * SQL of the reads of runs as the API makes them: one run (summary, detail), the keyset
 * list, its node runs and its events. Every read is tenant-scoped: another tenant's run
 * reads as absent.
 */
import { storedUsage, usageView, type RunBudget, type UsageView } from '@flowline/graph';
import { definitionGraphAt, encodePageCursor, exactJson, type KeysetPage } from './definitions';
import { openJson, openJsonText } from '../crypto';
import { nodeDocAt, runDocAt, steerMessageAt } from './run-snapshots';
import { eventDetailAt } from './run-apply';
import type { Queryable } from './transaction';
import { runSearchSql } from './run-search';
import type { RunSearch } from '@flowline/graph';

export interface RunSummaryRow {
  id: string;
  tenantId: string;
  definitionId: string;
  /** the definition version the run pinned */
  definitionVersion: number;
  status: string;
  failureClass: string;
  reason: string | null;
  paused: boolean;
  requestId: string | null;
  parentRunId: string | null;
  conversationId: string | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  graphHash: string;
  lastSeq: number;
  /** the run and node this run was forked from, else null */
  forkedFrom: { runId: string; nodeKey: string } | null;
  /** string key/values given at start, {} when none */
  metadata: Record<string, string>;
  /** the run's effective budget (stored at creation), null: none */
  budget: RunBudget | null;
  /** rolled-up model usage with the run's attempts */
  usage: UsageView;
  /** 1–5, higher first */
  priority: number;
  /** a delayed start's earliest start (kept after its release), else null */
  notBefore: Date | null;
  /** the schedule whose slot started it, else null */
  scheduleId: string | null;
}

/** A run with its pinned graph document and output. */
export interface RunDetailRow extends RunSummaryRow {
  graph: unknown;
  output: unknown;
  /** every node row, by node key, read in the same statement as the run (one snapshot: they reflect every event up to `lastSeq`) */
  nodes: NodeRunSummaryRow[];
}

export interface NodeRunSummaryRow {
  nodeKey: string;
  kind: string;
  status: string;
  attempt: number;
  failureClass: string;
  reason: string | null;
  pendingDecisionKind: string | null;
  childRunId: string | null;
  startedAt: Date | null;
  finishedAt: Date | null;
  /** the run this row was copied from at a fork (reused, not run here), else null */
  reusedFrom: string | null;
}

export interface NodeRunDetailRow extends NodeRunSummaryRow {
  /** node_runs.cause (model.ts NODE_CAUSES): read by the verb refusals, not shown in responses */
  cause: string;
  input: unknown;
  inputOverride: unknown;
  output: unknown;
  steering: unknown;
  notBefore: Date | null;
  decision: unknown;
  /** a policy Pause's recorded decisions (ApprovalVote[]), else null */
  approvals: unknown;
}

export interface RunEventRow {
  seq: number;
  kind: string;
  nodeKey: string | null;
  at: Date;
  detail: unknown;
}

const RUN_COLUMNS = `r.id, r.tenant_id, r.definition_id, r.definition_version, r.status, r.failure_class, r.reason, r.paused, r.request_id,
  r.parent_run_id, r.conversation_id, r.created_at, r.started_at, r.finished_at, r.graph_hash, r.last_seq,
  r.forked_from_run_id, r.forked_from_node_key, r.metadata, r.budget, r.usage, r.total_attempts, r.priority,
  r.not_before, r.schedule_id, to_char(r.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') AS created_key`;

/* eslint-disable @typescript-eslint/no-explicit-any -- raw pg rows are mapped field by field */
function toRunRow(r: any): RunSummaryRow {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    definitionId: r.definition_id,
    definitionVersion: r.definition_version,
    status: r.status,
    failureClass: r.failure_class ?? 'None',
    reason: r.reason,
    paused: r.paused ?? false,
    requestId: r.request_id,
    parentRunId: r.parent_run_id,
    conversationId: r.conversation_id,
    createdAt: r.created_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    graphHash: r.graph_hash,
    lastSeq: r.last_seq ?? 0,
    forkedFrom: r.forked_from_run_id ? { runId: r.forked_from_run_id, nodeKey: r.forked_from_node_key } : null,
    metadata: r.metadata ?? {},
    budget: r.budget ?? null,
    usage: usageView(storedUsage(r.usage), r.total_attempts ?? 0),
    priority: r.priority ?? 3,
    notBefore: r.not_before ?? null,
    scheduleId: r.schedule_id ?? null,
  };
}

function toNodeRow(r: any): NodeRunSummaryRow {
  return {
    nodeKey: r.node_key,
    kind: r.kind,
    status: r.status,
    attempt: r.attempt ?? 0,
    failureClass: r.failure_class ?? 'None',
    reason: r.reason,
    pendingDecisionKind: r.pending_decision_kind,
    childRunId: r.child_run_id,
    // a Date from the driver, or the ISO text json_agg wrote
    startedAt: r.started_at == null ? null : new Date(r.started_at),
    finishedAt: r.finished_at == null ? null : new Date(r.finished_at),
    reusedFrom: r.reused_from_run_id ?? null,
  };
}
/* eslint-enable @typescript-eslint/no-explicit-any */

/** The node-run columns of {@link NodeRunSummaryRow}, as one JSON object per row (for `json_agg`). */
const NODE_SUMMARY_JSON = `json_build_object('node_key', n.node_key, 'kind', n.kind, 'status', n.status, 'attempt', n.attempt,
  'failure_class', n.failure_class, 'reason', n.reason, 'pending_decision_kind', n.pending_decision_kind,
  'child_run_id', n.child_run_id, 'started_at', n.started_at, 'finished_at', n.finished_at, 'reused_from_run_id', n.reused_from_run_id)`;

/**
 * One run of the tenant with its pinned graph, output and node rows; null when absent. One
 * statement, so the node rows and `lastSeq` come from one snapshot: a reader that replays
 * the run's events after `lastSeq` over these rows never replays one they already reflect.
 */
// named: prepared once per connection (a run's reads are on the hot path of every gate decision)
const RUN_DETAIL_SQL = `SELECT ${RUN_COLUMNS}, r.graph::text AS graph, r.output::text AS output,
       (SELECT coalesce(json_agg(${NODE_SUMMARY_JSON} ORDER BY n.node_key), '[]'::json) FROM node_runs n WHERE n.run_id = r.id) AS nodes
     FROM runs r
     WHERE r.id = $1 AND r.tenant_id = $2`;

export async function getRunDetail(db: Queryable, tenantId: string, runId: string): Promise<RunDetailRow | null> {
  const res = await db.query({ name: 'flowline_run_detail', text: RUN_DETAIL_SQL, values: [runId, tenantId] });
  const r = res.rows[0];
  return r
    ? {
        ...toRunRow(r),
        graph: exactJson(openJsonText(r.graph, definitionGraphAt(r.definition_id, r.definition_version))),
        output: exactJson(openJsonText(r.output, runDocAt(r.id, 'output'))),
        nodes: (r.nodes as unknown[]).map(toNodeRow),
      }
    : null;
}

/** Status and last seq of the tenant's run (cheap poll for streams); null when absent. */
export async function getRunHead(
  db: Queryable,
  tenantId: string,
  runId: string,
): Promise<{ status: string; lastSeq: number } | null> {
  const res = await db.query<{ status: string; last_seq: number }>(
    `SELECT status, last_seq FROM runs WHERE id = $1 AND tenant_id = $2`,
    [runId, tenantId],
  );
  const r = res.rows[0];
  return r ? { status: r.status, lastSeq: r.last_seq } : null;
}

/**
 * The invocations of a run in flight that may write activity (an LlmCall, Agent or
 * DecisionModel node, or a Tool node — an MCP tool's progress — Queued or Running with its
 * invocation): whose activity streams an SSE follower relays. A Tool node calling a built-in
 * tool writes none; relaying it costs one empty read per poll.
 */
export async function runningActivityInvocations(db: Queryable, runId: string): Promise<Array<{ nodeKey: string; invocationId: string }>> {
  const res = await db.query<{ node_key: string; invocation_id: string }>(
    `SELECT node_key, invocation_id FROM node_runs
     WHERE run_id = $1 AND status IN ('Queued', 'Running') AND kind IN ('LlmCall', 'Agent', 'DecisionModel', 'Tool') AND invocation_id IS NOT NULL
     ORDER BY node_key`,
    [runId],
  );
  return res.rows.map((r) => ({ nodeKey: r.node_key, invocationId: r.invocation_id }));
}

/** A runs-list filter: a checked run search (libs/graph `checkRunSearch`). */
export type RunFilter = RunSearch;

/**
 * The statement of {@link listRuns} (exported so the scale bench can EXPLAIN exactly what the
 * API runs): the tenant's runs matching `filter`, newest first, keyset over (created_at desc,
 * id desc): the cursor is the last row's (created_at, id), whatever the filter. Only the
 * filter's members are in the WHERE clause, and the common filters have an index that starts
 * with the tenant, then the filter column, then (created_at desc, id desc) (run_list_indexes),
 * so a page — first or a thousand pages deep — reads `limit + 1` index entries, whatever the
 * store holds.
 */
export function listRunsQuery(
  tenantId: string,
  filter: RunFilter,
  limit: number,
  after: { createdKey: string; id: string } | null,
): { text: string; values: unknown[] } {
  const params: unknown[] = [tenantId, after?.createdKey ?? null, after?.id ?? null, limit + 1];
  const where = runSearchSql(filter, params);
  return {
    text: `SELECT ${RUN_COLUMNS} FROM runs r
     WHERE r.tenant_id = $1
       AND ($2::timestamp IS NULL OR (r.created_at, r.id) < (($2::timestamp AT TIME ZONE 'UTC'), $3::uuid))
       AND ${where}
     ORDER BY r.created_at DESC, r.id DESC
     LIMIT $4`,
    values: params,
  };
}

/** A page of the tenant's runs matching `filter`, newest first (see {@link listRunsQuery}). */
export async function listRuns(
  db: Queryable,
  tenantId: string,
  filter: RunFilter,
  limit: number,
  after: { createdKey: string; id: string } | null,
): Promise<KeysetPage<RunSummaryRow>> {
  const q = listRunsQuery(tenantId, filter, limit, after);
  const res = await db.query(q.text, q.values);
  const rows = res.rows.slice(0, limit);
  const last = rows[rows.length - 1];
  return {
    items: rows.map(toRunRow),
    nextCursor: res.rows.length > limit && last ? encodePageCursor(last.created_key, last.id) : null,
  };
}

const NODE_DETAIL_COLUMNS = `n.node_key, n.kind, n.status, n.attempt, n.failure_class, n.cause, n.reason, n.pending_decision_kind, n.child_run_id,
  n.started_at, n.finished_at, n.input::text AS input, n.input_override::text AS input_override, n.output::text AS output, n.steering,
  n.not_before, n.decision::text AS decision, n.approvals::text AS approvals, n.reused_from_run_id`;

/* eslint-disable @typescript-eslint/no-explicit-any -- raw pg rows are mapped field by field */
function toNodeRunDetail(runId: string, nodeKey: string, r: any): NodeRunDetailRow {
  const at = (column: string) => nodeDocAt(runId, nodeKey, column);
  const steering = (r.steering ?? []) as Array<{ operationId: string; message: unknown }>;
  return {
    ...toNodeRow(r),
    cause: r.cause,
    input: exactJson(openJsonText(r.input, at('input'))),
    inputOverride: exactJson(openJsonText(r.input_override, at('input_override'))),
    output: exactJson(openJsonText(r.output, at('output'))),
    steering: steering.map((s) => ({ ...s, message: openJson(s.message, steerMessageAt(runId, nodeKey, s.operationId)) })),
    notBefore: r.not_before,
    decision: exactJson(openJsonText(r.decision, at('decision'))),
    approvals: exactJson(openJsonText(r.approvals, at('approvals'))),
  };
}
/* eslint-enable @typescript-eslint/no-explicit-any */

/** One node row with its documents; null when the run has no such node. */
export async function getNodeRun(db: Queryable, runId: string, nodeKey: string): Promise<NodeRunDetailRow | null> {
  const res = await db.query({
    name: 'flowline_node_run',
    text: `SELECT ${NODE_DETAIL_COLUMNS} FROM node_runs n WHERE n.run_id = $1 AND n.node_key = $2`,
    values: [runId, nodeKey],
  });
  const r = res.rows[0];
  return r ? toNodeRunDetail(runId, nodeKey, r) : null;
}

/** What a gate decision is checked against: the run's status and pinned graph, and the node's row. */
export interface GateRead {
  runStatus: string;
  /** the run's pinned graph document */
  graph: unknown;
  /** null when the run has no such node */
  node: NodeRunDetailRow | null;
}

/**
 * The tenant's run (status, pinned graph) and one of its node rows, in one statement (one
 * round trip and one snapshot); null when the tenant has no such run.
 */
export async function getGateRead(db: Queryable, tenantId: string, runId: string, nodeKey: string): Promise<GateRead | null> {
  const res = await db.query({
    name: 'flowline_gate_read',
    text: `SELECT r.status AS run_status, r.graph::text AS graph, r.definition_id, r.definition_version, n.node_key IS NOT NULL AS has_node, ${NODE_DETAIL_COLUMNS}
     FROM runs r LEFT JOIN node_runs n ON n.run_id = r.id AND n.node_key = $3
     WHERE r.id = $1 AND r.tenant_id = $2`,
    values: [runId, tenantId, nodeKey],
  });
  const r = res.rows[0];
  if (!r) return null;
  return {
    runStatus: r.run_status,
    graph: exactJson(openJsonText(r.graph, definitionGraphAt(r.definition_id, r.definition_version))),
    node: r.has_node ? toNodeRunDetail(runId, nodeKey, r) : null,
  };
}

/**
 * Events with seq > afterSeq, ascending, at most `limit`; reads one row past the limit
 * so `truncated` is known without a count.
 */
export async function listRunEvents(
  db: Queryable,
  runId: string,
  afterSeq: number,
  limit: number,
): Promise<{ events: RunEventRow[]; truncated: boolean }> {
  const res = await db.query(
    `SELECT seq, kind, node_key, at, detail FROM events WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
    [runId, afterSeq, limit + 1],
  );
  return {
    events: res.rows.slice(0, limit).map((r) => ({
      seq: r.seq,
      kind: r.kind,
      nodeKey: r.node_key,
      at: r.at,
      detail: openJson(r.detail ?? {}, eventDetailAt(runId, r.seq)),
    })),
    truncated: res.rows.length > limit,
  };
}
