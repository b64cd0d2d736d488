/**
 * SQL of the operator verbs (CONTRACT §5, §8). Every write is ONE guarded statement:
 * the guard (tenant, run status, node status/kind) sits in the statement's WHERE, and the
 * same statement bumps the run's `version` (so a tick planned on an older read cannot
 * commit over it), sets `wake_at = now()` and — where the verb has one — appends its event
 * numbered from the run row (`last_seq + 1`). Nothing here loads a row and saves it back.
 * A statement that matched nothing returns null/false; the caller re-reads to answer.
 */
import type { Pool, PoolClient } from 'pg';
import { randomUUID } from 'node:crypto';
import { CANCEL_UNCONFIRMED_PREFIX, VERB_RULES, type NodeVerbRule } from '@flowline/graph';
import { digestOf, sealJsonText } from '../crypto';
import { nodeDocAt, steerMessageAt } from './run-snapshots';
import { INTENT_TIME } from './runs-api';

type Queryable = Pick<Pool, 'query'> | PoolClient;

// Which verb applies in which run and node state is the verb table of @flowline/graph
// (VERB_RULES); every guard below takes its lists from it, and verb-guards.int.test.ts runs
// each verb against each state to check the statements agree with the table.

/** A steering entry as stored in node_runs.steering (times epoch ms, like the planner's SteerEntry). */
export interface SteerInput {
  operationId: string;
  message: string;
  atUtc: number;
}

/**
 * Appends a steering entry. Guard: the tenant's live run; the node an Agent/LlmCall that is
 * Queued/Running; fewer than `maxSteers` entries; no entry with this operationId. Effect: the
 * entry (recorded against the row's current attempt, not applied), a `steer` intent, run
 * version + 1 and wake. True when recorded.
 */
export async function appendSteer(
  db: Queryable,
  tenantId: string,
  runId: string,
  nodeKey: string,
  entry: SteerInput,
  maxSteers: number,
): Promise<boolean> {
  const res = await db.query<{ n: string }>(
    `WITH n AS (
       UPDATE node_runs n SET steering = n.steering || jsonb_build_array(jsonb_build_object(
           'operationId', $4::text, 'message', $5::jsonb, 'atUtc', $6::bigint, 'attempt', n.attempt, 'applied', false))
       FROM runs r
       WHERE n.run_id = $1 AND n.node_key = $2 AND r.id = n.run_id AND r.tenant_id = $3
         AND r.status = ANY($7::text[]) AND n.kind = ANY($10::text[]) AND n.status = ANY($11::text[])
         AND jsonb_array_length(n.steering) < $8
         AND NOT n.steering @> jsonb_build_array(jsonb_build_object('operationId', $4::text))
       RETURNING n.run_id),
     r AS (UPDATE runs SET version = version + 1, wake_at = now() WHERE id IN (SELECT run_id FROM n) RETURNING id),
     -- timed from the locked run row (INTENT_TIME): load order is commit order
     i AS (
       INSERT INTO intents (id, run_id, kind, node_key, payload, created_at)
       SELECT $9::uuid, id, 'steer', $2, jsonb_build_object('operationId', $4::text), ${INTENT_TIME} FROM r)
     SELECT count(*) AS n FROM r`,
    [
      runId,
      nodeKey,
      tenantId,
      entry.operationId,
      // the message alone is sealed (bound to run, node and operation): the array stays SQL-readable
      sealJsonText(JSON.stringify(entry.message), steerMessageAt(runId, nodeKey, entry.operationId)),
      entry.atUtc,
      VERB_RULES.steer.runStatuses,
      maxSteers,
      randomUUID(),
      VERB_RULES.steer.kinds.only,
      VERB_RULES.steer.nodeStatuses,
    ],
  );
  return Number(res.rows[0]?.n ?? 0) > 0;
}

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

/** The node-level verbs carried to the planner as intents. */
export type NodeIntentKind = 'skip' | 'retry' | 'complete';

/**
 * A survivor of a Cancelled run: lane work whose worker never confirmed the cancel (the
 * planner's drain, libs/graph planner/drain.ts). Retry/complete of one may reopen the run.
 * The prefix is a constant without quotes or LIKE wildcards.
 */
const CANCEL_SURVIVOR = `(r.status = 'Cancelled' AND n.status = 'Failed' AND n.failure_class = 'Interrupted'
  AND n.reason LIKE '${CANCEL_UNCONFIRMED_PREFIX}%')`;

/** `'a', 'b'`: a list of the table's names (plain identifiers, no quotes) as SQL literals. */
const sqlList = (names: readonly string[]): string => names.map((x) => `'${x}'`).join(', ');

/**
 * The WHERE guard of a node verb over `n` (node_runs) and `r` (runs), from its row of the
 * verb table: the node's kind, its status (or a held Succeeded decision), the run's status,
 * or on a Cancelled run a survivor of its cancel.
 */
function nodeVerbGuard(rule: NodeVerbRule): string {
  const kinds = !rule.kinds ? 'TRUE' : 'only' in rule.kinds ? `n.kind IN (${sqlList(rule.kinds.only)})` : `n.kind NOT IN (${sqlList(rule.kinds.except)})`;
  const held = rule.heldSucceeded ? ` OR (n.status = 'Succeeded' AND n.held)` : '';
  const states = `((n.status IN (${sqlList(rule.nodeStatuses)})${held}) AND r.status IN (${sqlList(rule.runStatuses)}))`;
  return `${kinds} AND ${rule.cancelSurvivor ? `(${states} OR ${CANCEL_SURVIVOR})` : states}`;
}

const INTENT_GUARDS: Record<NodeIntentKind, string> = {
  skip: nodeVerbGuard(VERB_RULES.skip),
  retry: nodeVerbGuard(VERB_RULES.retry),
  complete: nodeVerbGuard(VERB_RULES.complete),
};

/**
 * Parameters of the intent insert: with ENCRYPTION_KEY the payload is sealed to the intent's
 * id, with a keyed digest `dg` of its plaintext beside the envelope so a duplicate request is
 * still recognised by equality ($7; null without a key, comparing the payloads themselves).
 */
function sealedIntentParams(
  runId: string,
  nodeKey: string,
  tenantId: string,
  kind: NodeIntentKind,
  payloadJson: string,
  intentId: string,
): unknown[] {
  const dg = digestOf(`${kind}\n${payloadJson}`);
  const payload = dg === null ? payloadJson : sealJsonText(payloadJson, { table: 'intents', column: 'payload', row: intentId }, { dg });
  return [runId, nodeKey, tenantId, kind, payload, intentId, dg];
}

/**
 * Records a skip/retry/complete intent. Guard (one statement, node row locked): the tenant's
 * run and node in the verb's states (see INTENT_GUARDS; the planner re-checks when it applies
 * it). An unapplied intent of the same kind with the same payload already covers the request
 * (`'duplicate'`, nothing written); one with another payload refuses it (`'pendingOther'`).
 * Effect: the intent, version + 1, wake. Null when the guard failed.
 */
export async function recordNodeIntent(
  db: Queryable,
  tenantId: string,
  runId: string,
  nodeKey: string,
  kind: NodeIntentKind,
  payloadJson: string,
): Promise<'recorded' | 'duplicate' | 'pendingOther' | null> {
  const res = await db.query<{ outcome: string }>(
    `WITH n AS (
       SELECT n.run_id FROM node_runs n JOIN runs r ON r.id = n.run_id
       WHERE n.run_id = $1 AND n.node_key = $2 AND r.tenant_id = $3 AND ${INTENT_GUARDS[kind]}
       FOR UPDATE OF n),
     pend AS (
       SELECT CASE WHEN $7::text IS NULL THEN i.payload = $5::jsonb ELSE i.payload->>'dg' = $7::text END AS same
       FROM intents i, n
       WHERE i.run_id = n.run_id AND i.node_key = $2 AND i.kind = $4 AND i.applied_at IS NULL),
     r AS (
       UPDATE runs SET version = version + 1, wake_at = now()
       WHERE id IN (SELECT run_id FROM n) AND NOT EXISTS (SELECT 1 FROM pend) RETURNING id),
     -- timed from the locked run row (INTENT_TIME): load order is commit order
     i AS (
       INSERT INTO intents (id, run_id, kind, node_key, payload, created_at)
       SELECT $6::uuid, id, $4, $2, $5::jsonb, ${INTENT_TIME} FROM r
       RETURNING run_id)
     SELECT 'recorded' AS outcome FROM i
     UNION ALL SELECT CASE WHEN bool_or(same) THEN 'duplicate' ELSE 'pendingOther' END FROM pend HAVING count(*) > 0`,
    sealedIntentParams(runId, nodeKey, tenantId, kind, payloadJson, randomUUID()),
  );
  const o = res.rows[0]?.outcome;
  return o === 'recorded' || o === 'duplicate' || o === 'pendingOther' ? o : null;
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
