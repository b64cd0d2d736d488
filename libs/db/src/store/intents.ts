/**
 * Every write of an operator intent (the `intents` rows the dispatcher loads and the planner
 * applies, each once): cancel, gate decisions, steering, and the node verbs skip / retry /
 * complete. Each is a guarded write (its guard the verb table's, @flowline/graph VERB_RULES)
 * plus the intent row, with the run's `wake_at` set to now and its `version` bumped so a
 * tick planned on an older read cannot commit over it.
 */
import type { Pool } from 'pg';
import { randomUUID } from 'node:crypto';
import { VERB_RULES, type NodeVerbRule } from '@flowline/graph';
import { digestsOf, sealJsonText } from '../crypto';
import { nodeDocAt, steerMessageAt } from './run-snapshots';
import { withTransaction, type Queryable } from './transaction';
import { auditInsertFrom, auditStatementValues, claimAuditEntry, settleAuditEntry } from './audit-context';

/**
 * The time an intent is stamped with (`intents.created_at`, the order the dispatcher loads
 * and the planner applies intents in). Every intent writer takes it in a statement that runs
 * after its transaction locked the run row (each bumps `runs.version`), and holds that lock
 * until commit: so of two intents of one run, the one committed later has the later time —
 * load order is commit order. `now()` (the transaction's start) would not be: a transaction
 * that began first can commit after one that began later.
 */
export const INTENT_TIME = 'clock_timestamp()';

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
  /** who asks (the request's principal id) @default null */
  principal: string | null = null,
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
        `INSERT INTO intents (id, run_id, kind, node_key, payload, principal, created_at) VALUES ($1, $2, 'cancel', NULL, $3::jsonb, $4, ${INTENT_TIME})`,
        [randomUUID(), runId, JSON.stringify({ reason }), principal],
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
 * Records a gate decision in ONE statement (no BEGIN/COMMIT round trips). Guard
 * (compare-and-set): the node is one the verb table lets a person decide (a WaitingForApproval
 * Pause or ChatInput) and has no decision yet, on a run of the tenant. Effect:
 * node_runs.decision = `decisionJson`, a `decide` intent carrying the operationId, and the
 * run's wake_at = now(), version + 1 — all or nothing, as one statement is. The intent is
 * timed ({@link INTENT_TIME}) as its row is made from the run row the statement's update
 * locked, and that lock is held to the commit. Returns the run's shard when recorded, null
 * when the guard failed (lost race or wrong state — the caller re-reads to answer).
 */
export async function recordDecision(
  pool: Pool,
  tenantId: string,
  runId: string,
  nodeKey: string,
  operationId: string,
  decisionJson: string,
  /** who decides (the request's principal id) @default null */
  principal: string | null = null,
): Promise<{ shard: number } | null> {
  // the request's audit row goes in with the decision, holding the answer the route presumed
  const audit = claimAuditEntry();
  let written: number | null = null;
  try {
    const res = await pool.query<{ shard: number; audit_id: string | null }>({
      name: 'flowline_decide',
      text: `WITH node AS (
               UPDATE node_runs n SET decision = $4::jsonb
               FROM runs r
               WHERE n.run_id = $1 AND n.node_key = $2 AND r.id = n.run_id AND r.tenant_id = $3
                 AND n.status = ANY($5::text[]) AND n.kind = ANY($6::text[]) AND r.status = ANY($7::text[]) AND n.decision IS NULL
               RETURNING n.run_id),
             run AS (UPDATE runs SET wake_at = now(), version = version + 1 WHERE id = (SELECT run_id FROM node) RETURNING id, shard),
             intent AS (
               INSERT INTO intents (id, run_id, kind, node_key, payload, principal, created_at)
               SELECT $8, run.id, 'decide', $2, $9::jsonb, $10, ${INTENT_TIME} FROM run),
             audit AS (${auditInsertFrom('run', 11)})
             SELECT shard, (SELECT id FROM audit)::text AS audit_id FROM run`,
      values: [
        runId,
        nodeKey,
        tenantId,
        sealJsonText(decisionJson, nodeDocAt(runId, nodeKey, 'decision')),
        VERB_RULES.decide.nodeStatuses,
        VERB_RULES.decide.kinds.only,
        VERB_RULES.decide.runStatuses,
        randomUUID(),
        JSON.stringify({ operationId }),
        principal,
        ...auditStatementValues(audit),
      ],
    });
    const row = res.rows[0];
    written = row?.audit_id == null ? null : Number(row.audit_id);
    return row ? { shard: row.shard } : null;
  } finally {
    settleAuditEntry(audit, written);
  }
}

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
  /** who steers (the request's principal id) @default null */
  principal: string | null = null,
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
       INSERT INTO intents (id, run_id, kind, node_key, payload, principal, created_at)
       SELECT $9::uuid, id, 'steer', $2, jsonb_build_object('operationId', $4::text), $12, ${INTENT_TIME} FROM r)
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
      principal,
    ],
  );
  return Number(res.rows[0]?.n ?? 0) > 0;
}

/** The node-level verbs carried to the planner as intents. */
export type NodeIntentKind = 'skip' | 'retry' | 'complete';

/**
 * A survivor of a Cancelled run: lane work whose worker never confirmed the cancel (the
 * planner's drain, libs/graph planner/drain.ts; `isCancelSurvivor` there). Retry/complete of
 * one may reopen the run.
 */
const CANCEL_SURVIVOR = `(r.status = 'Cancelled' AND n.status = 'Failed' AND n.cause = 'CancelUnconfirmed')`;

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
 * still recognised by equality ($7: its digests under every configured key; null without a key,
 * comparing the payloads themselves).
 */
function sealedIntentParams(
  runId: string,
  nodeKey: string,
  tenantId: string,
  kind: NodeIntentKind,
  payloadJson: string,
  intentId: string,
): unknown[] {
  // under every configured key: an intent digested before a key rotation still matches
  const dgs = digestsOf(`${kind}\n${payloadJson}`);
  const dg = dgs[0] ?? null;
  // without a key: the payload itself, or its verbatim envelope (equal requests stay equal texts)
  const payload = sealJsonText(payloadJson, { table: 'intents', column: 'payload', row: intentId }, dg === null ? undefined : { dg });
  return [runId, nodeKey, tenantId, kind, payload, intentId, dg === null ? null : dgs];
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
  /** who asks (the request's principal id) @default null */
  principal: string | null = null,
): Promise<'recorded' | 'duplicate' | 'pendingOther' | null> {
  const res = await db.query<{ outcome: string }>(
    `WITH n AS (
       SELECT n.run_id FROM node_runs n JOIN runs r ON r.id = n.run_id
       WHERE n.run_id = $1 AND n.node_key = $2 AND r.tenant_id = $3 AND ${INTENT_GUARDS[kind]}
       FOR UPDATE OF n),
     pend AS (
       SELECT CASE WHEN $7::text[] IS NULL THEN i.payload = $5::jsonb ELSE i.payload->>'dg' = ANY($7::text[]) END AS same
       FROM intents i, n
       WHERE i.run_id = n.run_id AND i.node_key = $2 AND i.kind = $4 AND i.applied_at IS NULL),
     r AS (
       UPDATE runs SET version = version + 1, wake_at = now()
       WHERE id IN (SELECT run_id FROM n) AND NOT EXISTS (SELECT 1 FROM pend) RETURNING id),
     -- timed from the locked run row (INTENT_TIME): load order is commit order
     i AS (
       INSERT INTO intents (id, run_id, kind, node_key, payload, principal, created_at)
       SELECT $6::uuid, id, $4, $2, $5::jsonb, $8, ${INTENT_TIME} FROM r
       RETURNING run_id)
     SELECT 'recorded' AS outcome FROM i
     UNION ALL SELECT CASE WHEN bool_or(same) THEN 'duplicate' ELSE 'pendingOther' END FROM pend HAVING count(*) > 0`,
    [...sealedIntentParams(runId, nodeKey, tenantId, kind, payloadJson, randomUUID()), principal],
  );
  const o = res.rows[0]?.outcome;
  return o === 'recorded' || o === 'duplicate' || o === 'pendingOther' ? o : null;
}
