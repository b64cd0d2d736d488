/**
 * Which operator verb applies in which run and node state (CONTRACT §5, §8), as ONE table.
 * The API answers its refusals from it, the planner re-checks an intent with it when it
 * applies one, and the SQL guards of libs/db (intents.ts, operator.ts) are kept equal to it
 * by libs/db/src/store/verb-guards.int.test.ts, which runs every verb against every state in
 * Postgres. Guards that depend on more than states (a steer's cap and operation id, a gate's
 * decision already recorded, a pause already set) are the callers'.
 */
import { HUMAN_KINDS, RUN_STATUSES, type NodeKind, type NodeStatus, type RunStatus } from '../model';

/** The operator verbs, run-level then node-level. */
export const OPERATOR_VERBS = [
  'cancel',
  'pause',
  'resume',
  'step',
  'breakpoints',
  'override',
  'skip',
  'retry',
  'complete',
  'input',
  'steer',
  'decide',
] as const;
export type OperatorVerb = (typeof OPERATOR_VERBS)[number];

/** The runs an operator may still change: live ones (a Cancelling or terminal run is refused). */
export const OPERABLE_RUN_STATUSES = ['Pending', 'Running', 'WaitingForApproval'] as const satisfies readonly RunStatus[];
/** The runs that may be cancelled or paused: the live ones and a delayed start still waiting (Scheduled). */
export const WAITING_OR_OPERABLE_RUN_STATUSES = ['Scheduled', ...OPERABLE_RUN_STATUSES] as const satisfies readonly RunStatus[];
/** The runs a repair may target: live ones and Failed (a retry or complete reopens it). */
export const REPAIRABLE_RUN_STATUSES = ['Pending', 'Running', 'WaitingForApproval', 'Failed'] as const satisfies readonly RunStatus[];

/** A verb on the run as a whole. */
export interface RunVerbRule {
  scope: 'run';
  /** the run statuses the verb applies in */
  runStatuses: readonly RunStatus[];
}

/** A verb on one node of a run. */
export interface NodeVerbRule {
  scope: 'node';
  /** the run statuses the verb applies in */
  runStatuses: readonly RunStatus[];
  /** the node statuses the verb applies in */
  nodeStatuses: readonly NodeStatus[];
  /** the node kinds it applies to: `only` these, or all `except` these; absent: every kind */
  kinds?: { only: readonly NodeKind[] } | { except: readonly NodeKind[] };
  /** also applies to a Succeeded node holding a DecisionModel's result for an operator (held) */
  heldSucceeded?: true;
  /** also applies, on a Cancelled run, to a survivor of its cancel (see planner/drain.ts), whatever the lists say */
  cancelSurvivor?: true;
  /** a refusal names the run's status before the node's (otherwise the node's first) */
  runJudgedFirst?: true;
}

export type VerbRule = RunVerbRule | NodeVerbRule;

const HUMAN = [...HUMAN_KINDS];

/** The table: verb → the states it applies in. */
export const VERB_RULES = {
  /** a live or Scheduled run drains, then reads Cancelled; a Cancelling or terminal one is a no-op */
  cancel: { scope: 'run', runStatuses: WAITING_OR_OPERABLE_RUN_STATUSES },
  /** pausing holds new admissions of a live run (of a Scheduled one, once it is released) */
  pause: { scope: 'run', runStatuses: WAITING_OR_OPERABLE_RUN_STATUSES },
  /** resuming clears the flag whatever the run's status */
  resume: { scope: 'run', runStatuses: RUN_STATUSES },
  /** a step allowance on a paused live run */
  step: { scope: 'run', runStatuses: OPERABLE_RUN_STATUSES },
  /** breakpoints are replaced whatever the run's status */
  breakpoints: { scope: 'run', runStatuses: RUN_STATUSES },
  /** an edge override changes routing of a live or Failed run */
  override: { scope: 'run', runStatuses: REPAIRABLE_RUN_STATUSES },
  /** a Pending node, or a gate waiting on a person (its request withdrawn), of a live run is skipped */
  skip: { scope: 'node', runStatuses: OPERABLE_RUN_STATUSES, nodeStatuses: ['Pending', 'WaitingForApproval'] },
  /** a Failed node (or a held decision) gets a fresh attempt budget; a Pending run holds no Failed node */
  retry: {
    scope: 'node',
    runStatuses: ['Running', 'WaitingForApproval', 'Failed'],
    nodeStatuses: ['Failed'],
    heldSucceeded: true,
    cancelSurvivor: true,
  },
  /** an operator's output settles a non-human node that has not succeeded */
  complete: {
    scope: 'node',
    runStatuses: REPAIRABLE_RUN_STATUSES,
    nodeStatuses: ['Pending', 'Queued', 'Running', 'Failed'],
    kinds: { except: HUMAN },
    cancelSurvivor: true,
  },
  /** the input of a node not yet admitted is replaced */
  input: { scope: 'node', runStatuses: REPAIRABLE_RUN_STATUSES, nodeStatuses: ['Pending'] },
  /** a message reaches a model call in flight */
  steer: {
    scope: 'node',
    runStatuses: OPERABLE_RUN_STATUSES,
    nodeStatuses: ['Queued', 'Running'],
    kinds: { only: ['Agent', 'LlmCall'] },
    runJudgedFirst: true,
  },
  /**
   * a person answers a parked gate (a Pause, a ChatInput, or an Agent parked on a tool call); the run's status is not checked (a parked node exists only
   * on a live or Cancelling run, and a cancel's drain settles it either way)
   */
  decide: { scope: 'node', runStatuses: RUN_STATUSES, nodeStatuses: ['WaitingForApproval'], kinds: { only: [...HUMAN, 'Agent'] } },
} as const satisfies Record<OperatorVerb, VerbRule>;

/** The state a verb is judged in: the run's status and, for a node verb, the node's facts. */
export interface VerbState {
  runStatus: RunStatus;
  node?: {
    status: NodeStatus;
    kind: NodeKind;
    /** a Succeeded DecisionModel holding its result for an operator */
    held: boolean;
    /** a Failed row its run's cancel could not reach (planner/drain.ts `isSurvivor`) */
    cancelSurvivor: boolean;
  };
}

const has = <T>(list: readonly T[], x: T): boolean => list.includes(x);

function kindAllowed(rule: NodeVerbRule, kind: NodeKind): boolean {
  if (!rule.kinds) return true;
  return 'only' in rule.kinds ? has(rule.kinds.only, kind) : !has(rule.kinds.except, kind);
}

/** True when `verb` may ever act on a node of `kind` (a run verb: never). */
export function verbTakesKind(verb: OperatorVerb, kind: NodeKind): boolean {
  const rule: VerbRule = VERB_RULES[verb];
  return rule.scope === 'node' && kindAllowed(rule, kind);
}

/**
 * Why `verb` does not apply in `state`, as the API words it (`run is Cancelling`, `node is
 * Succeeded, not Pending`, `a Pause node is decided, not completed`), or null when it applies.
 * A node verb judged without node facts is refused.
 */
export function verbRefusal(verb: OperatorVerb, state: VerbState): string | null {
  const rule: VerbRule = VERB_RULES[verb];
  if (rule.scope === 'run') return has(rule.runStatuses, state.runStatus) ? null : `run is ${state.runStatus}`;
  const n = state.node;
  if (!n) return 'no node';
  if (rule.cancelSurvivor && state.runStatus === 'Cancelled' && n.cancelSurvivor && kindAllowed(rule, n.kind)) return null;
  if (!kindAllowed(rule, n.kind)) return refusedKind(verb, n.kind);
  const runRefusal = has(rule.runStatuses, state.runStatus) ? null : `run is ${state.runStatus}`;
  if (runRefusal !== null && rule.runJudgedFirst) return runRefusal;
  const statusOk = has(rule.nodeStatuses, n.status) || (rule.heldSucceeded === true && n.status === 'Succeeded' && n.held);
  return statusOk ? runRefusal : refusedStatus(verb, rule, n.status);
}

/** True when `verb` applies in `state` (see {@link verbRefusal}). */
export function verbApplies(verb: OperatorVerb, state: VerbState): boolean {
  return verbRefusal(verb, state) === null;
}

function refusedKind(verb: OperatorVerb, kind: NodeKind): string {
  if (verb === 'complete') return `a ${kind} node is decided, not completed`;
  if (verb === 'steer') return `a ${kind} node cannot be steered`;
  if (verb === 'decide') return `a ${kind} node takes no decision`;
  return `a ${kind} node cannot take ${verb}`;
}

function refusedStatus(verb: OperatorVerb, rule: NodeVerbRule, status: NodeStatus): string {
  if (verb === 'retry') return `node is ${status}: only a Failed node or a held decision can be retried`;
  if (rule.nodeStatuses.length === 1) return `node is ${status}, not ${rule.nodeStatuses[0]}`;
  if (verb === 'steer') return `node is ${status}, not Queued or Running`;
  return `node is ${status}`;
}
