/**
 * The statement that creates a run (run row, node rows, `run.created`, the tenant's Pending
 * count and, when the request has one to write, its audit row), shared by the transactional
 * creation (run-create.ts) and the one-statement creation of a start whose definition was read
 * beforehand ({@link createInOneStatement}).
 */
import type { Pool } from 'pg';
import { randomUUID } from 'node:crypto';
import { agentReferenceOf, effectiveBudget, publishesToChat, shardOfRun, type ConcurrencyKeyOf, type Graph, type RunBudget } from '@flowline/graph';
import { auditInsertFrom, auditStatementValues, claimAuditEntry, settleAuditEntry, type AuditEntry } from './audit-context';
import { definitionGraphAt, exactJson, definitionListRow, type DefinitionColumns } from './definitions';
import { openJsonText, sealJsonText } from '../crypto';
import { runDocAt } from './run-snapshots';
import type { AgentPinRequest } from './saved-agents';
import type { CreateRunParams, CreateRunResult, DefinitionForRun, PinnedVersion, RunSeed } from './run-create';

/** The saved agents a graph's Agent nodes name, for `pinSavedAgents`. */
export function agentPinRequests(graph: Graph): AgentPinRequest[] {
  const refs: AgentPinRequest[] = [];
  // a plan graph is read back from storage: one without a node list names no agent
  for (const n of Array.isArray(graph.nodes) ? graph.nodes : []) {
    const ref = agentReferenceOf(n.kind, n.config);
    if (ref !== null) refs.push({ nodeKey: n.key, ...ref });
  }
  return refs;
}

/** What `run.created` says of the run's concurrency key: its value, or why it has none (nothing without a block). */
function concurrencyDetail(c: ConcurrencyKeyOf | undefined): Record<string, unknown> {
  if (!c || c.kind === 'none') return {};
  if (c.kind === 'keyed') return { concurrencyKey: { key: c.path, value: c.value, limit: c.limit } };
  return { concurrencyKey: { key: c.path, value: null, reason: c.reason } };
}

const budgetJson = (b: RunBudget | null) => (b ? JSON.stringify(b) : null);

/** The columns of a definition row run creation reads (`d` the definitions row). */
export const DEFINITION_FOR_RUN_COLUMNS = `d.id, d.tenant_id, d.name, d.description, d.kind, d.version, d.plan_graph::text AS plan_graph,
  d.graph_hash, d.node_count, d.enabled, d.created_at, d.updated_at`;

/** A row of {@link DEFINITION_FOR_RUN_COLUMNS}. */
export interface DefinitionRowForRun extends DefinitionColumns {
  /** the plan graph's JSON text as stored (sealed when encryption is on) */
  plan_graph: string;
}

/** The definition as `prepare` sees it (a pinned version's plan graph and hash in place of the row's), with the version the run pins. */
export function definitionForRun(d: DefinitionRowForRun, pin: PinnedVersion | null): { def: DefinitionForRun; planGraph: Graph; version: number } {
  const version: number = pin?.version ?? d.version;
  const planGraph = exactJson(openJsonText(pin?.planGraphText ?? d.plan_graph, definitionGraphAt(d.id, version, 'plan_graph'))) as Graph;
  const def: DefinitionForRun = { ...definitionListRow(d), version, planGraph, graphHash: pin?.graphHash ?? d.graph_hash };
  return { def, planGraph, version };
}

/*
 * The run, its node rows, `run.created`, the tenant's Pending count and the request's audit row
 * in ONE statement.
 * Inputs: $1 run id, $2 tenant, $3 definition, $4–$22 the run's columns (a pinned version's
 * graphs in $17–$20, else the definition row's), $23–$26 the node rows (key, kind, attempt
 * limit, publishes), $27 the event's detail, $28 the count's cap (MAX_PENDING_RUNS + 1; 0: not
 * counted); $29 the definition version the caller checked with its `prepare`, null when the
 * caller's transaction holds the row locked since it read it; $30–$40 the audit row (null
 * tenant: none).
 * Guards: the definition row is locked FOR SHARE (a concurrent change or delete waits for this
 * commit, and one that committed first is seen: READ COMMITTED re-checks the row's latest
 * version); with $29, the row is still at that version and enabled, and the new run keeps the
 * tenant within the Pending bound (else nothing is inserted and the caller decides again in a
 * transaction). ON CONFLICT (tenant_id, request_id) DO NOTHING: a twin's uncommitted insert of
 * the same request id makes the statement wait for its outcome, and a conflict inserts nothing
 * at all (the node rows, the event and the audit row are made from the run's RETURNING).
 * Result: `inserted` 1 or 0; `n` the tenant's Pending top-level runs counting the new one (the
 * count's snapshot is the statement's, which does not see its own insert, so a new Pending run
 * adds itself), capped at $28; `audit_id` the audit row written, if any. Creations committing at
 * the same moment may each see the other missing: the bound can be passed by at most the
 * creations in flight.
 */
const CREATE_RUN_SQL = `
WITH nb AS (SELECT $15::timestamptz AS at, ($15::timestamptz > now()) AS later),
pending AS (
  SELECT count(*)::int AS others FROM (SELECT 1 FROM runs WHERE tenant_id = $2 AND status = 'Pending' AND parent_run_id IS NULL LIMIT $28) t),
run AS (
  INSERT INTO runs (id, tenant_id, definition_id, definition_version, graph, plan_graph, graph_hash, status, shard,
                    wake_at, request_id, input, conversation_id, last_seq, created_at, trace_parent, metadata, budget,
                    priority, concurrency_key, concurrency_limit, agent_pins, not_before, schedule_id, created_by, version_alias)
  SELECT $1, $2, d.id, coalesce($17::int, d.version), coalesce($18::jsonb, d.graph), coalesce($19::jsonb, d.plan_graph),
         coalesce($20::text, d.graph_hash), CASE WHEN nb.later THEN 'Scheduled' ELSE 'Pending' END, $4,
         CASE WHEN nb.later THEN nb.at ELSE now() END, $5, $6::jsonb, $7, 1, now(), $8, $9::jsonb, $10::jsonb,
         $11, $12, $13, $14::jsonb, CASE WHEN nb.later THEN nb.at END, $16, $21, $22
  FROM definitions d, nb, pending
  WHERE d.id = $3
    AND ($29::int IS NULL OR (d.version = $29 AND d.enabled
         AND ($28 = 0 OR pending.others + CASE WHEN nb.later THEN 0 ELSE 1 END < $28)))
  FOR SHARE OF d
  ON CONFLICT (tenant_id, request_id) WHERE request_id IS NOT NULL DO NOTHING
  RETURNING id, status),
nodes AS (
  INSERT INTO node_runs (run_id, node_key, kind, status, attempt, attempt_limit, publishes)
  SELECT run.id, k, kd, 'Pending', 0, l, pub FROM run, unnest($23::text[], $24::text[], $25::int[], $26::boolean[]) AS t(k, kd, l, pub)),
created AS (
  INSERT INTO events (run_id, seq, kind, node_key, at, detail) SELECT run.id, 1, 'run.created', NULL, now(), $27::jsonb FROM run),
audit AS (${auditInsertFrom('run', 30)})
SELECT (SELECT count(*) FROM run)::int AS inserted,
       least($28::int, (SELECT others FROM pending) + (SELECT count(*) FROM run WHERE status = 'Pending'))::int AS n,
       (SELECT id FROM audit)::text AS audit_id`;

/** What one creation statement writes beyond the caller's parameters. */
export interface CreationRow {
  runId: string;
  shard: number;
  seed: RunSeed;
  planGraph: Graph;
  version: number;
  /** the saved agents' pins (JSON) */
  pinsJson: string;
  /** MAX_PENDING_RUNS of the tenant, 0: unbounded */
  limit: number;
  /** the definition version `prepare` checked, null: the caller's transaction holds the row locked */
  checkedVersion: number | null;
  /** the request's audit row to write with the run, null: none */
  audit: AuditEntry | null;
}

/** Runs the creation statement on `db`; see {@link CREATE_RUN_SQL}. */
export async function runCreationStatement(
  db: Pick<Pool, 'query'>,
  p: CreateRunParams,
  c: CreationRow,
): Promise<{ inserted: boolean; n: number; auditId: number | null }> {
  const { runId, seed, planGraph } = c;
  const pin = p.pinned ?? null;
  const keyed = seed.concurrency?.kind === 'keyed' ? seed.concurrency : null;
  // a run bound to a conversation marks the nodes that publish their answer to it
  const publishing = new Set(
    p.conversationId === null ? [] : planGraph.nodes.filter((n) => publishesToChat(planGraph, n)).map((n) => n.key),
  );
  const res = await db.query<{ inserted: number; n: number; audit_id: string | null }>({
    name: 'flowline_create_run',
    text: CREATE_RUN_SQL,
    values: [
      runId, p.tenantId, p.definitionId, c.shard, p.requestId, sealJsonText(seed.inputJson, runDocAt(runId, 'input')), p.conversationId, p.traceParent ?? null,
      JSON.stringify(p.metadata ?? {}), budgetJson(effectiveBudget(planGraph.budget, p.budget)),
      p.priority ?? 3, keyed?.value ?? null, keyed?.limit ?? null, c.pinsJson,
      p.notBefore == null ? null : new Date(p.notBefore).toISOString(), p.scheduleId ?? null,
      pin?.version ?? null, pin?.graphText ?? null, pin?.planGraphText ?? null, pin?.graphHash ?? null,
      p.createdBy ?? null, p.versionAlias ?? null,
      seed.nodes.map((n) => n.key),
      seed.nodes.map((n) => n.kind),
      seed.nodes.map((n) => n.attemptLimit),
      seed.nodes.map((n) => publishing.has(n.key)),
      JSON.stringify({
        definitionId: p.definitionId,
        requestId: p.requestId,
        definitionVersion: c.version,
        ...(p.versionAlias == null ? {} : { alias: p.versionAlias }),
        ...concurrencyDetail(seed.concurrency),
        ...(p.notBefore == null ? {} : { notBefore: new Date(p.notBefore).toISOString() }),
        ...(p.scheduleId == null ? {} : { scheduleId: p.scheduleId }),
      }),
      c.limit === 0 ? 0 : c.limit + 1,
      c.checkedVersion,
      ...auditStatementValues(c.audit, runId),
    ],
  });
  const r = res.rows[0];
  return { inserted: (r?.inserted ?? 0) > 0, n: r?.n ?? 0, auditId: r?.audit_id == null ? null : Number(r.audit_id) };
}

/**
 * Creates a run in ONE statement, autocommitted, from the definition row the caller read
 * before (`readStartFacts`): `prepare` checks that row, and the statement inserts only while
 * the row is still at that version and enabled, the tenant within its Pending bound and the
 * request id free — with the request's audit row, so the change and its record commit together.
 * Null when it inserted nothing or cannot go this way (a conversation to bind, a hook before
 * commit, saved agents to pin): the caller then creates in a transaction, which decides a
 * replay, a backlog refusal or a changed definition exactly. `prepare`'s errors propagate.
 */
export async function createInOneStatement(pool: Pool, p: CreateRunParams, row: DefinitionRowForRun): Promise<CreateRunResult | null> {
  if (p.conversationId !== null || p.beforeCommit) return null;
  const { def, planGraph, version } = definitionForRun(row, p.pinned ?? null);
  const seed = p.prepare(def);
  if (agentPinRequests(planGraph).length > 0) return null;
  const runId = randomUUID();
  const shard = shardOfRun(runId, p.shardCount);
  const limit = p.maxPendingRuns !== undefined && p.maxPendingRuns > 0 ? p.maxPendingRuns : 0;
  const audit = claimAuditEntry();
  let out: { inserted: boolean; auditId: number | null } = { inserted: false, auditId: null };
  try {
    out = await runCreationStatement(pool, p, { runId, shard, seed, planGraph, version, pinsJson: '{}', limit, checkedVersion: row.version, audit });
  } finally {
    // a row not written is written by the request's next commit, or by the audit middleware
    settleAuditEntry(audit, out.auditId);
  }
  return out.inserted ? { kind: 'created', runId, shard } : null;
}
