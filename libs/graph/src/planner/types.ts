/**
 * The planner's contract with the shell: what a tick loads (RunSnapshot) and what
 * it must apply (PlanResult). Times are epoch milliseconds; ids come from an
 * injected generator, so `plan` is pure and deterministic.
 */
import type {
  CoreOptions,
  EventKind,
  FailureClass,
  Graph,
  InputDocument,
  Json,
  JsonObject,
  Lane,
  NodeCause,
  NodeKind,
  NodeStatus,
  OutputEnvelope,
  PendingDecisionKind,
  RunStatus,
} from '../model';
import type { ChildNodePin } from '../aliases';
import type { ModelPrices, RunBudget, RunUsage } from '../budget';
import type { StateWrite } from '../state/fold';
import type { ApprovalVote } from '../approval/policy';

export interface SteerEntry {
  operationId: string;
  message: string;
  /** epoch ms */
  atUtc: number;
  /** the attempt it was recorded against */
  attempt: number;
  /** true once the planner re-ran the node with it */
  applied: boolean;
}

/** A recorded human/operator decision on a gate (Pause/ChatInput) or a held DecisionModel. */
export interface GateDecision {
  operationId: string;
  decision: 'Approve' | 'Reject' | 'Answer';
  comment: string | null;
  payload: Json;
  /** epoch ms */
  at: number;
  /** true once the planner settled the node with it */
  applied: boolean;
}

export interface LoopState {
  iteration: number;
  results: Json[];
  last: Json;
  /**
   * Seeded on a Pending Loop row by a fork with `failedOnly`: its next start continues at
   * `iteration` (> 1) with `last` (the previous iteration's output) as the body's input and
   * keeps `results`, instead of starting again at iteration 1. Cleared by that start.
   */
  resume?: boolean;
}

/** A Map node's progress over its items (`map.ts`), kept on its row while it runs. */
export interface MapState {
  /** how many items the Map runs */
  total: number;
  /** the next item index to start: items below it have started */
  next: number;
  /** the child runs working now, each with its item index */
  live: { childRunId: string; index: number }[];
  /** each started item's child run output, by item index (null until it completes, or when it failed) */
  results: Json[];
  failed: number;
  /** the first failures (item index and reason), at most MAP_ERRORS_KEPT */
  errors: { index: number; reason: string }[];
}

/** One node_runs row as the planner sees it. */
export interface NodeRunState {
  nodeKey: string;
  kind: NodeKind;
  status: NodeStatus;
  /** attempts started so far (0 before the first) */
  attempt: number;
  /** attempts this row may reach (maxAttempts; `retry` adds maxAttempts more) */
  attemptLimit: number;
  invocationId: string | null;
  failureClass: FailureClass;
  /** why the row reads its status when status and class do not say it (model.ts NODE_CAUSES) */
  cause: NodeCause;
  reason: string | null;
  input: InputDocument | null;
  /** operator edit (`PUT …/input`): replaces the `input` member of the input document */
  inputOverride: { input: Json } | null;
  output: OutputEnvelope | null;
  /** backoff: not admitted before this time */
  notBefore: number | null;
  /** current attempt's deadline */
  deadlineAt: number | null;
  queuedAt: number | null;
  startedAt: number | null;
  finishedAt: number | null;
  steering: SteerEntry[];
  pendingDecisionKind: PendingDecisionKind | null;
  decision: GateDecision | null;
  /** a DecisionModel that succeeded below minConfidence: its out-edges hold */
  held: boolean;
  childRunId: string | null;
  loop: LoopState | null;
  /** a Map node's progress while it runs (`node_runs.map_state`); absent or null otherwise */
  map?: MapState | null;
  /** a Pause with an approval policy: the decisions recorded on this attempt (`node_runs.approvals`), oldest first */
  approvals?: ApprovalVote[] | null;
}

export type StepMode = 'one' | 'wave' | 'node';
export interface StepAllowance {
  id: string;
  mode: StepMode;
  nodeKey: string | null;
}

/** The runs row as the planner sees it. */
export interface RunState {
  id: string;
  tenantId: string;
  status: RunStatus;
  failureClass: FailureClass;
  reason: string | null;
  paused: boolean;
  /** CAS guard: the applier writes only `WHERE version = $version` and bumps it */
  version: number;
  lastSeq: number;
  input: Json;
  /** attempts spent by all nodes of the run, first ones included (usage); the MAX_TOTAL_ATTEMPTS retry budget is judged from the rows (retry-budget.ts) */
  totalAttempts: number;
  breakpoints: string[];
  stepAllowance: StepAllowance | null;
  /** edge key → forced verdict */
  edgeOverrides: Record<string, boolean>;
  /** reason given with the cancel request, when status is Cancelling */
  cancelReason: string | null;
  createdAt: number;
  /** a delayed start's earliest start (epoch ms): a Scheduled run is released to Pending at or after it; absent or null: none */
  notBefore?: number | null;
  startedAt: number | null;
  finishedAt: number | null;
  parentRunId: string | null;
  depth: number;
  /** the budget given on start (POST /v1/runs `budget`); the effective one is the stricter of this and the graph's */
  budget?: RunBudget | null;
  /** model usage rolled up so far (`runs.usage`); absent: none */
  usage?: RunUsage | null;
  /** 1–5, higher first; absent reads as the default 3 */
  priority?: number;
}

/** A worker's (or the shell's) report on one invocation. Late or foreign ones are ignored. */
export type WorkOutcome =
  | {
      ok: true;
      output: Json;
      startedAt: number | null;
      finishedAt: number;
      /** the model usage to charge when it is not the output's (a resumed Agent: what this invocation spent) */
      usage?: JsonObject;
    }
  | {
      ok: false;
      failureClass: FailureClass;
      reason: string;
      startedAt: number | null;
      finishedAt: number;
      /** model usage the failed attempt spent (LLM lane), counted by run budgets */
      usage?: JsonObject;
    }
  /**
   * The node parks on a person (an Agent's tool call that needs approval): its row reads
   * WaitingForApproval with `pendingDecisionKind` 'ToolCall' and holds no worker; a decision
   * queues it again on the same attempt. The worker kept what it did so far (its transcript).
   */
  | {
      ok: 'park';
      request: ParkRequest;
      startedAt: number | null;
      finishedAt: number;
      /** model usage the attempt spent before it parked, counted by run budgets */
      usage?: JsonObject;
    };

/** What a parked node asks a person: the tool an Agent wants to call, with its arguments. */
export interface ParkRequest {
  kind: 'ToolCall';
  /** the tool as the Agent's `tools` names it (`http_fetch`, `mcp:payments/refund`) */
  tool: string;
  /** the arguments the model gave, or null when too large to carry (the transcript holds them) */
  arguments: JsonObject | null;
  /** the transcript step of the request */
  step: number;
}

/** An Agent's resume point, carried by its work item (`workItemOf`). */
export interface AgentResume {
  /**
   * The first attempt of the node's current life: its transcript is the steps recorded since
   * then. An operator's retry starts a new life (a fresh transcript); an automatic retry, a
   * re-enqueue after Redis lost the job and a decision on a tool call keep it.
   */
  generation: number;
  /** the decision on the tool call the node parked on, once a person made it */
  decision?: { operationId: string; decision: 'Approve' | 'Reject'; comment: string | null; payload: Json };
}

export interface WorkResult {
  invocationId: string;
  nodeKey: string;
  outcome: WorkOutcome;
}

/** A worker took the job: Queued → Running. */
export interface WorkStarted {
  invocationId: string;
  nodeKey: string;
  at: number;
}

/** Operator intents committed by the API, applied in order by the planner. */
export type Intent =
  | { id: string; kind: 'cancel'; reason: string | null }
  /** `prune`: the node's dependents are skipped with it; absent/false: declared not taken, they proceed */
  | { id: string; kind: 'skip'; nodeKey: string; prune?: boolean }
  | { id: string; kind: 'retry'; nodeKey: string }
  | { id: string; kind: 'complete'; nodeKey: string; output: Json }
  | { id: string; kind: 'steer'; nodeKey: string; operationId: string }
  | { id: string; kind: 'decide'; nodeKey: string; operationId: string };

/** A child run (Loop iteration or Subworkflow) as the parent's planner sees it. */
export interface ChildRunState {
  childRunId: string;
  nodeKey: string;
  status: RunStatus;
  /** the child's run output `{ outcome, result }`, or null */
  output: Json;
  failureClass: FailureClass;
  reason: string | null;
  /** the child's own rolled-up usage and attempts, rolled into the parent's when the child ends */
  usage?: RunUsage | null;
  totalAttempts?: number;
  /**
   * The child's final run state, loaded only for a Completed child whose Subworkflow node
   * declares `stateOut` and has not settled yet. Absent otherwise.
   */
  state?: JsonObject | null;
}

export interface RunSnapshot {
  run: RunState;
  graph: Graph;
  /** one per graph node */
  nodes: NodeRunState[];
  results: WorkResult[];
  started: WorkStarted[];
  intents: Intent[];
  children: ChildRunState[];
  /** false while the tenant has MAX_CONCURRENT_RUNS live runs: a Pending run stays Pending */
  runSlotAvailable: boolean;
  /**
   * false while the run's concurrency key (its definition's `concurrency`) has `limit` live
   * runs: a Pending run stays Pending. Absent: the run has no key, or it holds its place.
   */
  concurrencyKeyAvailable?: boolean;
  /**
   * The run's signals not yet consumed (`POST /v1/runs/{id}/signals`), oldest first per
   * channel (`at`, then `id`). Absent: none.
   */
  signals?: RunSignal[];
  /**
   * The run's waitpoints of parked Waits not yet settled (`waitpoints` table): a token or event
   * arm's row, `waiting` or `completed` (a token's callback landed). Absent: none.
   */
  waitpoints?: RunWaitpoint[];
  /**
   * Events (`POST /v1/events`) of a name an `event` waitpoint of the run waits on, received
   * since that waitpoint was created, oldest first (bounded per waitpoint). Absent: none.
   */
  waitEvents?: WaitEvent[];
  /**
   * The run's state log (`run_state_writes`, oldest first), read only when the graph keeps
   * state (`graph.state`); the planner folds it (`state/fold.ts`). Absent: empty.
   */
  stateLog?: StateWrite[];
}

export interface PlanContext {
  /**
   * The planner's clock reading, epoch ms (the dispatcher's runtime `Clock`): it judges node
   * deadlines, backoff (`notBefore`), the plan's wake time and the times events record.
   * Shard leases are judged by the database clock instead (libs/db shard-leases).
   */
  now: number;
  options: CoreOptions;
  /** fresh invocation / child-run ids */
  newId: () => string;
  /**
   * How long a Pending run without a tenant slot waits before it asks again, ms. Without it
   * the plan of such a run clears its wake (nothing signals a freed slot); with it the plan
   * wakes the run again `slotRetryMs` later instead of leaving it due, where many waiting runs
   * would crowd the sweep's batch ahead of deadlines and retries. Absent: no retry wake.
   */
  slotRetryMs?: number;
  /** MODEL_PRICES: prices model usage for `maxCostUsd` and `usage.costUsd`; absent: every model costs 0 */
  prices?: ModelPrices;
  /**
   * PENDING_RUN_TTL_MS: a top-level run still Pending and never started this long after its
   * creation ends Failed/Expired (`pendingExpiry`). Absent or 0: never.
   */
  pendingRunTtlMs?: number;
}

// ---------------------------------------------------------------- decisions

/** Guarded write of one node row: applied only where status and attempt still match. */
export interface NodePatch {
  nodeKey: string;
  expect: { status: NodeStatus; attempt: number };
  set: Partial<Omit<NodeRunState, 'nodeKey' | 'kind'>>;
}

/** Guarded write of the run row (`WHERE version = expectVersion`, version + 1, lastSeq + events). */
export interface RunPatch {
  expectVersion: number;
  set: Partial<
    Pick<
      RunState,
      | 'status'
      | 'failureClass'
      | 'reason'
      | 'totalAttempts'
      | 'stepAllowance'
      | 'startedAt'
      | 'finishedAt'
      | 'cancelReason'
    >
  > & { output?: Json; usage?: RunUsage };
}

export interface PlannedEvent {
  kind: EventKind;
  nodeKey: string | null;
  detail: JsonObject;
}

/** Work to put on a lane after commit (BullMQ job id = invocationId). */
export interface WorkItem {
  lane: Lane;
  runId: string;
  nodeKey: string;
  kind: NodeKind;
  invocationId: string;
  attempt: number;
  config: JsonObject;
  input: InputDocument;
  deadlineAt: number;
  /** applied steering messages, oldest first */
  steering: string[];
  outputSchema: JsonObject | null;
  /**
   * Present (true) only for a node of a Chat graph: an Agent there shows the conversation's
   * request in its prompt. Absent otherwise, so a Standard graph's job is what it always was.
   */
  chat?: true;
  /** Present only for an Agent: where its checkpointed transcript resumes. */
  agent?: AgentResume;
}

export interface CancelWork {
  nodeKey: string;
  invocationId: string;
  reason: string;
}

export interface ChildStart {
  nodeKey: string;
  childRunId: string;
  definitionId: string;
  input: Json;
  /** a Subworkflow's `stateIn`: the child's state seed (its log's seq-0 base entry). Absent: none */
  state?: JsonObject;
  /** a Subworkflow's or Map's `config.version` / `config.alias` (the store resolves it: aliases `childVersion`). Absent: none */
  pin?: ChildNodePin;
}

export interface PlanResult {
  run: RunPatch | null;
  nodes: NodePatch[];
  /** in order; the applier numbers them lastSeq+1, lastSeq+2, … */
  events: PlannedEvent[];
  enqueue: WorkItem[];
  cancel: CancelWork[];
  startChildren: ChildStart[];
  cancelChildren: string[];
  consumedIntentIds: string[];
  /** invocation ids of results and starts consumed (applied or ignored) */
  consumedInvocationIds: string[];
  /** when the run next needs a tick by time alone (backoff, deadline); null = only on a signal */
  wakeAt: number | null;
  /**
   * State writes committed with this plan, each numbered by the seq of its `state.updated`
   * event (lastSeq + its place among `events`). Absent: none.
   */
  stateWrites?: StateWrite[];
  /** signals consumed by Wait nodes, committed with this plan (never consumed twice: the commit is version-guarded). Absent: none. */
  consumedSignals?: ConsumedSignal[];
  /** waitpoints minted by Waits parked in this plan (token and event arms), inserted in this commit. Absent: none. */
  createdWaitpoints?: WaitpointCreate[];
  /** waitpoints a settled (or cancelled) Wait used or withdrew, written in this commit. Absent: none. */
  resolvedWaitpoints?: WaitpointResolve[];
}

/** A waitpoint of a parked Wait: one token or event arm (`wait.ts`). */
export interface RunWaitpoint {
  id: string;
  nodeKey: string;
  /** the arm's place in the Wait's config (0 for a plain Wait) */
  index: number;
  kind: 'token' | 'event';
  /** revoked: `DELETE /v1/waitpoints/{id}` withdrew the token before its Wait settled */
  status: 'waiting' | 'completed' | 'revoked';
  /** a completed token's body */
  payload: Json;
  /** when a token was completed or revoked, epoch ms */
  completedAt: number | null;
  /** a token's expiry, epoch ms (null for an event arm) */
  expiresAt: number | null;
  /** an event arm's event name */
  eventName: string | null;
  /** when the arm began to wait, epoch ms: an event arm takes events received since */
  createdAt: number;
}

/** An event a Wait's event arm may take. */
export interface WaitEvent {
  id: string;
  name: string;
  data: Json;
  /** when it was received, epoch ms */
  at: number;
}

/** A waitpoint to insert with the plan. */
export interface WaitpointCreate {
  id: string;
  nodeKey: string;
  index: number;
  kind: 'token' | 'event';
  /** epoch ms; null for an event arm */
  expiresAt: number | null;
  schema: JsonObject | null;
  singleUse: boolean;
  eventName: string | null;
  createdAt: number;
}

/**
 * A waitpoint settled with the plan: `completed` (its arm fired; for an event arm `payload`
 * and `eventId` are the event), `expired` (a token's timeout fired its arm) or `revoked`
 * (withdrawn: another arm won or the Wait ended otherwise). Only a row not settled yet is
 * written, and `revoked`/`expired` only over `waiting` (a landed callback stays `completed`).
 */
export interface WaitpointResolve {
  id: string;
  nodeKey: string;
  status: 'completed' | 'expired' | 'revoked';
  payload?: Json;
  eventId?: string;
}

/** A signal sent to a run and not yet consumed. */
export interface RunSignal {
  id: string;
  channel: string;
  payload: Json;
  /** when it was sent, epoch ms */
  at: number;
}

/** A signal a Wait node consumed. */
export interface ConsumedSignal {
  signalId: string;
  nodeKey: string;
}
