/**
 * SQL of a fork (`POST /v1/runs/{id}/fork`): a NEW run that pins the source
 * run's graph (or another version of its definition) and starts with the node runs it
 * reuses already settled, copied from the source, written in ONE transaction with the run,
 * its `run.created` (naming `forkedFrom`) and the source's `run.forked`. What is reused is
 * decided by the caller (libs/graph `planFork`) inside the transaction, on the source as
 * locked here. The new run keeps the source's metadata (a fork is the same work again).
 */
import type { Pool } from 'pg';
import { randomUUID } from 'node:crypto';
import { shardOfRun, type Graph, type NodeKind, type NodeStatus } from '@flowline/graph';
import { rollback, withTransaction, type Rollback, type Tx } from './transaction';
import { definitionGraphAt, exactJson, sealPlanGraph } from './definitions';
import { openJsonText, sealJsonText } from '../crypto';
import { nodeDocAt, runDocAt } from './run-snapshots';
import type { NodeSeed } from './run-create';
import { insertStateSeed, loadStateLog } from './run-state';

/** The source run as the fork decision sees it. */
export interface ForkSourceView {
  runId: string;
  definitionId: string;
  definitionVersion: number;
  status: string;
  parentRunId: string | null;
  planGraph: Graph;
  /** the run input (lossless) */
  input: unknown;
  nodes: Array<{ nodeKey: string; kind: NodeKind; status: NodeStatus; held: boolean; loopIteration: number | null }>;
}

/** The definition version the new run pins. */
export interface ForkTargetView {
  version: number;
  /** the graph document as saved */
  graph: unknown;
  /** its parsed model when stored with it (the source's pin, or the definition's current version); null: the caller parses `graph` */
  planGraph: Graph | null;
}

/** What the caller decided, computed from the two views. */
export interface ForkSeed {
  /** JSON text of the new run's input */
  inputJson: string;
  /** one row per target graph node */
  nodes: NodeSeed[];
  /** node keys whose source rows are copied (settled, never run again) */
  reused: string[];
  /** JSON text of the forked node's input override (replaces the `input` member of its input document), or null */
  inputOverrideJson: string | null;
  /** JSON text of the target's parsed model when `ForkTargetView.planGraph` was null */
  planGraphJson: string | null;
  /** the forked node is a Loop resuming at its failed iteration: its row gets the source's loop state marked `resume` */
  resumeLoop: boolean;
}

export interface ForkRunParams {
  tenantId: string;
  sourceRunId: string;
  fromNodeKey: string;
  /** null: the source run's pinned version */
  definitionVersion: number | null;
  requestId: string | null;
  shardCount: number;
  /** a delayed start (epoch ms): later than the database's now, the fork is created Scheduled (see createRun) @default null */
  notBefore?: number | null;
  /** Called inside the transaction with the source run row locked; returns the seed or throws (rolls back). */
  prepare: (source: ForkSourceView, target: ForkTargetView) => ForkSeed;
}

export type ForkRunResult =
  | { kind: 'created'; runId: string; shard: number; reused: string[]; definitionVersion: number }
  | { kind: 'replayed'; runId: string }
  | { kind: 'requestIdReused'; runId: string }
  | { kind: 'runNotFound' }
  | { kind: 'versionNotFound' };

const TERMINAL = ['Completed', 'Failed', 'Cancelled'];

/* Inputs: $1 tenant, $2 request id. Result: the run holding it and what it was forked from. */
async function heldRequest(db: Tx | Pool, tenantId: string, requestId: string) {
  const res = await db.query<{ id: string; forked_from_run_id: string | null; forked_from_node_key: string | null }>(
    `SELECT id, forked_from_run_id, forked_from_node_key FROM runs WHERE tenant_id = $1 AND request_id = $2`,
    [tenantId, requestId],
  );
  return res.rows[0] ?? null;
}

/** A request id already used: the same fork again replays, anything else is RequestIdReused. */
function replayOf(held: { id: string; forked_from_run_id: string | null; forked_from_node_key: string | null }, p: ForkRunParams): ForkRunResult {
  return held.forked_from_run_id === p.sourceRunId && held.forked_from_node_key === p.fromNodeKey
    ? { kind: 'replayed', runId: held.id }
    : { kind: 'requestIdReused', runId: held.id };
}

/**
 * Forks a run. Idempotent on `requestId` like run creation (unique (tenant, request_id)):
 * the same key for the same source run and node answers the run it created, forever; the
 * key used by any other run answers `requestIdReused`.
 */
export async function forkRun(pool: Pool, p: ForkRunParams): Promise<ForkRunResult> {
  if (p.requestId !== null) {
    const held = await heldRequest(pool, p.tenantId, p.requestId);
    if (held) return replayOf(held, p);
  }
  return withTransaction(pool, (tx) => forkInTransaction(tx, p));
}

interface SourceRow {
  id: string;
  definition_id: string;
  definition_version: number;
  status: string;
  parent_run_id: string | null;
  graph: string;
  plan_graph: string;
  graph_hash: string;
  input: string;
  /** the effective budget the fork keeps (the target graph's applies too) */
  budget: unknown;
}

interface SourceNodeRow {
  node_key: string;
  kind: NodeKind;
  status: NodeStatus;
  held: boolean;
  attempt: number;
  failure_class: string;
  /** kept on a reused row: a node an operator declared not taken still lets its dependents proceed */
  cause: string;
  reason: string | null;
  input: string | null;
  output: string | null;
  decision: string | null;
  loop_state: string | null;
  queued_at: Date | null;
  started_at: Date | null;
  finished_at: Date | null;
}

async function forkInTransaction(tx: Tx, p: ForkRunParams): Promise<ForkRunResult | Rollback<ForkRunResult>> {
  // Locks the source row first: a dispatcher commit of the source waits for this transaction,
  // so the node rows read next are one consistent state, and run.forked's seq is ours.
  const src = await tx.query<SourceRow>(
    `SELECT id, definition_id, definition_version, status, parent_run_id, graph::text AS graph, plan_graph::text AS plan_graph, graph_hash,
            input::text AS input, budget
     FROM runs WHERE id = $1 AND tenant_id = $2 FOR NO KEY UPDATE`,
    [p.sourceRunId, p.tenantId],
  );
  const s = src.rows[0];
  if (!s) return rollback<ForkRunResult>({ kind: 'runNotFound' });
  const nodeRes = await tx.query<SourceNodeRow>(
    `SELECT node_key, kind, status, held, attempt, failure_class, cause::text AS cause, reason, input::text AS input, output::text AS output,
            decision::text AS decision, loop_state::text AS loop_state, queued_at, started_at, finished_at
     FROM node_runs WHERE run_id = $1`,
    [s.id],
  );
  const sourceNodes = new Map(nodeRes.rows.map((r) => [r.node_key, r]));
  const source: ForkSourceView = {
    runId: s.id,
    definitionId: s.definition_id,
    definitionVersion: s.definition_version,
    status: s.status,
    parentRunId: s.parent_run_id,
    planGraph: exactJson(openJsonText(s.plan_graph, definitionGraphAt(s.definition_id, s.definition_version, 'plan_graph'))) as Graph,
    input: exactJson(openJsonText(s.input, runDocAt(s.id, 'input'))),
    nodes: nodeRes.rows.map((r) => ({ nodeKey: r.node_key, kind: r.kind, status: r.status, held: r.held, loopIteration: loopIterationOf(s.id, r) })),
  };
  const version = p.definitionVersion ?? s.definition_version;
  const target = await loadTarget(tx, p.tenantId, s, version);
  if (!target) return rollback<ForkRunResult>({ kind: 'versionNotFound' });
  const seed = p.prepare(source, target.view);

  const runId = randomUUID();
  const shard = shardOfRun(runId, p.shardCount);
  const planGraphText = target.planGraphText ?? sealPlanGraph(seed.planGraphJson ?? 'null', s.definition_id, version);
  const detail = {
    definitionId: s.definition_id,
    requestId: p.requestId,
    definitionVersion: version,
    forkedFrom: { runId: s.id, nodeKey: p.fromNodeKey },
    reused: seed.reused,
    ...(p.notBefore == null ? {} : { notBefore: new Date(p.notBefore).toISOString() }),
  };
  // A twin's uncommitted insert of the same request id makes this statement wait for its outcome.
  const inserted = await tx.query(
    `INSERT INTO runs (id, tenant_id, definition_id, definition_version, graph, plan_graph, graph_hash, status, shard,
                       wake_at, request_id, input, last_seq, created_at, forked_from_run_id, forked_from_node_key, metadata, budget, priority, agent_pins,
                       not_before)
     SELECT $1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, CASE WHEN nb.at > now() THEN 'Scheduled' ELSE 'Pending' END, $8,
            CASE WHEN nb.at > now() THEN nb.at ELSE now() END, $9, $10::jsonb, 1, now(), $11, $12,
            src.metadata, $13::jsonb, src.priority, src.agent_pins, CASE WHEN nb.at > now() THEN nb.at END
     FROM (SELECT metadata, priority, agent_pins FROM runs WHERE id = $11) src, (SELECT $14::timestamptz AS at) nb
     ON CONFLICT (tenant_id, request_id) WHERE request_id IS NOT NULL DO NOTHING
     RETURNING id`,
    [runId, p.tenantId, s.definition_id, version, target.graphText, planGraphText, target.graphHash, shard, p.requestId,
      sealJsonText(seed.inputJson, runDocAt(runId, 'input')), s.id, p.fromNodeKey, s.budget === null ? null : JSON.stringify(s.budget),
      p.notBefore == null ? null : new Date(p.notBefore).toISOString()],
  );
  if (!inserted.rowCount) {
    // READ COMMITTED: this later statement sees the twin that won the insert
    const held = p.requestId === null ? null : await heldRequest(tx, p.tenantId, p.requestId);
    if (!held) throw new Error('fork insert conflicted but no run holds the request id');
    return rollback(replayOf(held, p));
  }
  await insertNodeRows(tx, runId, s.id, p.fromNodeKey, seed, sourceNodes);
  // run state: the fork starts from the source's state as of the forked node's commit, keeping
  // only what the nodes it reuses wrote (in their commit order), so a node that runs again never
  // writes twice; the new run's seed row (seq 0)
  const reused = new Set(seed.reused);
  const kept = (await loadStateLog(tx, s.id)).filter((w) => w.nodeKey === null || reused.has(w.nodeKey));
  await insertStateSeed(tx, runId, p.tenantId, kept.map((w) => ({ nodeKey: w.nodeKey, writes: w.writes })));
  await tx.query(
    `INSERT INTO events (run_id, seq, kind, node_key, at, detail) VALUES ($1, 1, 'run.created', NULL, now(), $2::jsonb)`,
    [runId, JSON.stringify(detail)],
  );
  // run.forked on the source: version + 1 so a dispatcher holding the old version re-reads
  // before it numbers its next events; a live source is woken for that re-read
  await tx.query(
    `WITH r AS (
       UPDATE runs SET version = version + 1, last_seq = last_seq + 1,
                       wake_at = CASE WHEN status = ANY($3::text[]) THEN wake_at ELSE now() END
       WHERE id = $1 RETURNING id, last_seq)
     INSERT INTO events (run_id, seq, kind, node_key, at, detail)
     SELECT id, last_seq, 'run.forked', $2, now(), $4::jsonb FROM r`,
    [s.id, p.fromNodeKey, TERMINAL, JSON.stringify({ newRunId: runId, fromNodeKey: p.fromNodeKey, definitionVersion: version })],
  );
  return { kind: 'created', runId, shard, reused: seed.reused, definitionVersion: version };
}

/** The iteration a Loop row's (sealed) loop state records, else null. */
function loopIterationOf(runId: string, r: SourceNodeRow): number | null {
  const text = r.loop_state === null ? null : openJsonText(r.loop_state, nodeDocAt(runId, r.node_key, 'loop_state'));
  const iteration = text === null ? null : (JSON.parse(text) as { iteration?: unknown } | null)?.iteration;
  return typeof iteration === 'number' ? iteration : null;
}

/** A definition version as a run may pin it: the view a decision reads and the stored texts to copy. */
export interface LoadedTarget {
  view: ForkTargetView;
  /** stored texts to pin, copied as stored (sealed to `<definition>@<version>` either way) */
  graphText: string;
  planGraphText: string | null;
  graphHash: string;
}

/**
 * The version to pin: the source's own pinned copy for its version; for another, the
 * definition row when it is at that version (graph and plan_graph), else the saved version
 * (graph only: the caller parses it). Null when the definition or version is gone (or retired).
 */
export async function loadTarget(
  tx: Tx,
  tenantId: string,
  s: Pick<SourceRow, 'definition_id' | 'definition_version' | 'graph' | 'plan_graph' | 'graph_hash'>,
  version: number,
): Promise<LoadedTarget | null> {
  const graphAt = definitionGraphAt(s.definition_id, version);
  if (version === s.definition_version) {
    return {
      view: { version, graph: exactJson(openJsonText(s.graph, graphAt)), planGraph: exactJson(openJsonText(s.plan_graph, definitionGraphAt(s.definition_id, version, 'plan_graph'))) as Graph },
      graphText: s.graph,
      planGraphText: s.plan_graph,
      graphHash: s.graph_hash,
    };
  }
  const def = await tx.query<{ version: number; graph: string; plan_graph: string; graph_hash: string }>(
    `SELECT version, graph::text AS graph, plan_graph::text AS plan_graph, graph_hash FROM definitions
     WHERE id = $1 AND tenant_id = $2 FOR SHARE`,
    [s.definition_id, tenantId],
  );
  const d = def.rows[0];
  if (!d) return null;
  if (d.version === version) {
    return {
      view: { version, graph: exactJson(openJsonText(d.graph, graphAt)), planGraph: exactJson(openJsonText(d.plan_graph, definitionGraphAt(s.definition_id, version, 'plan_graph'))) as Graph },
      graphText: d.graph,
      planGraphText: d.plan_graph,
      graphHash: d.graph_hash,
    };
  }
  const saved = await tx.query<{ graph: string; graph_hash: string }>(
    `SELECT graph::text AS graph, graph_hash FROM definition_versions WHERE definition_id = $1 AND tenant_id = $2 AND version = $3 AND retired_at IS NULL`,
    [s.definition_id, tenantId, version],
  );
  const v = saved.rows[0];
  if (!v) return null;
  return { view: { version, graph: exactJson(openJsonText(v.graph, graphAt)), planGraph: null }, graphText: v.graph, planGraphText: null, graphHash: v.graph_hash };
}

/**
 * The new run's node rows in one statement: a reused row is the source row copied (status,
 * attempt, documents resealed to the new row, times) with `reused_from_run_id`; every other
 * row is Pending at attempt 0, the forked node carrying its input override (or, resuming a
 * Loop, the source's loop state marked `resume`).
 */
async function insertNodeRows(
  tx: Tx,
  runId: string,
  sourceRunId: string,
  fromNodeKey: string,
  seed: ForkSeed,
  sourceNodes: ReadonlyMap<string, SourceNodeRow>,
): Promise<void> {
  const reused = new Set(seed.reused);
  // the source's loop state (a JSON object), marked `resume`, sealed to the new row
  const resumedLoop = (key: string): string | null => {
    const state = seed.resumeLoop && key === fromNodeKey ? sourceNodes.get(key)?.loop_state : null;
    const text = state ? openJsonText(state, nodeDocAt(sourceRunId, key, 'loop_state')) : null;
    return text === null ? null : sealJsonText(`{"resume":true,${text.trim().slice(1)}`, nodeDocAt(runId, key, 'loop_state'));
  };
  const rows = seed.nodes.map((n) => {
    const from = reused.has(n.key) ? sourceNodes.get(n.key) : undefined;
    const move = (column: 'input' | 'output' | 'decision') => {
      const text = from ? openJsonText(from[column], nodeDocAt(sourceRunId, n.key, column)) : null;
      return text === null ? null : sealJsonText(text, nodeDocAt(runId, n.key, column));
    };
    const override =
      n.key === fromNodeKey && seed.inputOverrideJson !== null
        ? sealJsonText(`{"input":${seed.inputOverrideJson}}`, nodeDocAt(runId, n.key, 'input_override'))
        : null;
    return { n, from, input: move('input'), output: move('output'), decision: move('decision'), override, loop: resumedLoop(n.key) };
  });
  await tx.query(
    `INSERT INTO node_runs (run_id, node_key, kind, status, attempt, attempt_limit, failure_class, reason, input, output, decision,
                            input_override, queued_at, started_at, finished_at, reused_from_run_id, loop_state, publishes, cause)
     SELECT $1, k, kd, st, att, lim, fc, rs, inp::jsonb, outp::jsonb, dec::jsonb, ovr::jsonb, qa, sa, fa, rf, ls::jsonb, false, cs::node_cause
     FROM unnest($2::text[], $3::text[], $4::text[], $5::int[], $6::int[], $7::text[], $8::text[], $9::text[], $10::text[],
                 $11::text[], $12::text[], $13::timestamptz[], $14::timestamptz[], $15::timestamptz[], $16::uuid[], $17::text[],
                 $18::text[])
       AS t(k, kd, st, att, lim, fc, rs, inp, outp, dec, ovr, qa, sa, fa, rf, ls, cs)`,
    [
      runId,
      rows.map((r) => r.n.key),
      rows.map((r) => r.n.kind),
      rows.map((r) => r.from?.status ?? 'Pending'),
      rows.map((r) => r.from?.attempt ?? 0),
      rows.map((r) => r.n.attemptLimit),
      rows.map((r) => r.from?.failure_class ?? 'None'),
      rows.map((r) => r.from?.reason ?? null),
      rows.map((r) => r.input),
      rows.map((r) => r.output),
      rows.map((r) => r.decision),
      rows.map((r) => r.override),
      rows.map((r) => r.from?.queued_at ?? null),
      rows.map((r) => r.from?.started_at ?? null),
      rows.map((r) => r.from?.finished_at ?? null),
      rows.map((r) => (r.from ? sourceRunId : null)),
      rows.map((r) => r.loop),
      rows.map((r) => (r.from?.status === 'Skipped' && r.from.cause === 'NotTaken' ? 'NotTaken' : 'None')),
    ],
  );
}
