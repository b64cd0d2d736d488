/**
 * The node-run state machine (CONTRACT §4, §5, §8) as data: event → (from → to).
 * Guards that depend on more than the status (kind, attempts left, held flag, whether a
 * node was collateral of a run failure) are the caller's; the table only says which
 * status moves exist. docs/state-machines.md draws this table and a test keeps the two equal.
 */
import type { NodeStatus } from '../model';

/** Named node-run events, in table order. */
export const NODE_EVENTS = [
  'queue',
  'start',
  'succeed',
  'fail',
  'backoff',
  'interrupt',
  'requeueOnSteer',
  'skip',
  'cancel',
  'park',
  'decide',
  'resumeTool',
  'reject',
  'retry',
  'retryHeld',
  'operatorComplete',
  'reopen',
] as const;
export type NodeEvent = (typeof NODE_EVENTS)[number];

/**
 * Node-run transitions. Terminal statuses (Succeeded Failed Skipped Cancelled) are left
 * only by operator acts: `retry` (Failed → Pending), `operatorComplete` (Failed →
 * Succeeded), `retryHeld` (a held DecisionModel, Succeeded → Pending) and `reopen`
 * (Cancelled/Skipped → Pending: the nodes a failure cancelled or skipped, when a retry or
 * complete reopens the run). WaitingForApproval becomes Skipped only by an operator's skip,
 * which withdraws the gate's request.
 */
export const NODE_TRANSITIONS = {
  /** admitted to a worker lane (node.queued) */
  queue: { Pending: 'Queued' },
  /** a worker took the job; inline, human and child kinds start in the tick (node.started) */
  start: { Pending: 'Running', Queued: 'Running' },
  /** the attempt succeeded; inline kinds settle in the tick, a result may beat its start signal (node.completed) */
  succeed: { Pending: 'Succeeded', Queued: 'Succeeded', Running: 'Succeeded' },
  /** the node failed for good: not retryable, attempts exhausted, refused before dispatch (node.failed) */
  fail: { Pending: 'Failed', Queued: 'Failed', Running: 'Failed' },
  /** a retryable attempt failure with budget left: Pending with notBefore, attempt kept (node.failed + node.retried) */
  backoff: { Queued: 'Pending', Running: 'Pending' },
  /** the attempt's worker was lost (Interrupted, retryable) and budget is left (node.interrupted) */
  interrupt: { Queued: 'Pending', Running: 'Pending' },
  /** an applied steer re-runs the node on the same attempt (node.steered) */
  requeueOnSteer: { Queued: 'Pending', Running: 'Pending' },
  /** routing found every path in dead, or the operator skipped it (a waiting gate: its request withdrawn) (node.skipped) */
  skip: { Pending: 'Skipped', WaitingForApproval: 'Skipped' },
  /** run cancel, run failure, or a First/quorum join made it moot (node.cancelled) */
  cancel: { Pending: 'Cancelled', Queued: 'Cancelled', Running: 'Cancelled', WaitingForApproval: 'Cancelled' },
  /** a Pause/ChatInput waits on a person, or an Agent's worker parked it on a tool call (gate.requested) */
  park: { Pending: 'WaitingForApproval', Running: 'WaitingForApproval' },
  /** the person decided; a decision succeeds the node and routes on its output (gate.decided) */
  decide: { WaitingForApproval: 'Succeeded' },
  /** a person decided an Agent's tool call: it is queued again on the same attempt and resumes its transcript (gate.decided) */
  resumeTool: { WaitingForApproval: 'Pending' },
  /** a Reject that no out-edge fires on fails the gate (GateRejected) (gate.decided + node.failed) */
  reject: { WaitingForApproval: 'Failed' },
  /** operator or automatic retry of a failed node: fresh attempt budget (node.retried) */
  retry: { Failed: 'Pending' },
  /** operator retry of a held DecisionModel (Succeeded with held: true) (node.retried) */
  retryHeld: { Succeeded: 'Pending' },
  /** operator completion `{output}` of a non-human node (node.overridden + node.completed) */
  operatorComplete: { Pending: 'Succeeded', Queued: 'Succeeded', Running: 'Succeeded', Failed: 'Succeeded' },
  /** a reopened run returns the nodes its failure cancelled or skipped to Pending */
  reopen: { Cancelled: 'Pending', Skipped: 'Pending' },
} as const satisfies Record<NodeEvent, Partial<Record<NodeStatus, NodeStatus>>>;
