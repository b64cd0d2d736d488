/**
 * Decisions on a Pause with an approval policy. Each one is judged and recorded in one
 * transaction holding the gate's row lock, so two principals deciding at once are judged one
 * after the other against the decisions before them (never both against the same list): the
 * caller's `judge` (the pure policy function of @flowline/graph) sees the recorded decisions,
 * the run's initiator and the definition version's author as they are at that moment.
 */
import { randomUUID } from 'node:crypto';
import type { ApprovalVote, GateDecision } from '@flowline/graph';
import { openJsonText, sealJsonText } from '../crypto';
import { nodeDocAt } from './run-snapshots';
import { INTENT_TIME } from './intents';
import type { Pool } from 'pg';
import { withTransaction } from './transaction';

/** A policy gate as its judge sees it. */
export interface ApprovalGate {
  nodeStatus: string;
  nodeKind: string;
  runStatus: string;
  /** when the gate opened (node_runs.started_at), epoch ms */
  openedAt: number;
  votes: ApprovalVote[];
  /** the standing final decision (written once the policy settled), else null */
  decision: GateDecision | null;
  initiator: string | null;
  definitionAuthor: string | null;
}

/** What the judge answers: nothing to write (and why, for the caller), or the new vote list and, when it settles the gate, the final decision. */
export type ApprovalWrite<R> = { write: false; result: R } | { write: true; votes: ApprovalVote[]; decision: GateDecision | null; result: R };

/*
 * Inputs: run, node, tenant. Locks the gate's row (FOR UPDATE: a second decider waits here for
 * the first to commit, then reads what it wrote). Result: the gate, its run's status and
 * initiator, and its definition version's author; none when the node is not the tenant's.
 */
const GATE_SQL = `
SELECT n.status AS node_status, n.kind AS node_kind, r.status AS run_status, flowline_ms(n.started_at) AS opened_at,
       n.approvals::text AS approvals, n.decision::text AS decision, r.created_by AS initiator, dv.created_by AS author
FROM node_runs n
JOIN runs r ON r.id = n.run_id AND r.tenant_id = $3
LEFT JOIN definition_versions dv ON dv.definition_id = r.definition_id AND dv.version = r.definition_version
WHERE n.run_id = $1 AND n.node_key = $2
FOR UPDATE OF n`;

/**
 * Judges and records one decision on a policy gate (see the module comment). A write stores the
 * vote list (sealed like a decision) and bumps the run's version with wake_at = now (a tick
 * re-reads the gate: its progress, its next deadline); a final decision also sets
 * node_runs.decision and adds the `decide` intent the planner settles the gate from.
 * Null when the node is not the tenant's.
 */
export async function recordApproval<R>(
  pool: Pool,
  tenantId: string,
  runId: string,
  nodeKey: string,
  judge: (gate: ApprovalGate) => ApprovalWrite<R>,
  /** who votes (the decider's principal id): the `decide` intent a final decision adds records it @default null */
  principal: string | null = null,
): Promise<{ result: R; shard: number | null } | null> {
  return withTransaction(pool, async (client) => {
    const res = await client.query(GATE_SQL, [runId, nodeKey, tenantId]);
    const r = res.rows[0];
    if (!r) return null;
    const at = (column: string) => nodeDocAt(runId, nodeKey, column);
    const gate: ApprovalGate = {
      nodeStatus: r.node_status, nodeKind: r.node_kind, runStatus: r.run_status, openedAt: Number(r.opened_at ?? 0),
      votes: r.approvals === null ? [] : (JSON.parse(openJsonText(r.approvals, at('approvals'))) as ApprovalVote[]),
      decision: r.decision === null ? null : (JSON.parse(openJsonText(r.decision, at('decision'))) as GateDecision),
      initiator: r.initiator, definitionAuthor: r.author,
    };
    const out = judge(gate);
    if (!out.write) return { result: out.result, shard: null };
    await client.query(
      `UPDATE node_runs SET approvals = $3::jsonb, decision = coalesce($4::jsonb, decision) WHERE run_id = $1 AND node_key = $2`,
      [runId, nodeKey, sealJsonText(JSON.stringify(out.votes), at('approvals')), out.decision === null ? null : sealJsonText(JSON.stringify(out.decision), at('decision'))],
    );
    // the run row: a cached snapshot without this vote must not commit, and a tick re-reads the gate
    const run = await client.query<{ shard: number }>(
      out.decision === null
        ? `UPDATE runs SET wake_at = now(), version = version + 1 WHERE id = $1 RETURNING shard`
        : `WITH run AS (UPDATE runs SET wake_at = now(), version = version + 1 WHERE id = $1 RETURNING id, shard)
           INSERT INTO intents (id, run_id, kind, node_key, payload, principal, created_at)
           SELECT $2, run.id, 'decide', $3, $4::jsonb, $5, ${INTENT_TIME} FROM run
           RETURNING (SELECT shard FROM run)`,
      out.decision === null ? [runId] : [runId, randomUUID(), nodeKey, JSON.stringify({ operationId: out.decision.operationId }), principal],
    );
    return { result: out.result, shard: run.rows[0]?.shard ?? null };
  });
}

/** The tenant of run `runId`, or null when there is none (an approval link names the run, not its tenant). */
export async function runTenantOf(db: Pool, runId: string): Promise<string | null> {
  const res = await db.query<{ tenant_id: string }>(`SELECT tenant_id FROM runs WHERE id = $1`, [runId]);
  return res.rows[0]?.tenant_id ?? null;
}
