/**
 * SQL for runs as the API touches them: idempotent creation (run row + node rows +
 * `run.created`, and the conversation binding when the run names one, in one
 * transaction), reads (summary, node runs, events, keyset list)
 * and the two operator writes of this surface — cancel and gate decisions — each a
 * guarded write plus an intent row for the dispatcher, with the run's `wake_at` set to
 * now and its `version` bumped so a tick planned on an older read cannot commit over it.
 * Every read is tenant-scoped: another tenant's run reads as absent.
 */
import type { Pool, PoolClient } from 'pg';
import { rollback, withTransaction, type Tx } from './transaction';
import { randomUUID } from 'node:crypto';
import { VERB_RULES, publishesToChat, type Graph } from '@flowline/graph';
import { definitionGraphAt, encodePageCursor, exactJson, type DefinitionRow, type KeysetPage } from './definitions';
import { openJson, openJsonText, sealJsonText } from '../crypto';
import { nodeDocAt, runDocAt, steerMessageAt } from './run-snapshots';
import { eventDetailAt } from './run-apply';

type Queryable = Pick<Pool, 'query'> | PoolClient;

/**
 * The time an intent is stamped with (`intents.created_at`, the order the dispatcher loads
 * and the planner applies intents in). Every intent writer takes it in a statement that runs
 * after its transaction locked the run row (each bumps `runs.version`), and holds that lock
 * until commit: so of two intents of one run, the one committed later has the later time —
 * load order is commit order. `now()` (the transaction's start) would not be: a transaction
 * that began first can commit after one that began later.
 */
export const INTENT_TIME = 'clock_timestamp()';

/** FNV-1a (32-bit) of the run id, modulo the shard count: the run's dispatcher shard. */
export function shardOfRun(runId: string, shardCount: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < runId.length; i++) {
    h ^= runId.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % shardCount;
}

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
}

/** A run with its pinned graph document and output. */
export interface RunDetailRow extends RunSummaryRow {
  graph: unknown;
  output: unknown;
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
}

export interface NodeRunDetailRow extends NodeRunSummaryRow {
  input: unknown;
  inputOverride: unknown;
  output: unknown;
  steering: unknown;
  notBefore: Date | null;
  decision: unknown;
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
  to_char(r.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') AS created_key`;

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
    startedAt: r.started_at,
    finishedAt: r.finished_at,
  };
}
/* eslint-enable @typescript-eslint/no-explicit-any */

/** A node row to create with the run: Pending, attempt 0, budget `attemptLimit`. */
export interface NodeSeed {
  key: string;
  kind: string;
  attemptLimit: number;
}

/** The locked definition as run creation sees it: with its parsed `Graph` model. */
export type DefinitionForRun = DefinitionRow & { planGraph: unknown };

/** What run creation needs from the (locked) definition, computed by the caller. */
export interface RunSeed {
  /** JSON text of the run input */
  inputJson: string;
  nodes: NodeSeed[];
}

export interface CreateRunParams {
  tenantId: string;
  definitionId: string;
  requestId: string | null;
  conversationId: string | null;
  shardCount: number;
  /**
   * Called inside the transaction with the definition row locked FOR SHARE; returns the
   * seed or throws (the transaction rolls back and the error propagates).
   */
  prepare: (definition: DefinitionForRun) => RunSeed;
  /**
   * Called inside the transaction after the run, its node rows, `run.created` and (with a
   * `conversationId`) the conversation binding are written (not on a replay, not when the
   * conversation is busy); throwing rolls the whole run back.
   */
  beforeCommit?: (tx: Tx, runId: string) => Promise<void>;
}

export type CreateRunResult =
  | { kind: 'created'; runId: string; shard: number }
  | { kind: 'replayed'; runId: string }
  | { kind: 'requestIdReused'; runId: string }
  /** the conversation's bound run (`runId`, null if it vanished meanwhile) is still live */
  | { kind: 'runBusy'; runId: string | null }
  | { kind: 'definitionNotFound' };

/** Run statuses after which a conversation may start its next run. */
const FINISHED_RUN_STATUSES = ['Completed', 'Failed', 'Cancelled'] as const;

/** The conversation's bound run, or undefined when the conversation has no row yet. */
async function boundRunOf(db: Queryable | Tx, tenantId: string, conversationId: string): Promise<string | null | undefined> {
  const res = await db.query<{ bound_run_id: string | null }>(
    `SELECT bound_run_id FROM conversations WHERE tenant_id = $1 AND id = $2`,
    [tenantId, conversationId],
  );
  return res.rows[0] ? res.rows[0].bound_run_id : undefined;
}

/**
 * One live run per conversation (CONTRACT §5): binds `runId` to the conversation by a
 * compare-and-set on `bound_run_id`. Inputs: the binding read before the run was inserted
 * (`expected`; undefined = no conversation row). Guard: the row still holds `expected`
 * and that run is terminal — a missing row is inserted, and a concurrent first binding
 * conflicts on (tenant_id, id) and loses because `expected` said there was no row. The
 * ON CONFLICT guard is evaluated on the row's latest committed version, so of two
 * transactions that read the same `expected`, the second sees the first's new run and
 * fails. Result: true when bound, false when the conversation is busy.
 */
async function bindConversation(
  tx: Tx,
  tenantId: string,
  conversationId: string,
  runId: string,
  expected: string | null | undefined,
): Promise<boolean> {
  const bound = await tx.query(
    `INSERT INTO conversations (tenant_id, id, bound_run_id, created_at, updated_at)
     VALUES ($1, $2, $3, now(), now())
     ON CONFLICT (tenant_id, id) DO UPDATE SET bound_run_id = EXCLUDED.bound_run_id, updated_at = now()
     WHERE $5::boolean
       AND conversations.bound_run_id IS NOT DISTINCT FROM $4::uuid
       AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = $4::uuid AND r.status <> ALL($6::text[]))
     RETURNING id`,
    [tenantId, conversationId, runId, expected ?? null, expected !== undefined, FINISHED_RUN_STATUSES],
  );
  return (bound.rowCount ?? 0) > 0;
}

/** The run holding `requestId` for the tenant, if any. */
export async function findRunByRequestId(
  db: Queryable | Tx,
  tenantId: string,
  requestId: string,
): Promise<{ id: string; definitionId: string } | null> {
  const res = await db.query<{ id: string; definition_id: string }>(
    `SELECT id, definition_id FROM runs WHERE tenant_id = $1 AND request_id = $2`,
    [tenantId, requestId],
  );
  const row = res.rows[0];
  return row ? { id: row.id, definitionId: row.definition_id } : null;
}

function replayOf(existing: { id: string; definitionId: string }, definitionId: string): CreateRunResult {
  return existing.definitionId === definitionId
    ? { kind: 'replayed', runId: existing.id }
    : { kind: 'requestIdReused', runId: existing.id };
}

/** What a creation can be answered from before it writes anything. */
interface CreationPrecheck {
  /** the run already holding the request id */
  existing: { id: string; definitionId: string } | null;
  /** the conversation's binding (undefined: no conversation row) */
  bound: string | null | undefined;
  /** true when the bound run is still live (the conversation is busy) */
  busy: boolean;
}

/*
 * Inputs: $1 tenant, $2 request id (null: none), $3 conversation id (null: none), $4 finished statuses.
 * Result: one row — the run holding the request id (if any), the conversation row's existence and
 * bound run, and whether that run is live. One statement, so both come from one snapshot: a twin
 * committed in between is seen by both reads or by neither (a replay is answered before RunBusy).
 */
const PRECHECK_SQL = `
SELECT rq.id AS run_id, rq.definition_id, cv.id IS NOT NULL AS has_conversation, cv.bound_run_id,
       EXISTS (SELECT 1 FROM runs b WHERE b.id = cv.bound_run_id AND b.status <> ALL($4::text[])) AS busy
FROM (SELECT 1) AS one
LEFT JOIN runs rq ON $2::text IS NOT NULL AND rq.tenant_id = $1 AND rq.request_id = $2
LEFT JOIN conversations cv ON $3::text IS NOT NULL AND cv.tenant_id = $1 AND cv.id = $3`;

/**
 * Prechecks in flight, by pool and key: concurrent creations with the same tenant, request
 * id and conversation share one read, so a burst of N replays of one key costs the pool one
 * statement instead of N queued behind each other (issue #12). Sharing is safe: a run found
 * holding the request id holds it forever (runs are never deleted, the key never moves), and
 * every "absent" or "not busy" answer is re-decided inside the creating transaction.
 */
const prechecksInFlight = new WeakMap<Queryable, Map<string, Promise<CreationPrecheck>>>();

function precheckCreation(db: Queryable, p: CreateRunParams): Promise<CreationPrecheck> {
  let inFlight = prechecksInFlight.get(db);
  if (!inFlight) prechecksInFlight.set(db, (inFlight = new Map()));
  const key = JSON.stringify([p.tenantId, p.requestId, p.conversationId]);
  const shared = inFlight.get(key);
  if (shared) return shared;
  const read = readPrecheck(db, p).finally(() => inFlight.delete(key));
  inFlight.set(key, read);
  return read;
}

async function readPrecheck(db: Queryable, p: CreateRunParams): Promise<CreationPrecheck> {
  // named: parsed and planned once per connection (it answers every replay of a burst)
  const res = await db.query({
    name: 'flowline_create_precheck',
    text: PRECHECK_SQL,
    values: [p.tenantId, p.requestId, p.conversationId, FINISHED_RUN_STATUSES],
  });
  const r = res.rows[0];
  return {
    existing: r?.run_id ? { id: r.run_id, definitionId: r.definition_id } : null,
    bound: r?.has_conversation ? r.bound_run_id : undefined,
    busy: r?.busy === true,
  };
}

/**
 * Creation transactions in flight in this process, by pool and key (`r:` tenant + request
 * id, `c:` tenant + conversation): a creation that finds one for its key waits for it
 * outside any transaction and decides again, instead of opening a transaction that would
 * sit on a pool connection waiting for the first one's row locks (issue #12: a burst of N
 * creations on one key held every connection). Other processes are still decided by the
 * unique index and the binding's compare-and-set inside the transaction.
 */
const creationsInFlight = new WeakMap<Pool, Map<string, Promise<unknown>>>();

function creationKeys(p: CreateRunParams): string[] {
  const keys: string[] = [];
  if (p.requestId !== null) keys.push(JSON.stringify(['r', p.tenantId, p.requestId]));
  if (p.conversationId !== null) keys.push(JSON.stringify(['c', p.tenantId, p.conversationId]));
  return keys;
}

/**
 * Creates a run, or answers replay/RequestIdReused/RunBusy: from one read before any
 * transaction when it can ({@link precheckCreation}), else after the creation of the same
 * key already in flight in this process finished, else by {@link createInTransaction}.
 * Each wait follows a distinct creation, and one that commits settles every later
 * precheck of its key, so the loop ends.
 */
export async function createRun(pool: Pool, p: CreateRunParams): Promise<CreateRunResult> {
  let inFlight = creationsInFlight.get(pool);
  if (!inFlight) creationsInFlight.set(pool, (inFlight = new Map()));
  const keys = creationKeys(p);
  for (;;) {
    const pre = await precheckCreation(pool, p);
    if (pre.existing) return replayOf(pre.existing, p.definitionId);
    if (p.conversationId !== null && pre.busy) return { kind: 'runBusy', runId: pre.bound ?? null };
    const running = keys.map((k) => inFlight.get(k)).find((c) => c !== undefined);
    if (running) {
      await running.catch(() => undefined);
      continue;
    }
    const creation = createInTransaction(pool, p, pre);
    for (const k of keys) inFlight.set(k, creation);
    try {
      return await creation;
    } finally {
      for (const k of keys) if (inFlight.get(k) === creation) inFlight.delete(k);
    }
  }
}

/**
 * Creates a run in ONE transaction: run row (Pending, wake_at = now(), pinned graph and
 * hash, last_seq 1), one Pending node row per graph node, and event `run.created` at
 * seq 1. Idempotency rests on the unique (tenant_id, request_id) index: the insert is
 * ON CONFLICT DO NOTHING, and a conflict (a concurrent or earlier twin) is answered from
 * the existing row, read back in the same transaction — same definition → replayed,
 * another → requestIdReused.
 *
 * With a `conversationId` the run is also bound to the conversation
 * ({@link bindConversation}, whichever route started it); when the bound run is still
 * live the transaction rolls back and the answer is `runBusy`. A replay is answered
 * before the binding is tried, so a requestId replayed while its own run is live still
 * gets that run.
 *
 * The transaction uses its own connection only: a twin (of another process) waiting on
 * the first's uncommitted insert holds one connection, never two.
 */
function createInTransaction(pool: Pool, p: CreateRunParams, pre: CreationPrecheck): Promise<CreateRunResult> {
  return withTransaction(pool, async (tx) => {
    const def = await tx.query(
      `SELECT id, tenant_id, name, description, kind, version, graph::text AS graph, plan_graph::text AS plan_graph, graph_hash, node_count, created_at,
              updated_at
       FROM definitions WHERE id = $1 AND tenant_id = $2 FOR SHARE`,
      [p.definitionId, p.tenantId],
    );
    const d = def.rows[0];
    if (!d) return rollback<CreateRunResult>({ kind: 'definitionNotFound' });
    const planGraph = exactJson(openJsonText(d.plan_graph, definitionGraphAt(d.id, d.version, 'plan_graph'))) as Graph;
    const seed = p.prepare({
      id: d.id,
      tenantId: d.tenant_id,
      name: d.name,
      description: d.description,
      kind: d.kind,
      version: d.version,
      graph: exactJson(openJsonText(d.graph, definitionGraphAt(d.id, d.version))),
      planGraph,
      graphHash: d.graph_hash,
      nodeCount: d.node_count ?? 0,
      createdAt: d.created_at,
      updatedAt: d.updated_at,
    });
    const runId = randomUUID();
    const shard = shardOfRun(runId, p.shardCount);
    // Copies the pinned graph from the locked definition row: the run keeps this copy forever
    // (sealed, it stays bound to the definition row and version it came from). A twin's
    // uncommitted insert of the same request id makes this statement wait for its outcome.
    const inserted = await tx.query(
      `INSERT INTO runs (id, tenant_id, definition_id, definition_version, graph, plan_graph, graph_hash, status, shard,
                         wake_at, request_id, input, conversation_id, last_seq, created_at)
       SELECT $1, $2, d.id, d.version, d.graph, d.plan_graph, d.graph_hash, 'Pending', $4, now(), $5, $6::jsonb, $7, 1, now()
       FROM definitions d WHERE d.id = $3
       ON CONFLICT (tenant_id, request_id) WHERE request_id IS NOT NULL DO NOTHING
       RETURNING id`,
      [runId, p.tenantId, p.definitionId, shard, p.requestId, sealJsonText(seed.inputJson, runDocAt(runId, 'input')), p.conversationId],
    );
    if (!inserted.rowCount) {
      // READ COMMITTED: this later statement sees the twin that won the insert
      const existing = p.requestId === null ? null : await findRunByRequestId(tx, p.tenantId, p.requestId);
      if (!existing) throw new Error('run insert conflicted but no run holds the request id');
      return rollback(replayOf(existing, p.definitionId));
    }
    // a run bound to a conversation marks the nodes that publish their answer to it
    const publishing = new Set(
      p.conversationId === null ? [] : planGraph.nodes.filter((n) => publishesToChat(planGraph, n)).map((n) => n.key),
    );
    await tx.query(
      `INSERT INTO node_runs (run_id, node_key, kind, status, attempt, attempt_limit, publishes)
       SELECT $1, k, kd, 'Pending', 0, l, pub FROM unnest($2::text[], $3::text[], $4::int[], $5::boolean[]) AS t(k, kd, l, pub)`,
      [
        runId,
        seed.nodes.map((n) => n.key),
        seed.nodes.map((n) => n.kind),
        seed.nodes.map((n) => n.attemptLimit),
        seed.nodes.map((n) => publishing.has(n.key)),
      ],
    );
    await tx.query(
      `INSERT INTO events (run_id, seq, kind, node_key, at, detail) VALUES ($1, 1, 'run.created', NULL, now(), $2::jsonb)`,
      [runId, JSON.stringify({ definitionId: p.definitionId, requestId: p.requestId })],
    );
    if (p.conversationId !== null && !(await bindConversation(tx, p.tenantId, p.conversationId, runId, pre.bound))) {
      // READ COMMITTED: this later statement sees the binding that won
      return rollback<CreateRunResult>({ kind: 'runBusy', runId: (await boundRunOf(tx, p.tenantId, p.conversationId)) ?? null });
    }
    if (p.beforeCommit) await p.beforeCommit(tx, runId);
    return { kind: 'created', runId, shard };
  });
}

/** One run of the tenant with its pinned graph and output; null when absent. */
export async function getRunDetail(db: Queryable, tenantId: string, runId: string): Promise<RunDetailRow | null> {
  const res = await db.query(
    `SELECT ${RUN_COLUMNS}, r.graph::text AS graph, r.output::text AS output FROM runs r
     WHERE r.id = $1 AND r.tenant_id = $2`,
    [runId, tenantId],
  );
  const r = res.rows[0];
  return r
    ? {
        ...toRunRow(r),
        graph: exactJson(openJsonText(r.graph, definitionGraphAt(r.definition_id, r.definition_version))),
        output: exactJson(openJsonText(r.output, runDocAt(r.id, 'output'))),
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

export interface RunFilter {
  status?: string;
  definitionId?: string;
  conversationId?: string;
}

/** A page of the tenant's runs, newest first, keyset over (created_at desc, id desc). */
export async function listRuns(
  db: Queryable,
  tenantId: string,
  filter: RunFilter,
  limit: number,
  after: { createdKey: string; id: string } | null,
): Promise<KeysetPage<RunSummaryRow>> {
  const res = await db.query(
    `SELECT ${RUN_COLUMNS} FROM runs r
     WHERE r.tenant_id = $1
       AND ($2::text IS NULL OR r.status = $2)
       AND ($3::uuid IS NULL OR r.definition_id = $3)
       AND ($4::timestamp IS NULL OR (r.created_at, r.id) < (($4::timestamp AT TIME ZONE 'UTC'), $5::uuid))
       AND ($7::text IS NULL OR r.conversation_id = $7)
     ORDER BY r.created_at DESC, r.id DESC
     LIMIT $6`,
    [
      tenantId,
      filter.status ?? null,
      filter.definitionId ?? null,
      after?.createdKey ?? null,
      after?.id ?? null,
      limit + 1,
      filter.conversationId ?? null,
    ],
  );
  const rows = res.rows.slice(0, limit);
  const last = rows[rows.length - 1];
  return {
    items: rows.map(toRunRow),
    nextCursor: res.rows.length > limit && last ? encodePageCursor(last.created_key, last.id) : null,
  };
}


/** Every node row of a run (the caller has checked the run's tenant). */
export async function listNodeRuns(db: Queryable, runId: string): Promise<NodeRunSummaryRow[]> {
  const res = await db.query(
    `SELECT node_key, kind, status, attempt, failure_class, reason, pending_decision_kind, child_run_id, started_at, finished_at
     FROM node_runs WHERE run_id = $1 ORDER BY node_key`,
    [runId],
  );
  return res.rows.map(toNodeRow);
}

/** One node row with its documents; null when the run has no such node. */
export async function getNodeRun(db: Queryable, runId: string, nodeKey: string): Promise<NodeRunDetailRow | null> {
  const res = await db.query(
    `SELECT node_key, kind, status, attempt, failure_class, reason, pending_decision_kind, child_run_id, started_at,
            finished_at, input::text AS input, input_override::text AS input_override, output::text AS output, steering,
            not_before, decision::text AS decision
     FROM node_runs WHERE run_id = $1 AND node_key = $2`,
    [runId, nodeKey],
  );
  const r = res.rows[0];
  if (!r) return null;
  const at = (column: string) => nodeDocAt(runId, nodeKey, column);
  const steering = (r.steering ?? []) as Array<{ operationId: string; message: unknown }>;
  return {
    ...toNodeRow(r),
    input: exactJson(openJsonText(r.input, at('input'))),
    inputOverride: exactJson(openJsonText(r.input_override, at('input_override'))),
    output: exactJson(openJsonText(r.output, at('output'))),
    steering: steering.map((s) => ({ ...s, message: openJson(s.message, steerMessageAt(runId, nodeKey, s.operationId)) })),
    notBefore: r.not_before,
    decision: exactJson(openJsonText(r.decision, at('decision'))),
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

/**
 * Cancel request. Guard: the run is the tenant's and live (Pending, Running,
 * WaitingForApproval). Effect: status Cancelling, cancel_reason, version + 1,
 * wake_at = now(), plus a `cancel` intent — in one transaction. A Cancelling or terminal
 * run is a no-op (`'noop'`). Like every intent, it is timed by {@link INTENT_TIME}.
 */
export async function requestCancel(
  pool: Pool,
  tenantId: string,
  runId: string,
  reason: string | null,
): Promise<{ outcome: 'cancelling' | 'noop'; shard: number } | null> {
  return withTransaction(pool, async (client) => {
    const upd = await client.query<{ shard: number }>(
      `UPDATE runs SET status = 'Cancelling', cancel_reason = $3, version = version + 1, wake_at = now()
       WHERE id = $1 AND tenant_id = $2 AND status = ANY($4::text[])
       RETURNING shard`,
      [runId, tenantId, reason, VERB_RULES.cancel.runStatuses],
    );
    const row = upd.rows[0];
    if (row) {
      await client.query(
        `INSERT INTO intents (id, run_id, kind, node_key, payload, created_at) VALUES ($1, $2, 'cancel', NULL, $3::jsonb, ${INTENT_TIME})`,
        [randomUUID(), runId, JSON.stringify({ reason })],
      );
      return { outcome: 'cancelling' as const, shard: row.shard };
    }
    const cur = await client.query<{ shard: number }>(`SELECT shard FROM runs WHERE id = $1 AND tenant_id = $2`, [
      runId,
      tenantId,
    ]);
    const c = cur.rows[0];
    return c ? { outcome: 'noop' as const, shard: c.shard } : null;
  });
}

/**
 * Records a gate decision. Guard (compare-and-set): the node is one the verb table lets a
 * person decide (a WaitingForApproval Pause or ChatInput) and has no decision yet, on a run of the tenant. Effect: node_runs.decision = `decisionJson`,
 * a `decide` intent carrying the operationId, and the run's wake_at = now(), version + 1.
 * Returns the run's shard when recorded, null when the guard failed (lost race or wrong
 * state — the caller re-reads to answer).
 */
export async function recordDecision(
  pool: Pool,
  tenantId: string,
  runId: string,
  nodeKey: string,
  operationId: string,
  decisionJson: string,
): Promise<{ shard: number } | null> {
  return withTransaction(pool, async (client) => {
    const upd = await client.query(
      `UPDATE node_runs n SET decision = $4::jsonb
       FROM runs r
       WHERE n.run_id = $1 AND n.node_key = $2 AND r.id = n.run_id AND r.tenant_id = $3
         AND n.status = ANY($5::text[]) AND n.kind = ANY($6::text[]) AND r.status = ANY($7::text[]) AND n.decision IS NULL
       RETURNING n.node_key`,
      [
        runId,
        nodeKey,
        tenantId,
        sealJsonText(decisionJson, nodeDocAt(runId, nodeKey, 'decision')),
        VERB_RULES.decide.nodeStatuses,
        VERB_RULES.decide.kinds.only,
        VERB_RULES.decide.runStatuses,
      ],
    );
    if (!upd.rowCount) return null;
    // the run row first: the intent is timed once this transaction holds it (INTENT_TIME)
    const run = await client.query<{ shard: number }>(
      `UPDATE runs SET wake_at = now(), version = version + 1 WHERE id = $1 RETURNING shard`,
      [runId],
    );
    await client.query(
      `INSERT INTO intents (id, run_id, kind, node_key, payload, created_at) VALUES ($1, $2, 'decide', $3, $4::jsonb, ${INTENT_TIME})`,
      [randomUUID(), runId, nodeKey, JSON.stringify({ operationId })],
    );
    return { shard: run.rows[0]!.shard };
  });
}
