/**
 * SQL of the operator verbs (CONTRACT §5, §8). Every write is ONE guarded statement:
 * the guard (tenant, run status, node status/kind) sits in the statement's WHERE, and the
 * same statement bumps the run's `version` (so a tick planned on an older read cannot
 * commit over it), sets `wake_at = now()` and — where the verb has one — appends its event
 * numbered from the run row (`last_seq + 1`). Nothing here loads a row and saves it back.
 * A statement that matched nothing returns null/false; the caller re-reads to answer.
 */
import { VERB_RULES } from '@flowline/graph';
import { sealJsonText } from '../crypto';
import { nodeDocAt } from './run-snapshots';
import type { Queryable } from './transaction';

// Which verb applies in which run and node state is the verb table of @flowline/graph
// (VERB_RULES); every guard below takes its lists from it, and verb-guards.int.test.ts runs
// each verb against each state to check the statements agree with the table.

/**
 * Sets `runs.paused`. Guard: the tenant's run, `paused` differs, and (pausing) the run is
 * live. Effect: paused, version + 1, wake, and event `run.paused` / `run.resumed`
 * `{ by: 'operator' }` at `last_seq + 1`. Returns the event's seq, or null when nothing changed.
 */
export async function setRunPaused(db: Queryable, tenantId: string, runId: string, paused: boolean): Promise<number | null> {
  const res = await db.query<{ seq: number }>(
    `WITH r AS (
       UPDATE runs SET paused = $3, version = version + 1, last_seq = last_seq + 1, wake_at = now()
       WHERE id = $1 AND tenant_id = $2 AND paused <> $3 AND (NOT $3 OR status = ANY($4::text[]))
       RETURNING id, last_seq),
     e AS (
       INSERT INTO events (run_id, seq, kind, node_key, at, detail)
       SELECT id, last_seq, $5, NULL, now(), '{"by":"operator"}'::jsonb FROM r)
     SELECT last_seq AS seq FROM r`,
    [runId, tenantId, paused, VERB_RULES.pause.runStatuses, paused ? 'run.paused' : 'run.resumed'],
  );
  return res.rows[0]?.seq ?? null;
}

/** A one-shot step allowance (the planner's StepAllowance). */
export interface StepAllowanceInput {
  id: string;
  mode: 'one' | 'wave' | 'node';
  nodeKey: string | null;
}

/**
 * Grants a step allowance on a paused live run. An outstanding allowance of the same mode and
 * node covers the request (coalesced: the run holds at most one, consumed once by the planner's
 * version-guarded RunPatch); a different one is replaced. Returns the allowance now standing,
 * or null when the run is not the tenant's, not paused or not live.
 */
export async function grantStep(
  db: Queryable,
  tenantId: string,
  runId: string,
  step: StepAllowanceInput,
): Promise<{ id: string; coalesced: boolean } | null> {
  const res = await db.query<{ id: string; coalesced: boolean }>(
    `WITH cur AS (
       SELECT id, step_allowance FROM runs
       WHERE id = $1 AND tenant_id = $2 AND paused AND status = ANY($4::text[]) FOR UPDATE),
     same AS (
       SELECT step_allowance->>'id' AS id FROM cur
       WHERE step_allowance->>'mode' = $3::jsonb->>'mode'
         AND (step_allowance->>'nodeKey') IS NOT DISTINCT FROM ($3::jsonb->>'nodeKey')),
     upd AS (
       UPDATE runs r SET step_allowance = $3::jsonb, version = version + 1, wake_at = now()
       FROM cur WHERE r.id = cur.id AND NOT EXISTS (SELECT 1 FROM same)
       RETURNING r.id)
     SELECT id, true AS coalesced FROM same
     UNION ALL SELECT $3::jsonb->>'id', false FROM upd`,
    [runId, tenantId, JSON.stringify(step), VERB_RULES.step.runStatuses],
  );
  return res.rows[0] ?? null;
}

/** Replaces the run's breakpoints (version + 1, wake). False when the run is not the tenant's. */
export async function setBreakpoints(db: Queryable, tenantId: string, runId: string, nodeKeys: string[]): Promise<boolean> {
  const res = await db.query(
    `UPDATE runs SET breakpoints = $3::jsonb, version = version + 1, wake_at = now() WHERE id = $1 AND tenant_id = $2`,
    [runId, tenantId, JSON.stringify(nodeKeys)],
  );
  return (res.rowCount ?? 0) > 0;
}

/**
 * Sets (true/false) or clears (null) the override of one edge. Guard: the tenant's run in a
 * repairable status and the override actually changes. Effect: edge_overrides, version + 1,
 * wake, and event `node.overridden` on the edge's source node. Returns the event seq, or null
 * when nothing changed (or the guard failed — the caller re-reads).
 */
export async function setEdgeOverride(
  db: Queryable,
  tenantId: string,
  runId: string,
  edge: { key: string; from: string; to: string },
  verdict: boolean | null,
): Promise<number | null> {
  const res = await db.query<{ seq: number }>(
    `WITH r AS (
       UPDATE runs SET
         edge_overrides = CASE WHEN $4::boolean IS NULL THEN edge_overrides - $3::text
                               ELSE jsonb_set(edge_overrides, ARRAY[$3::text], to_jsonb($4::boolean)) END,
         version = version + 1, last_seq = last_seq + 1, wake_at = now()
       WHERE id = $1 AND tenant_id = $2 AND status = ANY($5::text[])
         AND (edge_overrides -> $3::text) IS DISTINCT FROM to_jsonb($4::boolean)
       RETURNING id, last_seq),
     e AS (
       INSERT INTO events (run_id, seq, kind, node_key, at, detail)
       SELECT id, last_seq, 'node.overridden', $6, now(),
              jsonb_build_object('by', 'operator', 'verb', 'edge', 'edgeKey', $3::text, 'to', $7::text,
                                 'verdict', to_jsonb($4::boolean))
       FROM r)
     SELECT last_seq AS seq FROM r`,
    [runId, tenantId, edge.key, verdict, VERB_RULES.override.runStatuses, edge.from, edge.to],
  );
  return res.rows[0]?.seq ?? null;
}

/**
 * Replaces the `input` member of a Pending node's input document, as ONE statement: the node
 * row is updated only while Pending (so it can never land after, or half-way into, an
 * admission), the run's version is bumped (so a tick planned on the old input cannot commit)
 * and event `node.overridden {verb:'input'}` is appended. True when applied.
 */
export async function overrideNodeInput(
  db: Queryable,
  tenantId: string,
  runId: string,
  nodeKey: string,
  inputJson: string,
): Promise<boolean> {
  const res = await db.query<{ n: string }>(
    `WITH n AS (
       UPDATE node_runs n SET input_override = $4::jsonb
       FROM runs r
       WHERE n.run_id = $1 AND n.node_key = $2 AND r.id = n.run_id AND r.tenant_id = $3
         AND n.status = ANY($6::text[]) AND r.status = ANY($5::text[])
       RETURNING n.run_id),
     r AS (
       UPDATE runs SET version = version + 1, last_seq = last_seq + 1, wake_at = now()
       WHERE id IN (SELECT run_id FROM n) RETURNING id, last_seq),
     e AS (
       INSERT INTO events (run_id, seq, kind, node_key, at, detail)
       SELECT id, last_seq, 'node.overridden', $2, now(), '{"by":"operator","verb":"input"}'::jsonb FROM r)
     SELECT count(*) AS n FROM r`,
    [
      runId,
      nodeKey,
      tenantId,
      // the stored override is { input } (text-built, so exact numbers stay exact), sealed to the node row
      sealJsonText(`{"input":${inputJson}}`, nodeDocAt(runId, nodeKey, 'input_override')),
      VERB_RULES.input.runStatuses,
      VERB_RULES.input.nodeStatuses,
    ],
  );
  return Number(res.rows[0]?.n ?? 0) > 0;
}

/** The operator-controlled columns of a run. */
export interface RunControlsRow {
  status: string;
  paused: boolean;
  breakpoints: string[];
  stepAllowance: StepAllowanceInput | null;
  edgeOverrides: Record<string, boolean>;
}

/** The tenant's run's operator-controlled columns; null when absent. */
export async function getRunControls(db: Queryable, tenantId: string, runId: string): Promise<RunControlsRow | null> {
  const res = await db.query(
    `SELECT status, paused, breakpoints, step_allowance, edge_overrides FROM runs WHERE id = $1 AND tenant_id = $2`,
    [runId, tenantId],
  );
  const r = res.rows[0];
  if (!r) return null;
  return {
    status: r.status,
    paused: r.paused,
    breakpoints: r.breakpoints ?? [],
    stepAllowance: r.step_allowance ?? null,
    edgeOverrides: r.edge_overrides ?? {},
  };
}

/**
 * Moves a delayed start (`POST /v1/runs/{id}/reschedule`). Guard: the tenant's run is still
 * Scheduled (a released or cancelled run is refused: the caller re-reads to answer 404 or 409).
 * Effect: `not_before` and `wake_at` = the new time (the database's now when it is already past,
 * so the next sweep releases it), version + 1 so a tick planned on the old time cannot commit.
 * Result: the run's shard and new notBefore, or null when the guard held nothing.
 */
export async function rescheduleRun(db: Queryable, tenantId: string, runId: string, notBefore: number): Promise<{ shard: number; notBefore: Date } | null> {
  const res = await db.query<{ shard: number; not_before: Date }>(
    `UPDATE runs SET not_before = greatest($3::timestamptz, now()), wake_at = greatest($3::timestamptz, now()), version = version + 1
     WHERE id = $1 AND tenant_id = $2 AND status = 'Scheduled'
     RETURNING shard, not_before`,
    [runId, tenantId, new Date(notBefore).toISOString()],
  );
  const row = res.rows[0];
  return row ? { shard: row.shard, notBefore: row.not_before } : null;
}
