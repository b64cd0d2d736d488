import type { JsonObject } from '../model';
import { isoOf } from '../wait/civil-time';
import type { ApprovalState, ApprovalVote, DeciderStanding } from './policy';

/**
 * The approval summary a gate's output and its blockers carry: each quorum with who counts
 * toward it and its progress, who decided what through which path and when, and — when the
 * reader is known (`viewer`) — whether that principal may still decide it and, if not, the rule
 * that refuses them.
 */
export function approvalSummary(state: ApprovalState, votes: readonly ApprovalVote[], viewer?: { principal: string; standing: DeciderStanding }): JsonObject {
  return {
    status: state.status,
    ...(state.status !== 'pending' ? { by: state.by } : {}),
    quorums: state.quorums.map((q) => ({
      name: q.name, min: q.min, ...q.members, approvals: q.approvals, rejections: q.rejections, met: q.met, ...(q.addedAt !== undefined ? { addedAt: isoOf(q.addedAt) } : {}),
    })),
    decisions: votes.map((v) => ({ principal: v.principal, decision: v.decision, path: v.path, comment: v.comment, at: isoOf(v.at) })),
    nextAt: state.nextAt === null ? null : isoOf(state.nextAt),
    ...(viewer ? { viewer: { principal: viewer.principal, ...viewer.standing } } : {}),
  };
}
