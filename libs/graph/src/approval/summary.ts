import type { JsonObject } from '../model';
import { isoOf } from '../wait/civil-time';
import type { ApprovalState, ApprovalVote } from './policy';

/** The approval summary a gate's output and its blockers carry. */
export function approvalSummary(state: ApprovalState, votes: readonly ApprovalVote[]): JsonObject {
  return {
    status: state.status,
    ...(state.status !== 'pending' ? { by: state.by } : {}),
    quorums: state.quorums.map((q) => ({ name: q.name, min: q.min, approvals: q.approvals, rejections: q.rejections, met: q.met, ...(q.addedAt !== undefined ? { addedAt: isoOf(q.addedAt) } : {}) })),
    decisions: votes.map((v) => ({ principal: v.principal, decision: v.decision, path: v.path, comment: v.comment, at: isoOf(v.at) })),
    nextAt: state.nextAt === null ? null : isoOf(state.nextAt),
  };
}
