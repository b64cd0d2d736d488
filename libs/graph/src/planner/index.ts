/**
 * The planner (ARCHITECTURE principle 4): `plan(snapshot, ctx) → PlanResult`, pure and
 * deterministic, plus the routing pieces it is built from.
 */
export { plan } from './plan';
export { quarantine, quarantineReason, QUARANTINE_CANCEL_PREFIX } from './quarantine';
export { applyPlanToSnapshot } from './apply';
export { admission } from './admission';
export type { Admission } from './admission';
export { edgeVerdict, inboundVerdicts, satisfiedPredecessors } from './edge-verdict';
export type { EdgeVerdict, RoutingView } from './edge-verdict';
export { indexGraph } from './graph-index';
export type { GraphIndex } from './graph-index';
export { backoffMs } from './settle';
export { isSurvivor as isCancelSurvivor } from './drain';
export { MAX_NESTING_DEPTH } from './admit';
export { snapshotProblem } from './validate-snapshot';
export { commitFollowUps, committedCounters, isEmptyPlan } from './plan-result';
export type { CommitFollowUps } from './plan-result';
export { inflightInvocations, inflightVerdict, missingJobRemedy } from './inflight';
export type { InflightRow, InflightVerdict, JobFate, MissingJobRemedy } from './inflight';
export { appliedSteering, inflightWorkItem, workItemOf } from './work-item';
export { interruptedResult, withdrawnResult } from './work-results';
export { EMPTY_WINDOW_STATE, MAX_TENANT_WEIGHT, parseTenantWeights, planRelease, releasesEverything, TenantWeightsError, windowCapacity } from './release-window';
export type { ReleaseDecision, ReleaseFacts, WindowState, WindowTenant } from './release-window';
export {
  backlogVerdict,
  compareAdmission,
  DEFAULT_RUN_PRIORITY,
  HOLD_BAND,
  holdScore,
  isRunPriority,
  MAX_RUN_PRIORITY,
  MIN_RUN_PRIORITY,
  parseTenantIntegers,
  pendingExpiry,
  runPriorityOf,
} from './backlog';
export type { AdmissionCandidate, BacklogVerdict, ExpiryVerdict } from './backlog';
export { concurrencyKeyOf, concurrencyPlaceFree, MAX_CONCURRENCY_VALUE_LENGTH } from './concurrency';
export type { ConcurrencyKeyOf } from './concurrency';
