/**
 * SQL of a run's migration to another version of its definition (`POST /v1/runs/{id}/migrate`):
 * the run row is locked, its snapshot read, the caller decides (libs/graph `planMigration`)
 * and, when it executes a compatible plan, the new pinned graph and version, the mapped node
 * rows and `run.migrated {from, to, nodeMap}` are written in ONE transaction. A dry run, or a
 * plan that is not compatible, rolls back: nothing is written.
 *
 * The guard is the one every run write has: the run row is locked first (a dispatcher's commit
 * of the run waits for this transaction) and the run write is a compare-and-set on the version
 * read under that lock, bumping it, so a tick planned on the old graph can never commit over
 * the migration: it re-reads. Node rows are written with their (status, attempt) as read.
 */
import { applyMigration, type Graph, type MigrationPlan, type NodeRunState, type RunSnapshot } from '@flowline/graph';
import { openJson, openJsonText, sealJson, sealJsonText } from '../crypto';
import { agentStepAt } from './agent-steps';
import { loadTarget, type LoadedTarget } from './run-fork';
import { loadSnapshots, nodeDocAt, steerMessageAt } from './run-snapshots';
import { sealPlanGraph } from './definitions';
import { rollback, withTransaction, type Rollback, type Tx } from './transaction';
import type { Pool } from 'pg';

export interface MigrateRunParams {
  tenantId: string;
  runId: string;
  toVersion: number;
  nodeMap: Record<string, string>;
  dryRun: boolean;
  /**
   * Called inside the transaction with the run row locked: decides the migration from the run's
   * snapshot and the target version (parsing its graph when `target.planGraph` is null).
   */
  decide: (snapshot: RunSnapshot, target: LoadedTarget['view']) => { plan: MigrationPlan; planGraph: Graph; planGraphJson: string | null };
}

export type MigrateRunResult =
  | { kind: 'planned'; plan: MigrationPlan; fromVersion: number; executed: false }
  | { kind: 'migrated'; plan: MigrationPlan; fromVersion: number; executed: true; seq: number }
  | { kind: 'runNotFound' }
  | { kind: 'versionNotFound' };

interface RunHead {
  definition_id: string;
  definition_version: number;
  version: number;
  graph: string;
  plan_graph: string;
  graph_hash: string;
}

/** Plans (and, unless a dry run, executes) a migration. */
export async function migrateRun(pool: Pool, p: MigrateRunParams): Promise<MigrateRunResult> {
  return withTransaction(pool, (tx) => migrateInTransaction(tx, p));
}

async function migrateInTransaction(tx: Tx, p: MigrateRunParams): Promise<MigrateRunResult | Rollback<MigrateRunResult>> {
  // the lock first: the snapshot read next is one committed state, and the CAS below is ours
  const head = await tx.query<RunHead>(
    `SELECT definition_id, definition_version, version, graph::text AS graph, plan_graph::text AS plan_graph, graph_hash
     FROM runs WHERE id = $1 AND tenant_id = $2 FOR NO KEY UPDATE`,
    [p.runId, p.tenantId],
  );
  const h = head.rows[0];
  if (!h) return rollback<MigrateRunResult>({ kind: 'runNotFound' });
  // the slot count only informs a Pending run's admission, which a migration does not judge
  const [snap] = await loadSnapshots(tx, [p.runId], { maxConcurrentRuns: 2_147_483_647 });
  if (!snap) return rollback<MigrateRunResult>({ kind: 'runNotFound' });
  const target = await loadTarget(tx, p.tenantId, h, p.toVersion);
  if (!target) return rollback<MigrateRunResult>({ kind: 'versionNotFound' });
  const { plan, planGraph, planGraphJson } = p.decide(snap, target.view);
  // a run already on the version with nothing to move (a retried migration) writes nothing
  const already = p.toVersion === h.definition_version && plan.mapping.every((m) => m.from === m.to && (m.action === 'carry' || m.action === 'keep'));
  if (p.dryRun || plan.verdict !== 'compatible' || already) {
    return rollback<MigrateRunResult>({ kind: 'planned', plan, fromVersion: h.definition_version, executed: false });
  }

  const moved = applyMigration(snap.graph, planGraph, snap.nodes, plan, snap.run);
  await writeRows(tx, p.runId, snap.nodes, moved.rows, plan);
  const planGraphText = target.planGraphText ?? sealPlanGraph(planGraphJson ?? 'null', h.definition_id, p.toVersion);
  // run.migrated, then node.retried {by: 'migration'} per re-queued row (its status moved without running)
  const requeued = plan.mapping.filter((m) => m.action === 'requeue').map((m) => m.to!);
  const events = [
    { kind: 'run.migrated', nodeKey: null, detail: { from: h.definition_version, to: p.toVersion, nodeMap: p.nodeMap } },
    ...requeued.map((k) => ({ kind: 'node.retried', nodeKey: k, detail: { by: 'migration', to: p.toVersion } })),
  ];
  /*
   * Inputs: $1 run, $2 version read under the lock, the new pin ($3 graph, $4 plan graph, $5 hash,
   * $6 version), $7 breakpoints, $8 edge overrides, $9 attempts refunded, $10 events (kind, nodeKey, detail),
   * $11 step allowance.
   * Guard: version = $2. Effect: the new pin, version + 1, the events from last_seq + 1, wake now.
   * Result: the seq of run.migrated.
   */
  const res = await tx.query<{ seq: number }>(
    `WITH ev AS (SELECT e, n FROM jsonb_array_elements($10::jsonb) WITH ORDINALITY AS x(e, n)),
     r AS (
       UPDATE runs SET graph = $3::jsonb, plan_graph = $4::jsonb, graph_hash = $5, definition_version = $6,
                       breakpoints = $7::jsonb, edge_overrides = $8::jsonb, total_attempts = greatest(0, total_attempts - $9),
                       step_allowance = $11::jsonb,
                       version = version + 1, last_seq = last_seq + (SELECT count(*) FROM ev), wake_at = now()
       WHERE id = $1 AND version = $2
       RETURNING id, last_seq - (SELECT count(*) FROM ev) AS base),
     i AS (
       INSERT INTO events (run_id, seq, kind, node_key, at, detail)
       SELECT r.id, r.base + ev.n, ev.e->>'kind', ev.e->>'nodeKey', now(), ev.e->'detail' FROM r, ev)
     SELECT base + 1 AS seq FROM r`,
    [p.runId, h.version, target.graphText, planGraphText, target.graphHash, p.toVersion, JSON.stringify(moved.breakpoints),
      JSON.stringify(moved.edgeOverrides), moved.attemptsRefunded, JSON.stringify(events),
      moved.stepAllowance === null ? null : JSON.stringify(moved.stepAllowance)],
  );
  const seq = res.rows[0]?.seq;
  // the row is locked by this transaction: a lost CAS is a broken invariant, not a race
  if (seq === undefined) throw new Error(`run ${p.runId} changed under its migration lock`);
  return { kind: 'migrated', plan, fromVersion: h.definition_version, executed: true, seq };
}

/** Document columns of a node row sealed to (run, node key): a renamed row is resealed to its new key. */
const SEALED_NODE_COLUMNS = ['input', 'input_override', 'output', 'decision', 'loop_state', 'map_state', 'approvals'] as const;
/** A renamed row's key while both names may be taken (node keys never contain `~`). */
const parked = (key: string) => `~${key}`;

/**
 * Writes the mapped rows: dropped rows deleted, renamed rows moved (documents, steering, agent
 * steps resealed; waitpoints and unapplied intents follow), every kept row set to its migrated
 * status, attempt and budget under its (status, attempt) as read, and added rows inserted.
 */
async function writeRows(tx: Tx, runId: string, before: readonly NodeRunState[], after: readonly NodeRunState[], plan: MigrationPlan): Promise<void> {
  const dropped = plan.mapping.filter((m) => m.action === 'drop' && m.from !== null).map((m) => m.from!);
  if (dropped.length > 0) await tx.query('DELETE FROM node_runs WHERE run_id = $1 AND node_key = ANY($2::text[])', [runId, dropped]);
  const renames = plan.mapping.filter((m) => m.from !== null && m.to !== null && m.from !== m.to && m.action !== 'drop');
  for (const m of renames) await renameRow(tx, runId, m.from!, m.to!);
  // second pass: every old key is free now, so each parked key takes its final name (two nodes swapping keys never collide)
  for (const m of renames) {
    await tx.query('UPDATE node_runs SET node_key = $3 WHERE run_id = $1 AND node_key = $2', [runId, parked(m.to!), m.to]);
    await tx.query('UPDATE agent_steps SET node_key = $3 WHERE run_id = $1 AND node_key = $2', [runId, parked(m.to!), m.to]);
  }
  const old = new Map(before.map((r) => [r.nodeKey, r]));
  const fromOf = new Map(plan.mapping.filter((m) => m.to !== null && m.from !== null).map((m) => [m.to!, m.from!]));
  const kept = after.filter((r) => fromOf.has(r.nodeKey));
  const added = after.filter((r) => !fromOf.has(r.nodeKey));
  /*
   * Inputs: per kept row its key, (status, attempt) as read, and the migrated status, attempt,
   * limit, invocation and re-queue flag. Guard: (status, attempt) as read. A re-queued row loses
   * its invocation and attempt's documents and times, so the next tick queues it afresh.
   */
  const res = await tx.query(
    `UPDATE node_runs n SET status = t.st, attempt = t.att, attempt_limit = t.lim, invocation_id = t.inv,
            input = CASE WHEN t.rq THEN NULL ELSE n.input END,
            not_before = CASE WHEN t.rq THEN NULL ELSE n.not_before END,
            deadline_at = CASE WHEN t.rq THEN NULL ELSE n.deadline_at END,
            queued_at = CASE WHEN t.rq THEN NULL ELSE n.queued_at END,
            started_at = CASE WHEN t.rq THEN NULL ELSE n.started_at END,
            failure_class = CASE WHEN t.rq THEN 'None' ELSE n.failure_class END,
            cause = CASE WHEN t.rq THEN 'None'::node_cause ELSE n.cause END,
            reason = CASE WHEN t.rq THEN NULL ELSE n.reason END
     FROM unnest($2::text[], $3::text[], $4::int[], $5::text[], $6::int[], $7::int[], $8::uuid[], $9::boolean[])
       AS t(k, was, was_att, st, att, lim, inv, rq)
     WHERE n.run_id = $1 AND n.node_key = t.k AND n.status = t.was AND n.attempt = t.was_att`,
    [
      runId,
      kept.map((r) => r.nodeKey),
      kept.map((r) => old.get(fromOf.get(r.nodeKey)!)!.status),
      kept.map((r) => old.get(fromOf.get(r.nodeKey)!)!.attempt),
      kept.map((r) => r.status),
      kept.map((r) => r.attempt),
      kept.map((r) => r.attemptLimit),
      kept.map((r) => r.invocationId),
      kept.map((r) => plan.mapping.some((m) => m.to === r.nodeKey && m.action === 'requeue')),
    ],
  );
  if (res.rowCount !== kept.length) throw new Error(`run ${runId}: ${kept.length - (res.rowCount ?? 0)} node rows changed under the migration lock`);
  if (added.length > 0) {
    await tx.query(
      `INSERT INTO node_runs (run_id, node_key, kind, status, attempt, attempt_limit)
       SELECT $1, k, kd, 'Pending', 0, lim FROM unnest($2::text[], $3::text[], $4::int[]) AS t(k, kd, lim)`,
      [runId, added.map((r) => r.nodeKey), added.map((r) => r.kind), added.map((r) => r.attemptLimit)],
    );
  }
}

/** Moves one row (and its agent steps) to the parked form of its new key, resealing what is sealed to its old key. */
async function renameRow(tx: Tx, runId: string, from: string, to: string): Promise<void> {
  const cols = SEALED_NODE_COLUMNS.map((c) => `${c}::text AS ${c}`).join(', ');
  const res = await tx.query<Record<(typeof SEALED_NODE_COLUMNS)[number], string | null> & { steering: string }>(
    `SELECT ${cols}, steering::text AS steering FROM node_runs WHERE run_id = $1 AND node_key = $2`,
    [runId, from],
  );
  const row = res.rows[0];
  if (!row) throw new Error(`run ${runId}: node row ${from} vanished under the migration lock`);
  const docs = SEALED_NODE_COLUMNS.map((c) => sealJsonText(openJsonText(row[c], nodeDocAt(runId, from, c)), nodeDocAt(runId, to, c)));
  const steering = (JSON.parse(row.steering) as Array<{ operationId: string; message: unknown }>).map((s) => ({
    ...s,
    message: sealJson(openJson(s.message, steerMessageAt(runId, from, s.operationId)), steerMessageAt(runId, to, s.operationId)),
  }));
  await tx.query(
    `UPDATE node_runs SET node_key = $3, ${SEALED_NODE_COLUMNS.map((c, i) => `${c} = $${i + 4}::jsonb`).join(', ')}, steering = $${SEALED_NODE_COLUMNS.length + 4}::jsonb
     WHERE run_id = $1 AND node_key = $2`,
    [runId, from, parked(to), ...docs, JSON.stringify(steering)],
  );
  const steps = await tx.query<{ step: number; payload: string }>(
    'SELECT step, payload::text AS payload FROM agent_steps WHERE run_id = $1 AND node_key = $2',
    [runId, from],
  );
  for (const s of steps.rows) {
    await tx.query('UPDATE agent_steps SET payload = $4::jsonb WHERE run_id = $1 AND node_key = $2 AND step = $3', [
      runId, from, s.step, sealJsonText(openJsonText(s.payload, agentStepAt(runId, from, s.step)), agentStepAt(runId, to, s.step)),
    ]);
  }
  // parked like the node row: (run, node, step) is the key, and the new key may still hold the other node's steps
  await tx.query('UPDATE agent_steps SET node_key = $3 WHERE run_id = $1 AND node_key = $2', [runId, from, parked(to)]);
  await tx.query('UPDATE waitpoints SET node_key = $3 WHERE run_id = $1 AND node_key = $2', [runId, from, to]);
  await tx.query('UPDATE intents SET node_key = $3 WHERE run_id = $1 AND node_key = $2 AND applied_at IS NULL', [runId, from, to]);
}

