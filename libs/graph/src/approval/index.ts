export { approvalPolicyOf, approvalConfigErrors, APPROVE_RULES, REJECT_RULES, FORBID_RULES, TIMEOUT_ACTIONS, MAX_QUORUMS, MAX_QUORUM_PRINCIPALS } from './approval-config';
export type { ApprovalPolicy, ApprovalQuorum, ApproveRule, RejectRule, ForbidRule, TimeoutAction, QuorumMembers } from './approval-config';
export { activeQuorums, approvalState, assignVoters, deciderStanding, judgeDecision, membersOf, qualifies } from './policy';
export type { ApprovalJudgement, ApprovalState, ApprovalVote, Decider, DeciderStanding, DecisionInput, StandingInput, DecisionPath, QuorumProgress, RefusalRule } from './policy';
export { approvalSummary } from './summary';
