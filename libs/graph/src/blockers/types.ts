/**
 * "Why isn't this run moving?" — the vocabulary of `blockers(snapshot, facts)`: the one
 * thing each non-terminal node of a run waits for, as data, with since-when.
 * Times are epoch milliseconds.
 */
import type { JoinPolicy, JsonObject, Lane, NodeStatus, PendingDecisionKind } from '../model';
import type { Decider } from '../approval/policy';

export const BLOCKER_KINDS = [
  /** the dispatcher owning the run's shard is gone (lease expired or never taken): nothing of the run moves */
  'shardOwner',
  /** the run is Pending: the tenant holds MAX_CONCURRENT_RUNS live runs */
  'runSlot',
  /**
   * the run is Pending: its concurrency key value (its definition's `concurrency`) already has
   * `limit` live runs, or Pending runs of the key ahead of it take the free places
   */
  'concurrencyKey',
  /** the run is Cancelling: a Queued/Running node waits for its worker to confirm the cancel (until the grace deadline) */
  'cancelDrain',
  /** the run is Cancelling: a Pending node will never be reached */
  'runCancelling',
  /** one inbound edge (a single predecessor) has not settled */
  'upstream',
  /** a node with several inbound edges whose join policy still misses inputs */
  'join',
  /** an inbound edge leaves a held DecisionModel: an operator must retry it or override an edge */
  'heldDecision',
  /** retry backoff: not admitted before `until`; a Wait node parked on a time until `until`; every node of a Scheduled run (a delayed start) until its `notBefore` */
  'timer',
  /** a Wait parked on a signal channel: `channel`, sent with POST /v1/runs/{id}/signals */
  'signal',
  /** a Wait parked on a waitpoint token: `waitpointId`, `callbackUrl` (when the shell knows it), `until` (its expiry) */
  'token',
  /** a Wait parked on an event: `event` (its name), sent with POST /v1/events */
  'event',
  /** a composite Wait (config any/all): `mode`, and `arms` — each arm's kind with its channel, waitpoint, event or time */
  'wait',
  /**
   * eligible, but a branch of a Parallel whose `maxConcurrency` branches all work: it starts
   * when one settles (`parallel`, `maxConcurrency`, `working`)
   */
  'branchPlace',
  /** eligible, but listed in the run's breakpoints: a step allowance admits it */
  'breakpoint',
  /** eligible, but the run is paused: resume or step */
  'runPaused',
  /**
   * the job waits in its lane's queue: `position` of `depth` (1 = next); with `window: 'held'`
   * it is still held in the dispatch window, `position` of `depth` among its tenant's held work
   */
  'laneBacklog',
  /** a worker took the job and waits for provider capacity (tokens/min or concurrency) */
  'admission',
  /** a worker runs the job; `deadlineAt` bounds the attempt */
  'worker',
  /**
   * the node names what is no longer available — a tool no longer registered, an MCP server
   * deleted (or a tool its server no longer lists): `missing` says what; it cannot run until
   * the run is migrated to a version without it (or the tool or server is back)
   */
  'unavailable',
  /** Loop/Subworkflow: the child run must end */
  'child',
  /** Pause/ChatInput or a held DecisionModel: a person with the `run` scope must decide */
  'gate',
  /**
   * the run failed because a budget is spent: `budget` 'MAX_TOTAL_ATTEMPTS' (the run's retries,
   * `spent` of `limit`) or 'run' (the run's own budget, BudgetExceeded); the node can only run
   * again if an operator reopens the run (retry of the failed node)
   */
  'budgetExhausted',
  /**
   * nothing but a tick: eligible work, an outcome or decision waiting to be applied, a passed
   * deadline, or a Queued job missing from its lane (the in-flight check enqueues it again)
   */
  'tick',
] as const;
export type BlockerKind = (typeof BLOCKER_KINDS)[number];

/** One node's blocker. `details` is small and kind-specific; `since` is null when unknown. */
export interface Blocker {
  nodeKey: string;
  status: NodeStatus;
  kind: BlockerKind;
  since: number | null;
  details: BlockerDetails;
}

export type BlockerDetails = {
  /** unavailable: what the node names that is gone, one message each */
  missing?: string[];
  /** upstream / join / heldDecision: the inbound sources still open, document order */
  waitingOn?: string[];
  joinPolicy?: JoinPolicy;
  satisfied?: number;
  needed?: number;
  /** runSlot / concurrencyKey */
  live?: number;
  limit?: number;
  /** concurrencyKey: the key's dot path and this run's value of it */
  key?: string;
  value?: string;
  /** runSlot / concurrencyKey: Pending top-level runs of the tenant before this one in admission order (higher priority, or the same and older) */
  ahead?: number;
  /** timer: when it ends; token: when it expires; wait: the earliest time an arm fires by time */
  until?: number;
  /** signal */
  channel?: string;
  /** token */
  waitpointId?: string;
  callbackUrl?: string;
  /** event */
  event?: string;
  /** wait (composite) */
  mode?: 'any' | 'all';
  arms?: Array<{ index: number; kind: 'signal' | 'token' | 'timer' | 'event'; channel?: string; waitpointId?: string; callbackUrl?: string; event?: string; until?: number }>;
  /** laneBacklog / admission / worker / tick (jobs) */
  lane?: Lane;
  invocationId?: string;
  position?: number | null;
  depth?: number | null;
  /** laneBacklog: 'held' while the dispatch window holds the job, 'lane' once on the lane */
  window?: 'held' | 'lane';
  deadlineAt?: number | null;
  /** child */
  childRunId?: string;
  childStatus?: string | null;
  /** gate */
  decisionKind?: PendingDecisionKind;
  scope?: 'run' | 'operate';
  /** gate on an Agent's tool call (decisionKind ToolCall): the tool and the arguments the model gave */
  tool?: string;
  arguments?: JsonObject;
  /** gate on a Pause with an approval policy: its standing (quorum progress, who decided, next escalation or timeout) */
  approval?: JsonObject;
  /** shardOwner */
  shard?: number;
  owner?: string | null;
  expiresAt?: number | null;
  /** tick: what the next tick does; budgetExhausted: the run's reason */
  reason?: string;
  /** budgetExhausted: which budget ('MAX_TOTAL_ATTEMPTS' retries or the run's own 'run' budget) */
  budget?: 'MAX_TOTAL_ATTEMPTS' | 'run';
  /** budgetExhausted (MAX_TOTAL_ATTEMPTS): retries spent */
  spent?: number;
  /** branchPlace: the bounded Parallel, its maxConcurrency and its branches working now */
  parallel?: string;
  maxConcurrency?: number;
  working?: number;
};

/** What a BullMQ job of a Queued/Running lane node looks like in Redis. */
export type JobFact =
  | { state: 'missing' }
  /** not yet taken; position 1 = next out of the wait list, null when not in it (delayed, prioritized) */
  | { state: 'waiting'; position: number | null; depth: number }
  /** held in the dispatch window, not yet on its lane; position among its tenant's held work */
  | { state: 'held'; position: number | null; depth: number }
  | { state: 'admitting' }
  | { state: 'running' }
  /** taken, lock lapsed: the worker is gone */
  | { state: 'orphaned' }
  | { state: 'finished' };

/** Facts outside the run rows, gathered by the shell. Absent members are not judged. */
export interface BlockerFacts {
  now: number;
  /** the tenant's live top-level runs against MAX_CONCURRENT_RUNS, and Pending ones ahead of this run */
  slots?: { live: number; limit: number; ahead: number };
  /** the run's concurrency key: its live runs (places held) against the limit, and Pending ones of the key ahead of this run */
  concurrency?: { key: string; value: string; live: number; limit: number; ahead: number };
  /** the run's shard lease: owner null or expiresAt ≤ now = no live owner */
  shard?: { shard: number; owner: string | null; expiresAt: number | null };
  /** invocation id → its job */
  jobs?: Readonly<Record<string, JobFact>>;
  /** child run id → its status */
  children?: Readonly<Record<string, string>>;
  /** waitpoint id → its signed callback URL (the shell holds the signing key) */
  callbackUrls?: Readonly<Record<string, string>>;
  /** MAX_TOTAL_ATTEMPTS: lets a run failed AttemptsExhausted name a spent retry budget */
  maxTotalAttempts?: number;
  /** node key → what its pinned config names that is no longer available (the start check's messages) */
  unavailable?: Readonly<Record<string, readonly string[]>>;
  /** node key → the tool call an Agent parked on waits for (its transcript's request) */
  toolCalls?: Readonly<Record<string, { tool: string; arguments: JsonObject }>>;
  /**
   * Who reads the blockers, with the run's initiator and its definition version's author: a
   * policy gate's `approval.viewer` then says whether this principal may still decide it.
   */
  viewer?: { decider: Decider; initiator: string | null; definitionAuthor: string | null };
}
