/**
 * The approval policy of a Pause: the one function every decision path goes through (REST, the
 * console through the same route, a signed link) and that the planner reads for the gate's
 * timeout and escalations. Pure: the clock, the decisions and who is deciding are arguments.
 *
 * Counting rule — a principal counts once. Each approving principal is assigned to at most one
 * quorum it qualifies for; under `allQuorums` the gate is approved when an assignment fills
 * every quorum's `min` at once (a maximum bipartite matching of principals to quorum places, so
 * 2-of-finance + 1-of-legal with one person in both still needs three distinct people). Under
 * `anyQuorum` one quorum alone must reach its `min` with distinct principals. Rejections are
 * counted the same way under `rejectRule: "quorum"`; under `"any"` one accepted reject vetoes.
 * A reject is judged before approvals, so a veto cast in the same decision set always wins.
 */
import type { ApprovalPolicy, ApprovalQuorum, ForbidRule, QuorumMembers } from './approval-config';

/** Whoever decides: the API key's principal, its scopes and (once identity provides them) its groups. */
export interface Decider {
  id: string;
  scopes: readonly string[];
  groups: readonly string[];
}

/** The path a decision came through; `timeout` is the gate's own action. */
export type DecisionPath = 'rest' | 'console' | 'link' | 'timeout';

/** One recorded decision (node_runs.approvals), kept with what qualified its principal then. */
export interface ApprovalVote {
  principal: string;
  scopes: string[];
  groups: string[];
  decision: 'Approve' | 'Reject';
  path: DecisionPath;
  comment: string | null;
  /** epoch ms */
  at: number;
}

export interface QuorumProgress {
  name: string;
  min: number;
  /** who counts toward it (the policy's principals, scope or group) */
  members: QuorumMembers;
  /** principals counted toward it: assigned by the matching under allQuorums, every qualifying one under anyQuorum */
  approvals: number;
  rejections: number;
  met: boolean;
  /** an escalation's quorum: when it joined (epoch ms) */
  addedAt?: number;
}

export type ApprovalState =
  | { status: 'pending'; quorums: QuorumProgress[]; nextAt: number | null }
  | { status: 'approved' | 'rejected'; by: 'quorum' | 'veto' | 'timeout'; quorums: QuorumProgress[]; nextAt: null };

/** Why a decision is refused: a forbid rule (403), the principal decided already (409), or it is in no quorum (403). */
export type RefusalRule = ForbidRule | 'notInQuorum' | 'alreadyDecided' | 'settled';

export type ApprovalJudgement =
  | { accepted: false; rule: RefusalRule; message: string }
  | { accepted: true; vote: ApprovalVote; state: ApprovalState };

export interface DecisionInput {
  policy: ApprovalPolicy;
  /** the decisions recorded so far on this gate (this attempt), oldest first */
  votes: readonly ApprovalVote[];
  decider: Decider;
  decision: 'Approve' | 'Reject';
  path: DecisionPath;
  comment: string | null;
  /** the principal that created the run; null when unknown (a forbid rule then refuses nobody) */
  initiator: string | null;
  /** the principal that saved the pinned definition version; null when unknown */
  definitionAuthor: string | null;
  /** when the gate opened (the Pause row's startedAt), epoch ms */
  openedAt: number;
  now: number;
}

/** The membership part of a quorum: its principals, scope or group. */
export function membersOf(q: ApprovalQuorum): QuorumMembers {
  if ('principals' in q) return { principals: [...q.principals] };
  if ('scope' in q) return { scope: q.scope };
  return { group: q.group };
}

/** Whether `d` counts toward quorum `q`. */
export function qualifies(q: ApprovalQuorum, d: Pick<Decider, 'id' | 'scopes' | 'groups'>): boolean {
  if ('principals' in q) return q.principals.includes(d.id);
  if ('scope' in q) return d.scopes.includes(q.scope);
  return d.groups.includes(q.group);
}

const voterOf = (v: ApprovalVote): Decider => ({ id: v.principal, scopes: v.scopes, groups: v.groups });

/** The quorums in force at `now`: the base ones, then each escalation past its `after` (all of them once an escalating timeout passed). */
export function activeQuorums(policy: ApprovalPolicy, openedAt: number, now: number): Array<ApprovalQuorum & { addedAt?: number }> {
  const timedOut = policy.timeoutMs !== null && now >= openedAt + policy.timeoutMs;
  const escalated = policy.escalate.flatMap((e) => {
    const due = openedAt + e.afterMs;
    if (due <= now) return [{ ...e.addQuorum, addedAt: due }];
    return policy.onTimeout === 'escalate' && timedOut ? [{ ...e.addQuorum, addedAt: openedAt + policy.timeoutMs! }] : [];
  });
  return [...policy.quorums, ...escalated];
}

/**
 * A maximum assignment of `voters` (distinct principals, in order) to the places of `quorums`
 * (`min` places each), each voter to at most one place of a quorum it qualifies for
 * (Kuhn's augmenting paths; deterministic for a given order). Returns the places filled per quorum.
 */
export function assignVoters(quorums: readonly ApprovalQuorum[], voters: readonly Decider[]): number[] {
  const places = quorums.flatMap((q, qi) => Array.from({ length: q.min }, () => qi));
  const holder: Array<number | null> = places.map(() => null);
  const tryAssign = (vi: number, seen: boolean[]): boolean => {
    for (const [pi, qi] of places.entries()) {
      if (seen[pi] || !qualifies(quorums[qi]!, voters[vi]!)) continue;
      seen[pi] = true;
      const h = holder[pi]!;
      if (h === null || tryAssign(h, seen)) {
        holder[pi] = vi;
        return true;
      }
    }
    return false;
  };
  for (const vi of voters.keys()) tryAssign(vi, places.map(() => false));
  const filled = quorums.map(() => 0);
  for (const [pi, h] of holder.entries()) if (h !== null) filled[places[pi]!]! += 1;
  return filled;
}

/** Per quorum: how many of `voters` count toward it under `rule`. */
function counted(rule: ApprovalPolicy['approveRule'], quorums: readonly ApprovalQuorum[], voters: readonly Decider[]): number[] {
  if (rule === 'allQuorums') return assignVoters(quorums, voters);
  return quorums.map((q) => voters.filter((v) => qualifies(q, v)).length);
}

/** Whether the counts meet the quorums under `rule`. */
function meets(rule: ApprovalPolicy['approveRule'], quorums: readonly ApprovalQuorum[], counts: readonly number[]): boolean {
  const met = quorums.map((q, i) => counts[i]! >= q.min);
  return rule === 'allQuorums' ? met.every(Boolean) : met.some(Boolean);
}

/**
 * The principals who decided `decision` (each principal's first decision only: a repeat is
 * refused before it is recorded; this guards a replayed list), sorted by id so the assignment —
 * and the progress it shows — depends on who decided, never on the order they did.
 */
function distinctVoters(votes: readonly ApprovalVote[], decision: ApprovalVote['decision']): Decider[] {
  const seen = new Set<string>();
  const out: Decider[] = [];
  for (const v of votes) {
    if (seen.has(v.principal)) continue;
    seen.add(v.principal);
    if (v.decision === decision) out.push(voterOf(v));
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The gate's state under `policy` after `votes` at `now`. */
export function approvalState(policy: ApprovalPolicy, votes: readonly ApprovalVote[], openedAt: number, now: number): ApprovalState {
  const quorums = activeQuorums(policy, openedAt, now);
  const approvers = distinctVoters(votes, 'Approve');
  const rejecters = distinctVoters(votes, 'Reject');
  const approvals = counted(policy.approveRule, quorums, approvers);
  const rejections = counted(policy.approveRule, quorums, rejecters);
  const progress: QuorumProgress[] = quorums.map((q, i) => ({
    name: q.name, min: q.min, members: membersOf(q), approvals: approvals[i]!, rejections: rejections[i]!, met: approvals[i]! >= q.min,
    ...(q.addedAt !== undefined ? { addedAt: q.addedAt } : {}),
  }));
  if (policy.rejectRule === 'any' && rejecters.length > 0) return { status: 'rejected', by: 'veto', quorums: progress, nextAt: null };
  if (policy.rejectRule === 'quorum' && meets(policy.approveRule, quorums, rejections)) return { status: 'rejected', by: 'quorum', quorums: progress, nextAt: null };
  if (meets(policy.approveRule, quorums, approvals)) return { status: 'approved', by: 'quorum', quorums: progress, nextAt: null };
  const timeoutAt = policy.timeoutMs === null ? null : openedAt + policy.timeoutMs;
  if (timeoutAt !== null && now >= timeoutAt && policy.onTimeout !== 'escalate') {
    return { status: policy.onTimeout === 'approve' ? 'approved' : 'rejected', by: 'timeout', quorums: progress, nextAt: null };
  }
  const upcoming = [
    ...policy.escalate.map((e) => openedAt + e.afterMs),
    ...(timeoutAt !== null ? [timeoutAt] : []),
  ].filter((t) => t > now);
  return { status: 'pending', quorums: progress, nextAt: upcoming.length > 0 ? Math.min(...upcoming) : null };
}

const FORBID_MESSAGES: Record<ForbidRule, string> = {
  initiator: 'the principal that started this run may not decide its approval (forbid: initiator)',
  definitionAuthor: "the principal that saved this run's definition version may not decide its approval (forbid: definitionAuthor)",
};

/** What {@link deciderStanding} needs: a decision's input without the decision itself. */
export type StandingInput = Omit<DecisionInput, 'decision' | 'path' | 'comment'>;

/**
 * Whether `decider` may still decide the gate now, and why not: the same refusals, in the same
 * order, as {@link judgeDecision} (which asks this first), so "waiting for me" in a list and the
 * answer to a decision never disagree. `quorums` names the active quorums the decider counts
 * toward (whether or not a rule refuses them).
 */
export type DeciderStanding =
  | { canDecide: true; rule: null; message: null; quorums: string[] }
  | { canDecide: false; rule: RefusalRule; message: string; quorums: string[] };

export function deciderStanding(input: StandingInput): DeciderStanding {
  const { policy, votes, decider, now, openedAt } = input;
  const quorums = activeQuorums(policy, openedAt, now);
  const mine = quorums.filter((q) => qualifies(q, decider)).map((q) => q.name);
  const refuse = (rule: RefusalRule, message: string): DeciderStanding => ({ canDecide: false, rule, message, quorums: mine });
  const before = approvalState(policy, votes, openedAt, now);
  if (before.status !== 'pending') return refuse('settled', `the approval is already ${before.status} (${before.by})`);
  if (votes.some((v) => v.principal === decider.id)) return refuse('alreadyDecided', `principal '${decider.id}' has already decided this approval`);
  for (const rule of policy.forbid) {
    const who = rule === 'initiator' ? input.initiator : input.definitionAuthor;
    if (who !== null && who === decider.id) return refuse(rule, FORBID_MESSAGES[rule]);
  }
  if (mine.length === 0) return refuse('notInQuorum', `principal '${decider.id}' belongs to none of the quorums (${quorums.map((q) => q.name).join(', ')})`);
  return { canDecide: true, rule: null, message: null, quorums: mine };
}

/**
 * Judges one decision against the policy: refused (with the rule that refuses it) or accepted,
 * with the vote to record and the gate's state once it is recorded.
 */
export function judgeDecision(input: DecisionInput): ApprovalJudgement {
  const standing = deciderStanding(input);
  if (!standing.canDecide) return { accepted: false, rule: standing.rule, message: standing.message };
  const { decider, now } = input;
  const vote: ApprovalVote = {
    principal: decider.id, scopes: [...decider.scopes], groups: [...decider.groups], decision: input.decision, path: input.path, comment: input.comment, at: now,
  };
  return { accepted: true, vote, state: approvalState(input.policy, [...input.votes, vote], input.openedAt, now) };
}
