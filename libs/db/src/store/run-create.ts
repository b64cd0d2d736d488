/**
 * SQL of run creation as the API makes it: idempotent creation (run row + node rows +
 * `run.created`, and the conversation binding when the run names one, in one transaction),
 * and the shard a run id lands on.
 */
import type { Pool } from 'pg';
import { randomUUID } from 'node:crypto';
import { shardOfRun, type ConcurrencyKeyOf, type RunBudget } from '@flowline/graph';
import { rollback, withTransaction, type Queryable, type Tx } from './transaction';
import type { DefinitionRow } from './definitions';
import { ALIASES_OF_DEFINITION_SQL, startVersionFactsOf, type StartVersionFacts } from './definition-aliases';
import { pinSavedAgents, type AgentPinRequest } from './saved-agents';
import {
  agentPinRequests, createInOneStatement, definitionForRun, DEFINITION_FOR_RUN_COLUMNS, runCreationStatement, type DefinitionRowForRun,
} from './run-create-statement';

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

/**
 * The locked definition as run creation sees it: its parsed `Graph` model instead of the
 * document (the run's copy of the document is made by the insert, in the database, so the API
 * neither reads nor parses it).
 */
export type DefinitionForRun = Omit<DefinitionRow, 'graph'> & { planGraph: unknown };

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
   * The first precheck, when the caller read it already with the start's other facts
   * ({@link readStartFacts}): one round trip fewer. Later rounds (after waiting on a creation of
   * the same key) read again. @default read here
   */
  precheck?: CreationPrecheck;
  /**
   * The definition row as the caller read it with the precheck ({@link readStartFacts}): the
   * creation then tries one autocommitted statement guarded on that row's version first
   * (run-create-statement.ts `createInOneStatement`). @default none: a transaction locks and reads it
   */
  definition?: DefinitionRowForRun | null;
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
export interface CreationPrecheck {
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
 * every "absent" or "not busy" answer is re-decided inside the creating transaction. A start's
 * facts ({@link readStartFacts}) are shared the same way: the definition row they carry is
 * checked again by the creation's guard on its version.
 */
const prechecksInFlight = new WeakMap<Queryable, Map<string, Promise<unknown>>>();

/** `read()`'s promise, shared by every caller asking for `key` on `db` while it is in flight. */
function sharedRead<T>(db: Queryable, key: string, read: () => Promise<T>): Promise<T> {
  let inFlight = prechecksInFlight.get(db);
  if (!inFlight) prechecksInFlight.set(db, (inFlight = new Map()));
  const shared = inFlight.get(key);
  if (shared) return shared as Promise<T>;
  const map = inFlight;
  const pending = read().finally(() => map.delete(key));
  map.set(key, pending);
  return pending;
}

function precheckCreation(db: Queryable, p: CreateRunParams): Promise<CreationPrecheck> {
  // no request id to replay and no conversation to bind: nothing to read (one round trip fewer)
  if (p.requestId === null && p.conversationId === null) return Promise.resolve({ existing: null, bound: undefined, busy: false });
  return sharedRead(db, JSON.stringify(['precheck', p.tenantId, p.requestId, p.conversationId]), () => readPrecheck(db, p));
}

async function readPrecheck(db: Queryable, p: CreateRunParams): Promise<CreationPrecheck> {
  // named: parsed and planned once per connection (it answers every replay of a burst)
  const res = await db.query({
    name: 'flowline_create_precheck',
    text: PRECHECK_SQL,
    values: [p.tenantId, p.requestId, p.conversationId, FINISHED_RUN_STATUSES],
  });
  return precheckOf(res.rows[0]);
}

/** A precheck from the row of PRECHECK_SQL or START_FACTS_SQL (their common columns). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a raw pg row, mapped field by field
function precheckOf(r: any): CreationPrecheck {
  return {
    existing: r?.run_id ? { id: r.run_id, definitionId: r.definition_id } : null,
    bound: r?.has_conversation ? r.bound_run_id : undefined,
    busy: r?.busy === true,
  };
}

/** What a start reads before it creates: the version facts and the definition row (null: no such definition), and the creation's precheck. */
export interface StartFacts {
  version: StartVersionFacts | null;
  definition: DefinitionRowForRun | null;
  precheck: CreationPrecheck;
}

/*
 * Inputs: $1 tenant, $2 request id, $3 conversation id, $4 finished statuses, $5 definition id.
 * Result: one row — the definition row as run creation reads it and its aliases (nulls when the
 * tenant has no such definition) beside PRECHECK_SQL's columns, from one snapshot; unlocked, so
 * a creation from it is guarded on its version (run-create-statement.ts).
 */
const START_FACTS_SQL = `
SELECT ${DEFINITION_FOR_RUN_COLUMNS}, ${ALIASES_OF_DEFINITION_SQL} AS aliases,
       rq.id AS run_id, rq.definition_id, cv.id IS NOT NULL AS has_conversation, cv.bound_run_id,
       EXISTS (SELECT 1 FROM runs b WHERE b.id = cv.bound_run_id AND b.status <> ALL($4::text[])) AS busy
FROM (SELECT 1) AS one
LEFT JOIN definitions d ON d.id = $5 AND d.tenant_id = $1
LEFT JOIN runs rq ON $2::text IS NOT NULL AND rq.tenant_id = $1 AND rq.request_id = $2
LEFT JOIN conversations cv ON $3::text IS NOT NULL AND cv.tenant_id = $1 AND cv.id = $3`;

/**
 * A REST start's reads in one round trip: the definition's version facts (as
 * `startVersionFacts`), its row and the creation's precheck, handed to {@link createRun} as
 * {@link CreateRunParams.definition} and {@link CreateRunParams.precheck}.
 */
export function readStartFacts(
  db: Queryable,
  tenantId: string,
  definitionId: string,
  requestId: string | null,
  conversationId: string | null,
): Promise<StartFacts> {
  // shared like the precheck: a burst of replays of one key (or of starts naming no key) reads once
  return sharedRead(db, JSON.stringify(['start', tenantId, definitionId, requestId, conversationId]), async (): Promise<StartFacts> => {
    const res = await db.query({
      name: 'flowline_start_facts',
      text: START_FACTS_SQL,
      values: [tenantId, requestId, conversationId, FINISHED_RUN_STATUSES, definitionId],
    });
    const r = res.rows[0];
    return {
      version: r?.version == null ? null : startVersionFactsOf(r.version, r.aliases),
      definition: r?.id == null ? null : (r as DefinitionRowForRun),
      precheck: precheckOf(r),
    };
  });
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
  let given = p.precheck;
  for (;;) {
    const first = given !== undefined;
    const pre = given ?? (await precheckCreation(pool, p));
    given = undefined;
    if (pre.existing) return replayOf(pre.existing, p.definitionId);
    if (p.conversationId !== null && pre.busy) return { kind: 'runBusy', runId: pre.bound ?? null };
    const running = keys.map((k) => inFlight.get(k)).find((c) => c !== undefined);
    if (running) {
      await running.catch(() => undefined);
      continue;
    }
    // the definition read with the first precheck is current only for that round
    const row = first ? p.definition : undefined;
    const creation = (async () =>
      (row ? await createInOneStatement(pool, p, row) : null) ?? (await createInTransaction(pool, p, pre)))();
    for (const k of keys) inFlight.set(k, creation);
    try {
      return await creation;
    } finally {
      for (const k of keys) if (inFlight.get(k) === creation) inFlight.delete(k);
    }
  }
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
function createInTransaction(pool: Pool, p: CreateRunParams, pre: CreationPrecheck): Promise<CreateRunResult> {
  return withTransaction(pool, async (tx) => {
    const def = await tx.query<DefinitionRowForRun>({
      name: 'flowline_create_definition',
      text: `SELECT ${DEFINITION_FOR_RUN_COLUMNS} FROM definitions d WHERE d.id = $1 AND d.tenant_id = $2 FOR SHARE`,
      values: [p.definitionId, p.tenantId],
    });
    const row = def.rows[0];
    if (!row) return rollback<CreateRunResult>({ kind: 'definitionNotFound' });
    // a pinned version runs its own graphs (sealed to it), read from the caller, not the definition row
    const { def: definition, planGraph, version } = definitionForRun(row, p.pinned ?? null);
    const seed = p.prepare(definition);
    // the saved agents' versions are pinned now: an agent updated after this start reaches later runs only
    const pinned = await pinSavedAgents(tx, p.tenantId, agentPinRequests(planGraph));
    if (pinned.missing.length > 0) throw new SavedAgentsMissingError(pinned.missing);
    const runId = randomUUID();
    const shard = shardOfRun(runId, p.shardCount);
    const limit = p.maxPendingRuns !== undefined && p.maxPendingRuns > 0 ? p.maxPendingRuns : 0;
    // the audit row is withTransaction's to write, before its COMMIT
    const created = await runCreationStatement(tx, p, {
      runId, shard, seed, planGraph, version, pinsJson: JSON.stringify(pinned.pins), limit, checkedVersion: null, audit: null,
    });
    if (!created.inserted) {
      // READ COMMITTED: this later statement sees the twin that won the insert
      const existing = p.requestId === null ? null : await findRunByRequestId(tx, p.tenantId, p.requestId);
      if (!existing) throw new Error('run insert conflicted but no run holds the request id');
      return rollback(replayOf(existing, p.definitionId));
    }
    if (limit > 0 && created.n > limit) return rollback<CreateRunResult>({ kind: 'backlogFull', pending: created.n - 1 });
    if (p.conversationId !== null && !(await bindConversation(tx, p.tenantId, p.conversationId, runId, pre.bound))) {
      // READ COMMITTED: this later statement sees the binding that won
      return rollback<CreateRunResult>({ kind: 'runBusy', runId: (await boundRunOf(tx, p.tenantId, p.conversationId)) ?? null });
    }
    if (p.beforeCommit) await p.beforeCommit(tx, runId);
    return { kind: 'created', runId, shard };
  });
}
