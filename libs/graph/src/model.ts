/**
 * The vocabulary of the contract (CONTRACT.md §1–§4): graph documents after parsing,
 * statuses, failure classes, event kinds and the documents nodes exchange.
 * Pure types and constant tables only.
 */

import type { EventTrigger } from './triggers/event-triggers';
import type { JsonNumber } from './conditions/exact-json';
import type { RunBudget } from './budget/budget-spec';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };
/** A condition value; a number too precise for a double arrives as a lossless JsonNumber. */
export type Scalar = string | number | boolean | null | JsonNumber;

export const NODE_KINDS = [
  'Start',
  'LlmCall',
  'Agent',
  'Tool',
  'Condition',
  'Parallel',
  'Join',
  'Pause',
  'End',
  'ChatInput',
  'DecisionModel',
  'Loop',
  'Subworkflow',
  /** an addition to CONTRACT §1.1: a Subworkflow run once per item of an array (`planner/map.ts`) */
  'Map',
  /** an addition to CONTRACT §1.1: parks the run until a time (`planner/wait.ts`) */
  'Wait',
] as const;
export type NodeKind = (typeof NODE_KINDS)[number];

/** Kinds the planner executes itself, in the tick, without a worker. */
export const INLINE_KINDS: ReadonlySet<NodeKind> = new Set(['Start', 'Condition', 'Parallel', 'Join', 'End']);
/** Kinds that park on a person. */
export const HUMAN_KINDS: ReadonlySet<NodeKind> = new Set(['Pause', 'ChatInput']);
/**
 * Kinds the planner parks itself: the row reads Running with no invocation and no child, and
 * its `deadlineAt` is when it wakes (`planner/wait.ts`). Not inline: a crash cannot leave one
 * half-run, so it is never reset to Pending.
 */
export const PARKED_KINDS: ReadonlySet<NodeKind> = new Set(['Wait']);
/** Kinds that start a child run. */
export const CHILD_KINDS: ReadonlySet<NodeKind> = new Set(['Loop', 'Subworkflow', 'Map']);
/** Kinds whose work goes to a worker lane, and which lane. */
export const LANE_OF_KIND: Readonly<Partial<Record<NodeKind, Lane>>> = {
  LlmCall: 'llm',
  Agent: 'llm',
  DecisionModel: 'llm',
  Tool: 'tool',
};
export type Lane = 'llm' | 'tool';

export type JoinPolicy = 'All' | 'Any' | 'First' | { quorum: number };

export const CONDITION_OPS = ['Eq', 'Ne', 'Gt', 'Gte', 'Lt', 'Lte', 'Exists', 'NotExists'] as const;
export type ConditionOp = (typeof CONDITION_OPS)[number];

/** A condition after parsing: `path` already resolved (own or inherited from a Condition node). */
export interface EdgeCondition {
  path: string;
  op: ConditionOp;
  value: Scalar;
}

export interface RetryBackoff {
  initialMs: number;
  multiplier: number;
  maxMs: number;
}

export type OnError = 'FailRun' | 'Continue';

/** A node after parsing; every optional member of the document has its default filled in. */
export interface GraphNode {
  key: string;
  kind: NodeKind;
  label: string;
  joinPolicy: JoinPolicy;
  maxAttempts: number;
  /** null = the deployment's DEFAULT_NODE_TIMEOUT_SECONDS */
  timeoutSeconds: number | null;
  retryBackoff: RetryBackoff;
  onError: OnError;
  inputSchema: JsonObject | null;
  outputSchema: JsonObject | null;
  position: { x: number; y: number } | null;
  /** Per-kind config, closed (validated), null members removed. */
  config: JsonObject;
  /**
   * Run-state writes: state key → dot path into this node's own output envelope, applied
   * when the node succeeds (`state/`). Absent: the node writes nothing.
   */
  writes?: Record<string, string>;
}

export interface GraphEdge {
  key: string;
  from: string;
  to: string;
  label: string | null;
  /** null = unconditional (or default). */
  condition: EdgeCondition | null;
  default: boolean;
}

export type GraphKind = 'Standard' | 'Chat';

export interface Graph {
  schemaVersion: 1;
  kind: GraphKind;
  chat: { acceptsAttachments: boolean; requireRerunConfirmation: boolean } | null;
  inputSchema: JsonObject | null;
  outputSchema: JsonObject | null;
  /** run budget of every run of this definition; absent/null: none */
  budget?: RunBudget | null;
  /**
   * Concurrency key (an addition to CONTRACT §1): at most `limit` live top-level
   * runs of the definition per value of the dot path `key` over `{ input }`. Absent: none.
   */
  concurrency?: { key: string; limit: number };
  /**
   * Run state (`state/`): reducers per key, the initial state and an optional schema. Present
   * when the document declares `state` or any node declares `writes`; absent: the run keeps
   * no state and its input documents carry none.
   */
  state?: StateSpec;
  /**
   * Signal channels (an addition to CONTRACT §1): channel name → the JSON Schema its payloads
   * must satisfy (null: any payload). A Wait node reads one (`config.signal`); `POST
   * /v1/runs/{id}/signals` refuses a channel not declared here. Absent: none.
   */
  signals?: Record<string, { schema: JsonObject | null }>;
  /**
   * Event triggers (an addition to CONTRACT §1): each event `POST /v1/events` takes whose name
   * one of them matches (and whose filter holds) starts one run of the definition. Absent: none.
   */
  triggers?: EventTrigger[];
  /** In document order. */
  nodes: GraphNode[];
  /** In document order (this order decides `branch`: the first conditional edge that fired). */
  edges: GraphEdge[];
}

/** How a state key folds the writes it receives (`state/reducers.ts`). */
export const STATE_REDUCERS = ['overwrite', 'append', 'sum', 'merge', 'rejectConflict'] as const;
export type StateReducer = (typeof STATE_REDUCERS)[number];

/** A graph's run-state declaration after parsing. */
export interface StateSpec {
  /** JSON Schema every committed state must satisfy; null: none */
  schema: JsonObject | null;
  /** state key → reducer; a key not listed overwrites */
  reducers: Record<string, StateReducer>;
  /** the state a run starts with */
  initial: JsonObject;
}

/** A keyed validation error or warning (§1.4). */
export interface Issue {
  key: string | null;
  message: string;
}

// ---------------------------------------------------------------- statuses (§4)

export const RUN_STATUSES = [
  /** a delayed start (`startAt`/`delay`, or a schedule's slot): waits for its `notBefore`, holds no slot */
  'Scheduled',
  'Pending',
  'Running',
  'WaitingForApproval',
  'Completed',
  'Failed',
  'Cancelled',
  'Cancelling',
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const TERMINAL_RUN_STATUSES: ReadonlySet<RunStatus> = new Set(['Completed', 'Failed', 'Cancelled']);

export const NODE_STATUSES = [
  'Pending',
  'Queued',
  'Running',
  'Succeeded',
  'Failed',
  'Skipped',
  'Cancelled',
  'WaitingForApproval',
] as const;
export type NodeStatus = (typeof NODE_STATUSES)[number];
export const TERMINAL_NODE_STATUSES: ReadonlySet<NodeStatus> = new Set([
  'Succeeded',
  'Failed',
  'Skipped',
  'Cancelled',
]);
/** Live = holds work or waits: not terminal and not Pending. */
export const LIVE_NODE_STATUSES: ReadonlySet<NodeStatus> = new Set(['Queued', 'Running', 'WaitingForApproval']);

export const FAILURE_CLASSES = [
  'None',
  'NodeFailed',
  'Timeout',
  'AttemptsExhausted',
  'OutputTooLarge',
  'GateRejected',
  'ValidationFailed',
  'Cancelled',
  'Interrupted',
  'CapacityRejected',
  /**
   * An addition to CONTRACT §4: the store kept refusing the run's tick (APPLY_FAILURE_LIMIT
   * times in a row), so the run was quarantined — Failed, its live work cancelled — instead
   * of being retried forever. Never a node's class, never retryable.
   */
  'Internal',
  /**
   * An addition to CONTRACT §4: the run went past one of its budgets (tokens,
   * cost, wall-clock, attempts; `budget/`). A run's class only, never a node's, never retryable.
   */
  'BudgetExceeded',
  /**
   * An addition to CONTRACT §4: the run waited Pending, never admitted, longer
   * than PENDING_RUN_TTL_MS. A run's class only, never a node's, never retryable.
   */
  'Expired',
] as const;
export type FailureClass = (typeof FAILURE_CLASSES)[number];
export const RETRYABLE_FAILURE_CLASSES: ReadonlySet<FailureClass> = new Set(['NodeFailed', 'Timeout', 'Interrupted']);

/**
 * Why a node row reads what it reads, when the status and failure class alone do not say it
 * (`node_runs.cause`; the reason stays human text and is never matched). Set by the planner's
 * status writes that carry a cause; any other status write resets it to `None`.
 * - `RunCancel`: Cancelled by the drain of a run cancel (a reopened cancelled run returns these to Pending).
 * - `RunFailure`: Cancelled because a node failure failed the run (a reopened failed run returns these to Pending).
 * - `JoinSatisfied`: Cancelled because every out-edge feeds a join that was already satisfied.
 * - `Quarantine`: Cancelled because the run was quarantined.
 * - `CancelUnconfirmed`: Failed (Interrupted), a cancel survivor: its worker did not confirm a
 *   run cancel by the grace deadline, so the work may still be running.
 * - `NotTaken`: Skipped by an operator declaring it not taken (`skip {}`): its out-edges route
 *   on its skipped envelope, so its dependents proceed, instead of dying like those of a node
 *   routing skipped (or an operator's `skip {prune: true}`).
 * - `RunCompleted`: Cancelled because an End with `stopRun: true` completed the run while the
 *   row was still working or waiting (`planner/stop-run.ts`).
 */
export const NODE_CAUSES = ['None', 'RunCancel', 'RunFailure', 'JoinSatisfied', 'Quarantine', 'CancelUnconfirmed', 'NotTaken', 'RunCompleted'] as const;
export type NodeCause = (typeof NODE_CAUSES)[number];

export const EVENT_KINDS = [
  'run.created',
  'run.started',
  'run.waiting',
  'run.completed',
  'run.failed',
  'run.cancelled',
  'run.paused',
  'run.resumed',
  'run.forked',
  /** the run moved to another version of its definition (`POST /v1/runs/{id}/migrate`) */
  'run.migrated',
  'node.queued',
  'node.started',
  'node.completed',
  'node.failed',
  'node.skipped',
  'node.cancelled',
  'node.interrupted',
  'node.retried',
  'node.steered',
  'node.steer-ignored',
  'node.overridden',
  'node.published',
  'gate.requested',
  'gate.decided',
  /** a node's writes changed the run state: `{ keys, bySeq }` (the keys, never the values) */
  'state.updated',
  /** a Wait's token arm minted a waitpoint: `{ waitpointId, index, expiresAt }` (the API adds its callbackUrl when it presents the event) */
  'waitpoint.created',
] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

/** What a parked row waits for: a Pause's approval, a ChatInput's answer, an operator on a held decision, a person on an Agent's tool call. */
export type PendingDecisionKind = 'Approve' | 'Answer' | 'Operator' | 'ToolCall';

// ---------------------------------------------------------------- documents (§3)

export type EnvelopeStatus = 'succeeded' | 'failed' | 'skipped';

export interface OutputEnvelope {
  status: EnvelopeStatus;
  attempt: number;
  branch: string | null;
  output: Json;
  error?: { class: FailureClass; reason: string };
  /**
   * The run-state keys this node's out-edge conditions read (`state.<key>…`), as of the
   * node's commit: present only on such a node, so its routing never changes after it settled.
   */
  state?: JsonObject;
}

export interface InputDocument {
  run: { input: Json };
  upstream: Record<string, OutputEnvelope>;
  input: OutputEnvelope | Record<string, OutputEnvelope> | null;
  /**
   * The run state when the node started (graph member `state`); present only in a graph that
   * keeps state, and read as `{}` by templates otherwise.
   */
  state?: JsonObject;
}

/** Options the core reads; services fill them from validated config (CONTRACT §7). */
export interface CoreOptions {
  maxNodesPerDefinition: number;
  maxNodeRunsPerRun: number;
  maxTotalAttempts: number;
  defaultNodeTimeoutSeconds: number;
  maxOutputJsonBytes: number;
  maxRunInputBytes: number;
  maxSteersPerNode: number;
  /**
   * CANCEL_DRAIN_GRACE_MS: how long a Cancelling run waits for a worker to confirm the
   * cancel of a Queued/Running lane node before it ends anyway and lists it as a survivor.
   */
  cancelDrainGraceMs: number;
  /** MAX_TEMPLATE_OUTPUT_BYTES: most UTF-8 bytes one rendered template value may hold (`template/`). */
  maxTemplateOutputBytes: number;
  /** TEMPLATE_RENDER_LIMIT_MS: wall-clock backstop of one template render, ms. */
  templateRenderLimitMs: number;
  /** MAX_RUN_STATE_BYTES: a write that would make the run state larger (UTF-8 JSON) fails its node */
  maxRunStateBytes?: number;
  /** MAP_MAX_CONCURRENCY: most child runs one Map node keeps working at once, whatever its maxConcurrency */
  mapMaxConcurrency?: number;
  /** MAP_MAX_ITEMS: most items one Map node runs; a longer array fails it ValidationFailed */
  mapMaxItems?: number;
}

export const DEFAULT_CORE_OPTIONS: CoreOptions = {
  maxNodesPerDefinition: 200,
  maxNodeRunsPerRun: 200,
  maxTotalAttempts: 50,
  defaultNodeTimeoutSeconds: 600,
  maxOutputJsonBytes: 262_144,
  maxRunInputBytes: 65_536,
  maxSteersPerNode: 5,
  cancelDrainGraceMs: 10_000,
  maxTemplateOutputBytes: 262_144,
  templateRenderLimitMs: 500,
  maxRunStateBytes: 262_144,
  mapMaxConcurrency: 64,
  mapMaxItems: 10_000,
};
