/**
 * A decision on a Pause with an approval policy, whatever path it came through (REST, the
 * console through the same route, a signed link): judged by the one policy function of
 * @flowline/graph (`judgeDecision`) inside the transaction that records it (libs/db
 * `recordApproval`), so concurrent deciders are judged one after the other. A decision that
 * completes the policy writes the gate's final decision and its `decide` intent; one that does
 * not leaves the gate WaitingForApproval with its quorum progress recorded.
 */
import { recordApproval, type ApprovalGate, type ApprovalWrite } from '@flowline/db';
import {
  approvalState, judgeDecision, verbRefusal,
  type ApprovalPolicy, type ApprovalState, type ApprovalVote, type Decider, type DecisionPath, type GateDecision, type Json, type NodeKind, type NodeStatus, type RunStatus,
} from '@flowline/graph';
import type { AppDeps } from './context';
import type { ApiError } from './errors';
import { AlreadyDecidedError, ApprovalForbiddenError, ApprovalSettledError, GateAlreadyDecidedError, NodeStateConflictError, NotFoundError } from './errors';
import { publishWake } from './wake';

export interface PolicyDecision {
  tenant: string;
  runId: string;
  nodeKey: string;
  policy: ApprovalPolicy;
  act: { operationId: string; decision: string; comment: string | null; payload: Json };
  decider: Decider;
  path: DecisionPath;
}

/**
 * The request's principal as an approval sees it: its id, scopes and — for a person signed in
 * through the issuer — groups (a key has none). A decision is judged, and "may I still
 * decide?" answered, for this decider.
 */
export function requestDecider(c: { get(key: 'principal'): { id: string; groups?: readonly string[] }; get(key: 'scopes'): ReadonlySet<string> }): Decider {
  return { id: c.get('principal').id, scopes: [...c.get('scopes')], groups: [...(c.get('principal').groups ?? [])] };
}

/** A recorded vote with the operation that cast it (a replay of that operation answers 202 again). */
type StoredVote = ApprovalVote & { operationId?: string };

/** The approval's progress as a decide answer shows it. */
export interface ApprovalAnswer {
  status: ApprovalState['status'];
  quorums: Array<Omit<ApprovalState['quorums'][number], 'members'>>;
}

type Outcome = { ok: true; state: ApprovalState } | { ok: false; error: ApiError };

/** Judges `d` against the gate as locked; the write to make, or the error to answer. */
function judgeGate(d: PolicyDecision, gate: ApprovalGate, now: number): ApprovalWrite<Outcome> {
  const refuse = (error: ApiError): ApprovalWrite<Outcome> => ({ write: false, result: { ok: false, error } });
  const votes = gate.votes as StoredVote[];
  const mine = votes.find((v) => v.principal === d.decider.id);
  const replay = mine !== undefined && mine.operationId === d.act.operationId && mine.decision === d.act.decision && mine.comment === d.act.comment;
  if (replay) return { write: false, result: { ok: true, state: approvalState(d.policy, votes, gate.openedAt, now) } };
  if (gate.nodeKind !== 'Pause') return refuse(new NodeStateConflictError(`a ${gate.nodeKind} node takes no approval decision`));
  if (gate.decision) return refuse(new GateAlreadyDecidedError({ decision: gate.decision.decision, at: new Date(gate.decision.at).toISOString() }));
  const refused = verbRefusal('decide', { runStatus: gate.runStatus as RunStatus, node: { status: gate.nodeStatus as NodeStatus, kind: gate.nodeKind as NodeKind, held: false, cancelSurvivor: false } });
  if (refused !== null) return refuse(new NodeStateConflictError(refused));
  const j = judgeDecision({
    policy: d.policy, votes, decider: d.decider, decision: d.act.decision as 'Approve' | 'Reject', path: d.path, comment: d.act.comment,
    initiator: gate.initiator, definitionAuthor: gate.definitionAuthor, openedAt: gate.openedAt, now,
  });
  if (!j.accepted) {
    if (j.rule === 'alreadyDecided') return refuse(new AlreadyDecidedError(j.message, { principal: mine!.principal, decision: mine!.decision, at: new Date(mine!.at).toISOString() }));
    if (j.rule === 'settled') return refuse(new ApprovalSettledError(j.message));
    return refuse(new ApprovalForbiddenError(j.rule, j.message));
  }
  const vote: StoredVote = { ...j.vote, operationId: d.act.operationId };
  const decision: GateDecision | null =
    j.state.status === 'pending'
      ? null
      : { operationId: d.act.operationId, decision: j.state.status === 'approved' ? 'Approve' : 'Reject', comment: d.act.comment, payload: d.act.payload, at: now, applied: false };
  return { write: true, votes: [...votes, vote], decision, result: { ok: true, state: j.state } };
}

/** Judges and records the decision; throws the refusal's error, else answers the approval's progress. */
export async function decideByPolicy(deps: AppDeps, d: PolicyDecision): Promise<ApprovalAnswer> {
  const out = await recordApproval(deps.pool, d.tenant, d.runId, d.nodeKey, (gate) => judgeGate(d, gate, Date.now()), d.decider.id);
  if (!out) throw new NotFoundError('node');
  if (!out.result.ok) throw out.result.error;
  const state = out.result.state;
  if (out.shard !== null) {
    deps.logger.info({ runId: d.runId, nodeKey: d.nodeKey, principal: d.decider.id, decision: d.act.decision, path: d.path, approval: state.status }, 'approval decision recorded');
    await publishWake(deps, d.runId, d.tenant);
  }
  // the answer's progress only: who belongs to each quorum is on the node and its blockers
  return { status: state.status, quorums: state.quorums.map(({ members: _members, ...q }) => q) };
}

