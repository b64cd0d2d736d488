/**
 * SQL of run creation as the API makes it: idempotent creation (run row + node rows +
 * `run.created`, and the conversation binding when the run names one, in one transaction),
 * and the shard a run id lands on.
 */
import type { Pool } from 'pg';
import { randomUUID } from 'node:crypto';
import { agentReferenceOf, effectiveBudget, publishesToChat, shardOfRun, type ConcurrencyKeyOf, type Graph, type RunBudget } from '@flowline/graph';
import { rollback, withTransaction, type Queryable, type Tx } from './transaction';
import { definitionGraphAt, exactJson, type DefinitionRow } from './definitions';
import { openJsonText, sealJsonText } from '../crypto';
import { runDocAt } from './run-snapshots';
import { pinSavedAgents, type AgentPinRequest } from './saved-agents';

/**
 * Run creation refused: Agent nodes of the pinned graph name saved agents (or versions) the
 * tenant no longer has. Thrown inside the transaction, so nothing is created.
 */
export class SavedAgentsMissingError extends Error {
  override readonly name = 'SavedAgentsMissingError';
  constructor(readonly missing: readonly AgentPinRequest[]) {
    super(`the graph names ${missing.length} saved agent(s) that no longer exist`);
  }
}

/** The saved agents a graph's Agent nodes name, for {@link pinSavedAgents}. */
function agentPinRequests(graph: Graph): AgentPinRequest[] {
  const refs: AgentPinRequest[] = [];
  // a plan graph is read back from storage: one without a node list names no agent
  for (const n of Array.isArray(graph.nodes) ? graph.nodes : []) {
    const ref = agentReferenceOf(n.kind, n.config);
    if (ref !== null) refs.push({ nodeKey: n.key, ...ref });
  }
  return refs;
}

/** The run's dispatcher shard (libs/graph's one function), here beside run creation, which assigns it. */
export { shardOfRun };

/** A definition version a run is created at (see {@link CreateRunParams.pinned}). */
export interface PinnedVersion {
  version: number;
  /** `definition_versions.graph` as stored */
  graphText: string;
  /** the version's parsed plan graph as stored ({@link sealPlanGraph}) */
  planGraphText: string;
  graphHash: string;
}

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
  /** the run's concurrency key (`concurrencyKeyOf` its plan graph and input); absent: none */
  concurrency?: ConcurrencyKeyOf;
}

export interface CreateRunParams {
  tenantId: string;
  definitionId: string;
  requestId: string | null;
  conversationId: string | null;
  shardCount: number;
  /** W3C `traceparent` of the creating request's span, stored on the run (null: not traced) @default null */
  traceParent?: string | null;
  /** the run's metadata (checked by the caller, stored unencrypted, searchable) @default {} */
  metadata?: Record<string, string>;
  /**
   * the run's own budget (validated by the caller); stored as the effective budget: per field the
   * stricter of it and the pinned graph's (the planner takes the stricter of the two again) @default null
   */
  budget?: RunBudget | null;
  /** the run's priority, 1–5, higher first @default 3 */
  priority?: number;
  /** the principal whose key creates the run (an approval's `forbid: initiator`) @default null */
  createdBy?: string | null;
  /**
   * A delayed start (epoch ms): a time later than the database's now creates the run Scheduled
   * with `wake_at` = it (the dispatcher's due sweep releases it to Pending then); an earlier
   * one, or none, creates it Pending at once. @default null
   */
  notBefore?: number | null;
  /** the schedule whose slot starts the run (stored for its overlap policy) @default null */
  scheduleId?: string | null;
  /**
   * A saved version to run instead of the definition's current one: its graph and plan graph as
   * stored (sealed to the definition and that version) and its hash. @default null: the current one
   */
  pinned?: PinnedVersion | null;
  /** the version alias the start went through (`current` for a start naming no version), recorded in `run.created` @default null */
  versionAlias?: string | null;
  /**
   * MAX_PENDING_RUNS of the tenant (0 or absent: unbounded): with that many Pending top-level
   * runs the creation is refused (`backlogFull`), decided inside the transaction.
   */
  maxPendingRuns?: number;
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
  | { kind: 'definitionNotFound' }
  /** the tenant already has `pending` (≥ MAX_PENDING_RUNS) Pending top-level runs */
  | { kind: 'backlogFull'; pending: number };

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
 * statement instead of N queued behind each other. Sharing is safe: a run found
 * holding the request id holds it forever (runs are never deleted, the key never moves), and
 * every "absent" or "not busy" answer is re-decided inside the creating transaction.
 */
const prechecksInFlight = new WeakMap<Queryable, Map<string, Promise<CreationPrecheck>>>();

function precheckCreation(db: Queryable, p: CreateRunParams): Promise<CreationPrecheck> {
  // no request id to replay and no conversation to bind: nothing to read (one round trip fewer)
  if (p.requestId === null && p.conversationId === null) return Promise.resolve({ existing: null, bound: undefined, busy: false });
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
 * sit on a pool connection waiting for the first one's row locks (a burst of N
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

/** What `run.created` says of the run's concurrency key: its value, or why it has none (nothing without a block). */
function concurrencyDetail(c: ConcurrencyKeyOf | undefined): Record<string, unknown> {
  if (!c || c.kind === 'none') return {};
  if (c.kind === 'keyed') return { concurrencyKey: { key: c.path, value: c.value, limit: c.limit } };
  return { concurrencyKey: { key: c.path, value: null, reason: c.reason } };
}

/**
 * Creates a run in ONE transaction: run row (Pending, wake_at = now(); or, with a future
 * `notBefore`, Scheduled with wake_at = notBefore; pinned graph and
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
const budgetJson = (b: RunBudget | null) => (b ? JSON.stringify(b) : null);

function createInTransaction(pool: Pool, p: CreateRunParams, pre: CreationPrecheck): Promise<CreateRunResult> {
  return withTransaction(pool, async (tx) => {
    const def = await tx.query({
      name: 'flowline_create_definition',
      text: `SELECT id, tenant_id, name, description, kind, version, graph::text AS graph, plan_graph::text AS plan_graph, graph_hash, node_count, enabled,
              created_at, updated_at
       FROM definitions WHERE id = $1 AND tenant_id = $2 FOR SHARE`,
      values: [p.definitionId, p.tenantId],
    });
    const d = def.rows[0];
    if (!d) return rollback<CreateRunResult>({ kind: 'definitionNotFound' });
    // a pinned version runs its own graphs (sealed to it), read from the caller, not the definition row
    const pin = p.pinned ?? null;
    const version: number = pin?.version ?? d.version;
    const planGraph = exactJson(openJsonText(pin?.planGraphText ?? d.plan_graph, definitionGraphAt(d.id, version, 'plan_graph'))) as Graph;
    const seed = p.prepare({
      id: d.id,
      tenantId: d.tenant_id,
      name: d.name,
      description: d.description,
      kind: d.kind,
      version,
      graph: exactJson(openJsonText(pin?.graphText ?? d.graph, definitionGraphAt(d.id, version))),
      planGraph,
      graphHash: pin?.graphHash ?? d.graph_hash,
      nodeCount: d.node_count ?? 0,
      enabled: d.enabled,
      createdAt: d.created_at,
      updatedAt: d.updated_at,
    });
    // the saved agents' versions are pinned now: an agent updated after this start reaches later runs only
    const pinned = await pinSavedAgents(tx, p.tenantId, agentPinRequests(planGraph));
    if (pinned.missing.length > 0) throw new SavedAgentsMissingError(pinned.missing);
    const runId = randomUUID();
    const shard = shardOfRun(runId, p.shardCount);
    const keyed = seed.concurrency?.kind === 'keyed' ? seed.concurrency : null;
    // Copies the pinned graph from the locked definition row: the run keeps this copy forever
    // (sealed, it stays bound to the definition row and version it came from). A twin's
    // uncommitted insert of the same request id makes this statement wait for its outcome.
    const inserted = await tx.query({
      name: 'flowline_create_run',
      text: `INSERT INTO runs (id, tenant_id, definition_id, definition_version, graph, plan_graph, graph_hash, status, shard,
                         wake_at, request_id, input, conversation_id, last_seq, created_at, trace_parent, metadata, budget,
                         priority, concurrency_key, concurrency_limit, agent_pins, not_before, schedule_id, created_by, version_alias)
       SELECT $1, $2, d.id, coalesce($17::int, d.version), coalesce($18::jsonb, d.graph), coalesce($19::jsonb, d.plan_graph),
              coalesce($20::text, d.graph_hash), CASE WHEN nb.at > now() THEN 'Scheduled' ELSE 'Pending' END, $4,
              CASE WHEN nb.at > now() THEN nb.at ELSE now() END, $5, $6::jsonb, $7, 1, now(), $8, $9::jsonb, $10::jsonb,
              $11, $12, $13, $14::jsonb, CASE WHEN nb.at > now() THEN nb.at END, $16, $21, $22
       FROM definitions d, (SELECT $15::timestamptz AS at) nb WHERE d.id = $3
       ON CONFLICT (tenant_id, request_id) WHERE request_id IS NOT NULL DO NOTHING
       RETURNING id`,
      values: [
        runId, p.tenantId, p.definitionId, shard, p.requestId, sealJsonText(seed.inputJson, runDocAt(runId, 'input')), p.conversationId, p.traceParent ?? null,
        JSON.stringify(p.metadata ?? {}), budgetJson(effectiveBudget(planGraph.budget, p.budget)),
        p.priority ?? 3, keyed?.value ?? null, keyed?.limit ?? null, JSON.stringify(pinned.pins),
        p.notBefore == null ? null : new Date(p.notBefore).toISOString(), p.scheduleId ?? null,
        pin?.version ?? null, pin?.graphText ?? null, pin?.planGraphText ?? null, pin?.graphHash ?? null,
        p.createdBy ?? null, p.versionAlias ?? null,
      ],
    });
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
    // The node rows, the run.created event and the tenant's Pending count in one round trip.
    // The count runs after the run's insert above, so a replay is never refused;
    // it is bounded by the limit (index runs_tenant_pending_priority_idx; a limit of 0 counts
    // nothing). Creations committing at the same moment may each see the other missing: the
    // bound can be passed by at most the creations in flight. Over the limit, the whole
    // transaction rolls back, these rows with it.
    const limit = p.maxPendingRuns !== undefined && p.maxPendingRuns > 0 ? p.maxPendingRuns : 0;
    const rows = await tx.query<{ n: number }>({
      name: 'flowline_create_rows',
      text: `WITH nodes AS (
               INSERT INTO node_runs (run_id, node_key, kind, status, attempt, attempt_limit, publishes)
               SELECT $1, k, kd, 'Pending', 0, l, pub FROM unnest($2::text[], $3::text[], $4::int[], $5::boolean[]) AS t(k, kd, l, pub)),
             created AS (
               INSERT INTO events (run_id, seq, kind, node_key, at, detail) VALUES ($1, 1, 'run.created', NULL, now(), $6::jsonb))
             SELECT count(*)::int AS n FROM (SELECT 1 FROM runs WHERE tenant_id = $7 AND status = 'Pending' AND parent_run_id IS NULL LIMIT $8) t`,
      values: [
        runId,
        seed.nodes.map((n) => n.key),
        seed.nodes.map((n) => n.kind),
        seed.nodes.map((n) => n.attemptLimit),
        seed.nodes.map((n) => publishing.has(n.key)),
        JSON.stringify({
          definitionId: p.definitionId,
          requestId: p.requestId,
          definitionVersion: version,
          ...(p.versionAlias == null ? {} : { alias: p.versionAlias }),
          ...concurrencyDetail(seed.concurrency),
          ...(p.notBefore == null ? {} : { notBefore: new Date(p.notBefore).toISOString() }),
          ...(p.scheduleId == null ? {} : { scheduleId: p.scheduleId }),
        }),
        p.tenantId,
        limit === 0 ? 0 : limit + 1,
      ],
    });
    const n = rows.rows[0]?.n ?? 0;
    if (limit > 0 && n > limit) return rollback<CreateRunResult>({ kind: 'backlogFull', pending: n - 1 });
    if (p.conversationId !== null && !(await bindConversation(tx, p.tenantId, p.conversationId, runId, pre.bound))) {
      // READ COMMITTED: this later statement sees the binding that won
      return rollback<CreateRunResult>({ kind: 'runBusy', runId: (await boundRunOf(tx, p.tenantId, p.conversationId)) ?? null });
    }
    if (p.beforeCommit) await p.beforeCommit(tx, runId);
    return { kind: 'created', runId, shard };
  });
}
