/**
 * Resource and request shapes of the contract (CONTRACT §3, §4, §5, §8), as the REST
 * routes answer and accept them. Timestamps are ISO 8601 UTC strings; documents the
 * contract leaves open (graphs, run input, node output) are `unknown`.
 */

import type { GraphAnalysis, UsageView } from '@flowline/graph';

/** A loose string type that still offers the contract's names for completion. */
export type Named<T extends string> = T | (string & {});

/** Run status (§4). */
export type RunStatus = 'Scheduled' | 'Pending' | 'Running' | 'WaitingForApproval' | 'Completed' | 'Failed' | 'Cancelled' | 'Cancelling';

/** Node run status (§4). */
export type NodeRunStatus = 'Pending' | 'Queued' | 'Running' | 'Succeeded' | 'Failed' | 'Skipped' | 'Cancelled' | 'WaitingForApproval';

/** Failure class (§4); `"None"` until something fails. */
export type FailureClass =
  | 'None'
  | 'NodeFailed'
  | 'Timeout'
  | 'AttemptsExhausted'
  | 'OutputTooLarge'
  | 'GateRejected'
  | 'ValidationFailed'
  | 'Cancelled'
  | 'Interrupted'
  | 'CapacityRejected'
  | 'Internal'
  | 'BudgetExceeded'
  /** the run waited Pending, never admitted, past PENDING_RUN_TTL_MS, so a backlog does not keep stale work forever */
  | 'Expired';

/** Node kind (§1.1). */
export type NodeKind =
  | 'Start'
  | 'LlmCall'
  | 'Agent'
  | 'Tool'
  | 'Condition'
  | 'Parallel'
  | 'Join'
  | 'Pause'
  | 'End'
  | 'ChatInput'
  | 'DecisionModel'
  | 'Loop'
  | 'Subworkflow'
  | 'Map'
  | 'Wait';

/** What a node waiting on a person needs (§8): Pause → Approve, ChatInput → Answer, held DecisionModel → Operator. */
export type PendingDecisionKind = 'Approve' | 'Answer' | 'Operator' | 'ToolCall';

/** A decision of `decide`. */
export type Decision = 'Approve' | 'Reject' | 'Answer';

/** A graph error or warning `{ key, message }` (§1.4). */
export interface Issue {
  key: string | null;
  message: string;
}

/** A definition in a list (no graph). */
export interface DefinitionSummary {
  id: string;
  name: string;
  description: string | null;
  kind: 'Standard' | 'Chat';
  version: number;
  nodeCount: number;
  graphHash: string;
  /** false while disabled: starts answer 409 `DefinitionDisabled`, live runs go on */
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
}

/** A definition with its graph document (§8, not wrapped). */
export interface Definition extends DefinitionSummary {
  graph: unknown;
}

/** One saved version of a definition in a list (no graph): `GET /v1/definitions/{id}/versions`. */
export interface DefinitionVersionSummary {
  definitionId: string;
  version: number;
  /** the name saved with this version */
  name: string;
  description: string | null;
  kind: 'Standard' | 'Chat';
  nodeCount: number;
  graphHash: string;
  /** when this version was saved */
  createdAt: string;
}

/** One saved version with its graph document: `GET /v1/definitions/{id}/versions/{version}`. */
export interface DefinitionVersion extends DefinitionVersionSummary {
  graph: unknown;
  /** when it was retired, else null (a retired version is still read: history) */
  retiredAt: string | null;
  /** runs pinned to it that have not ended, and of those the parked ones (no node Queued or Running) */
  runs: { live: number; parked: number };
  /** schedules that start every run on it */
  schedules: number;
  /** aliases with a target on it */
  aliases: string[];
  /** what it names that is no longer available (tools, MCP servers, saved agents, child definitions), keyed by node */
  unavailable: Array<{ key: string | null; message: string }>;
}

/** `GET /v1/definitions/{id}/render`: the current version as diagram text. */
export interface GraphRendering {
  format: 'mermaid' | 'dot';
  text: string;
  version: number;
}

/** One node of {@link GraphDescription}: defaults filled in, with its edges and depth. */
export interface NodeDescription {
  index: number;
  key: string;
  kind: NodeKind;
  label: string;
  joinPolicy: 'All' | 'Any' | 'First' | { quorum: number };
  maxAttempts: number;
  timeoutSeconds: number | null;
  onError: 'FailRun' | 'Continue';
  human: boolean;
  inline: boolean;
  child: boolean;
  lane: 'llm' | 'tool' | null;
  inbound: string[];
  outbound: string[];
  /** longest path from the Start, in edges; null when unreachable */
  depth: number | null;
}

/** One edge of {@link GraphDescription}. */
export interface EdgeDescription {
  index: number;
  key: string;
  from: string;
  to: string;
  label: string | null;
  kind: 'unconditional' | 'conditional' | 'default';
  condition: { path: string; op: string; value: unknown } | null;
}

/** `GET /v1/definitions/{id}/describe`: the current version described. */
export interface GraphDescription {
  schemaVersion: 1;
  kind: 'Standard' | 'Chat';
  version: number;
  nodes: NodeDescription[];
  edges: EdgeDescription[];
  analysis: GraphAnalysis;
}

/** `POST /v1/definitions/validate`. */
export interface GraphValidation {
  valid: boolean;
  errors: Issue[];
  warnings: Issue[];
}

/** Run summary (§8). */
export interface RunSummary {
  id: string;
  definitionId: string;
  /** the definition version the run pinned */
  definitionVersion: number;
  status: RunStatus;
  failureClass: FailureClass;
  reason: string | null;
  paused: boolean;
  requestId: string | null;
  parentRunId: string | null;
  conversationId: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  graphHash: string;
  /** seq of the run's last event when read; a run detail's node runs reflect every event up to it */
  lastSeq: number;
  /**
   * the run and node this run was forked from (`runs.fork`), else null. Always sent by the
   * API; optional in this type so summaries built by hand (test fakes) need not name it.
   */
  forkedFrom?: { runId: string; nodeKey: string } | null;
  /** 1–5, higher first. Always sent by the API; optional like `forkedFrom` */
  priority?: number;
  /**
   * string key/values given at start (searchable, stored unencrypted), {} when none. Always
   * sent by the API; optional in this type like `forkedFrom`.
   */
  metadata?: Record<string, string>;
  /** the run's effective budget (the stricter of the definition's and the start request's), else null; always sent, optional like `forkedFrom` */
  budget?: RunBudget | null;
  /** model usage rolled up so far; always sent, optional like `forkedFrom` */
  usage?: RunUsage;
  /** a delayed start's earliest start (the run reads Scheduled until then), else null; always sent, optional like `forkedFrom` */
  notBefore?: string | null;
  /** the schedule whose slot started this run, else null; always sent, optional like `forkedFrom` */
  scheduleId?: string | null;
}

/** A run budget, a cap on what one run may spend: past any limit the run fails `BudgetExceeded`. */
export interface RunBudget {
  maxTokens?: number;
  maxCostUsd?: number;
  maxWallClockMs?: number;
  maxAttempts?: number;
}

/** A run's rolled-up model usage (its ended child runs included), as the engine's usage view reads it. */
export type RunUsage = UsageView;

/** One node run of `GET /v1/runs/{id}` (§8). */
export interface NodeRunSummary {
  nodeKey: string;
  kind: NodeKind;
  status: NodeRunStatus;
  attempt: number;
  failureClass: FailureClass;
  reason: string | null;
  pendingDecisionKind: PendingDecisionKind | null;
  childRunId: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  /** in a forked run: the source run this node run was copied from (reused, not run here), else null; always sent, optional like `RunSummary.forkedFrom` */
  reusedFrom?: string | null;
}

/** A succeeded End's output: the run's `output` (§2, §8). */
export interface RunOutput {
  outcome: string;
  result: unknown;
}

/** `GET /v1/runs/{id}`: `graph` is the pinned copy. */
export interface RunDetail {
  run: RunSummary;
  nodeRuns: NodeRunSummary[];
  output: RunOutput | null;
  graph: unknown;
}

/** Output envelope (§3): what an edge condition reads. */
export interface OutputEnvelope {
  status: 'succeeded' | 'failed' | 'skipped';
  attempt: number;
  branch: string | null;
  output: unknown;
  error?: { class: string; reason: string | null };
  /** the run-state keys its out-edge conditions read, as of its commit (only on such a node) */
  state?: Record<string, unknown>;
}

/** Input document (§3): what an executor is handed. */
export interface InputDocument {
  run: { input: unknown };
  upstream: Record<string, OutputEnvelope>;
  input: unknown;
  /** the run state when the node started (a graph that keeps run state) */
  state?: Record<string, unknown>;
}

/** One steering entry of a node (§5 steer). */
export interface SteerEntry {
  operationId: string;
  message: string;
  atUtc: string | null;
  attempt: number;
  applied: boolean;
}

/** `GET /v1/runs/{id}/nodes/{key}` (§8): the summary's members but the times, plus the documents. */
/** One step of an Agent's checkpointed transcript (`GET /v1/runs/{id}/nodes/{key}/agent-steps`). */
export interface AgentStepRead {
  /** numbered over all the node's lives */
  step: number;
  /** the node's life that wrote it (an operator's retry starts a new one) */
  generation: number;
  attempt: number;
  kind: 'model' | 'tool' | 'approval' | 'steer';
  /** tool: `{ callId, name, arguments?, ok, error?, content }`, content being what the model was shown */
  payload: Record<string, unknown>;
  createdAt: string;
}

export interface NodeRunDetail extends Omit<NodeRunSummary, 'startedAt' | 'finishedAt'> {
  input: InputDocument | null;
  output: OutputEnvelope | null;
  error: { class: FailureClass; reason: string | null } | null;
  steering: SteerEntry[];
  /** set while the node waits out a retry backoff */
  notBefore: string | null;
  /** a parked Wait: its waiting tokens with their signed callback URLs (absent for other nodes) */
  waitpoints?: Array<{ id: string; index: number; status: 'waiting' | 'completed' | 'expired' | 'revoked'; expiresAt: string; callbackUrl: string }>;
  /** an Agent parked on a tool call (pendingDecisionKind ToolCall): the call a person decides; absent otherwise */
  pendingToolCall?: { step: number; tool: string; arguments: Record<string, unknown>; inputSchema: Record<string, unknown> | null } | null;
  /** a Pause with an approval policy: its standing (absent for other nodes) */
  approval?: ApprovalStanding;
}

/** A policy Pause's quorum progress, as the decide answer shows it. */
export interface ApprovalProgress {
  status: 'pending' | 'approved' | 'rejected';
  quorums: Array<{ name: string; min: number; approvals: number; rejections: number; met: boolean; addedAt?: number | string }>;
}

/**
 * A policy Pause's standing on `GET …/nodes/{key}` and its blocker: progress (each quorum with
 * who counts toward it: its `principals`, `scope` or `group`), who decided, the next escalation
 * or timeout.
 */
export interface ApprovalStanding extends Omit<ApprovalProgress, 'quorums'> {
  quorums: Array<ApprovalProgress['quorums'][number] & { principals?: string[]; scope?: string; group?: string }>;
  /** how a settled approval was settled */
  by?: 'quorum' | 'veto' | 'timeout';
  decisions: Array<{ principal: string; decision: 'Approve' | 'Reject'; path: 'rest' | 'console' | 'link' | 'timeout'; comment: string | null; at: string }>;
  nextAt: string | null;
  /** while pending: each named principal's signed approval link (POST it to decide as that principal, no key) */
  links?: Record<string, string>;
  /**
   * On the run's blockers, for the calling key's principal: whether it may still decide, else the
   * rule that refuses it (settled, alreadyDecided, initiator, definitionAuthor, notInQuorum), and
   * the quorums it counts toward
   */
  viewer?: { principal: string; canDecide: boolean; rule: string | null; message: string | null; quorums: string[] };
}

/** `POST …/decide` answer: with an approval policy, its progress after this decision. */
export interface DecideAccepted {
  accepted: true;
  approval?: ApprovalProgress;
}

/** `POST /v1/definitions/{id}/runs` body; `requestId` is the idempotency key. */
export interface StartRunBody {
  requestId?: string;
  input?: unknown;
  conversationId?: string;
  /**
   * 1–5, default 3; HIGHER is more urgent: orders the release of the tenant's held work and
   * which of its Pending runs take free run slots first. Outside 1–5: 400 ValidationFailed
   */
  priority?: number;
  /** this run's budget; per field the stricter of it and the definition's applies */
  budget?: RunBudget;
  /** run metadata: string key/values (MAX_RUN_METADATA_KEYS keys of 1–64 letters, digits, _ - .), searchable */
  metadata?: Record<string, string>;
  /** a saved version of the definition to run (not with `alias`) */
  version?: number;
  /** a version alias to run through (default `current`; not with `version`) */
  alias?: string;
  /** a delayed start at this RFC 3339 instant: the run reads Scheduled until then (not with `delay`) */
  startAt?: string;
  /** a delayed start after this ISO-8601 duration from now, e.g. `PT10M` (not with `startAt`) */
  delay?: string;
}

/** `POST /v1/runs/{id}/reschedule`: the new time of a delayed start, one of the two. */
export interface RescheduleBody {
  startAt?: string;
  delay?: string;
}

/** The answer of a reschedule. */
export interface RunRescheduled {
  runId: string;
  notBefore: string;
}

/** `GET /v1/runs` search: every member optional, all ANDed. */
export interface RunSearchQuery {
  /** any of these statuses */
  status?: RunStatus | RunStatus[];
  definitionId?: string;
  definitionVersion?: number;
  failureClass?: FailureClass;
  /** `key:value` pairs (or a `{key: value}` object), each on the run */
  metadata?: string[] | Record<string, string>;
  /** RFC 3339; at or after */
  createdAfter?: string;
  /** RFC 3339; strictly before */
  createdBefore?: string;
  finishedAfter?: string;
  finishedBefore?: string;
  conversationId?: string;
  /** free text (1–200 characters): a run id, an id prefix (4+ characters as written), or text matched in the definition's name or id, the reason, the failure class and `key:value` metadata; `"…"` forces text */
  q?: string;
}

/** The filter of a bulk action: the search members as JSON (at least one). */
export interface RunSearchFilter {
  status?: RunStatus | RunStatus[];
  definitionId?: string;
  definitionVersion?: number;
  failureClass?: FailureClass;
  metadata?: Record<string, string>;
  createdAfter?: string;
  createdBefore?: string;
  finishedAfter?: string;
  finishedBefore?: string;
  conversationId?: string;
  /** free text, as the list's `q` */
  q?: string;
}

/** `POST /v1/runs/bulk` body. */
export interface BulkActionBody {
  action: 'cancel' | 'retry-failed' | 'resume' | 'fork' | 'migrate';
  filter: RunSearchFilter;
  /** answer `{ count }` only, writing nothing */
  dryRun?: boolean;
  requestId?: string;
  /** fork only */
  fromNodeKey?: string;
  /** fork only */
  failedOnly?: boolean;
  /** migrate only: the latest version of `filter.definitionId` */
  toVersion?: number;
  /** migrate only: old node key → new node key */
  nodeMap?: Record<string, string>;
  /** migrate only: migrate this share (0–100, exclusive) first, then pause until resumed */
  canaryPercent?: number;
  /** migrate only: pause when the share of failed migrations since the last resume exceeds this (0 ≤ r < 1) */
  maxErrorRate?: number;
}

/** `GET /v1/bulk-jobs/{bulkId}`: a bulk action job's progress. */
export interface BulkJob {
  bulkId: string;
  action: BulkActionBody['action'];
  status: 'Pending' | 'Running' | 'Paused' | 'Completed' | 'Failed';
  /** why a Paused migrate stopped */
  pauseReason: 'canary' | 'errorRate' | null;
  /** a migrate's options, else null */
  migrate: { toVersion: number; nodeMap: Record<string, string>; canaryPercent: number | null; maxErrorRate: number | null } | null;
  /** runs the job applies to, fixed at submission */
  total: number;
  /** runs applied, or with nothing left to do */
  done: number;
  /** runs the action was refused on */
  failed: number;
  createdAt: string;
  updatedAt: string;
}

/** One processed run of a bulk job (`GET /v1/bulk-jobs/{bulkId}/runs`). */
export interface BulkJobRun {
  runId: string;
  outcome: 'applied' | 'noop' | 'refused';
  /** a refusal's code (a migrate: needsMapping | incompatible | …), else null */
  reason: string | null;
  /** a refused migrate's planner reasons, else null */
  details: Array<{ code: string; nodeKey: string | null; message: string }> | null;
}

/** `POST /v1/runs/{id}/fork` body. */
export interface ForkRunBody {
  /** the node to fork from: it and everything not upstream of it run again */
  fromNodeKey: string;
  /** the node's edited input; for the Start node, the new run input */
  input?: unknown;
  /** a saved version of the run's definition to pin (default: the run's own) */
  definitionVersion?: number;
  /** also keep the node and its descendants where they succeeded (a fan-out's succeeded branches; a failed Loop's succeeded iterations) */
  failedOnly?: boolean;
  requestId?: string;
  /** a delayed start of the fork at this RFC 3339 instant (it reads Scheduled until then) */
  startAt?: string;
  /** a delayed start of the fork after this ISO-8601 duration from now */
  delay?: string;
}

/** `POST /v1/runs/{id}/fork` answer. */
export interface RunForked {
  runId: string;
  forkedFrom: { runId: string; nodeKey: string };
}

/** One member that differs between two versions: its dot path, the value before and after (null when absent). */
export interface MemberChange {
  member: string;
  from: unknown;
  to: unknown;
}

/** `GET /v1/definitions/{id}/diff?from&to` answer. */
export interface DefinitionDiff {
  definitionId: string;
  from: number;
  to: number;
  identical: boolean;
  nodes: {
    added: Array<{ key: string; kind: string }>;
    removed: Array<{ key: string; kind: string }>;
    changed: Array<{ key: string; kind: string; changes: MemberChange[] }>;
  };
  edges: {
    added: Array<{ key: string; from: string; to: string }>;
    removed: Array<{ key: string; from: string; to: string }>;
    changed: Array<{ key: string; changes: MemberChange[] }>;
  };
  inputSchema: { changed: boolean; from: unknown; to: unknown };
  stateSchema: { changed: boolean; from: unknown; to: unknown };
  graph: MemberChange[];
}

/** A definition's version alias (`GET /v1/definitions/{id}/aliases`). */
export interface DefinitionAlias {
  name: string;
  targets: Array<{ version: number; percent: number }>;
  updatedAt: string;
}

/** `PUT /v1/definitions/{id}/aliases/{name}` body: one version, or weighted targets (the rest falls to `current`). */
export type PutAliasBody = { version: number } | { targets: Array<{ version: number; percent: number }> };

/** `POST /v1/runs/{id}/migrate` body. */
export interface MigrateRunBody {
  /** the saved version of the run's definition to move the run to */
  toVersion: number;
  /** old node key → new node key, for nodes the new version renamed or replaced */
  nodeMap?: Record<string, string>;
  /** true: answer the plan and change nothing */
  dryRun: boolean;
}

/** `POST /v1/runs/{id}/migrate` answer: the migration plan, and whether this request executed it. */
export interface MigrationPlan {
  verdict: 'compatible' | 'needsMapping' | 'incompatible';
  reasons: Array<{ code: string; nodeKey: string | null; message: string }>;
  mapping: Array<{
    from: string | null;
    to: string | null;
    kind: string;
    status: string;
    action: 'carry' | 'keep' | 'requeue' | 'add' | 'drop';
  }>;
  executed: boolean;
  fromVersion: number;
  toVersion: number;
}

/** `POST …/decide` body. */
export interface DecideBody {
  operationId: string;
  decision: Named<Decision>;
  comment?: string | null;
  payload?: unknown;
}

/** `POST /v1/runs/{id}/signals` body. */
export interface SignalBody {
  /** a channel the run's graph declares (graph member `signals`) */
  channel: string;
  /** any JSON, checked against the channel's schema; absent: null */
  payload?: unknown;
  /** idempotency key: the same one again answers the first signal */
  requestId: string;
}

/** `POST /v1/runs/{id}/signals` answer. */
export interface SignalAccepted {
  accepted: true;
  signalId: string;
  /** true: this requestId was sent before; the answer names that first signal */
  duplicate: boolean;
}

/** A waitpoint token (a Wait's token arm). */
export interface Waitpoint {
  id: string;
  runId: string;
  nodeKey: string;
  /** the arm's place in the Wait config (0 for a plain Wait) */
  index: number;
  status: 'waiting' | 'completed' | 'expired' | 'revoked';
  singleUse: boolean;
  schema: unknown;
  payload: unknown;
  createdAt: string;
  expiresAt: string;
  completedAt: string | null;
  /** `POST` it (no key needed) to complete the token: `/w/{tokenId}/{signature}` */
  callbackUrl: string;
}

/** `POST /v1/waitpoints/{id}/complete` answer. */
export interface WaitpointCompleted {
  completed: boolean;
  alreadyCompleted: boolean;
  waitpoint: Waitpoint;
}

/** `POST /w/{tokenId}/{signature}` answer. */
export interface WaitpointCallbackAnswer {
  completed: boolean;
  alreadyCompleted: boolean;
  waitpointId: string;
}

/** One event of `POST /v1/events`. */
export interface InboundEvent {
  name: string;
  data?: unknown;
  /** dedupe key per tenant */
  id?: string;
  /** the sender's time (ISO 8601) */
  ts?: string;
}

/** `POST /v1/events` answer. */
export interface EventsAccepted {
  accepted: number;
  ids: string[];
  duplicates: string[];
}

/** What one definition subscribed to an event's name made of it. */
export interface EventMatch {
  definitionId: string;
  /** null once the definition is deleted */
  definitionName: string | null;
  outcome: 'matched' | 'notMatched' | 'filterError' | 'deferred' | 'refused';
  reason: string | null;
  /** the run a match started */
  runId: string | null;
  at: string;
}

/** `GET /v1/events/{id}` answer. */
export interface EventDetail {
  id: string;
  name: string;
  data: unknown;
  ts: string | null;
  receivedAt: string;
  /** due: a verdict or a run start is still to come (the fan-out sweep finishes it) */
  fanout: 'done' | 'due';
  matches: EventMatch[];
}

/** One event of `GET /v1/events` (its data and verdicts are on `GET /v1/events/{id}`). */
export interface EventListItem {
  id: string;
  name: string;
  ts: string | null;
  receivedAt: string;
  fanout: 'done' | 'due';
  /** how many subscribers gave each verdict so far */
  outcomes: Partial<Record<EventMatch['outcome'], number>>;
}

/** `GET /v1/events` query (a type, not an interface: it is passed as a query record). */
export type EventListQuery = {
  /** only events of this exact name */
  name?: string;
  /** received at or after (ISO 8601) */
  from?: string;
  /** received before (ISO 8601) */
  to?: string;
  limit?: number;
  cursor?: string;
};

/** A secret of a webhook: its value only in a request (never answered). */
export interface WebhookSecretBody {
  id: string;
  value?: string;
  notAfter?: string | null;
}

/** `POST/PUT /v1/webhooks` body. */
export interface WebhookBody {
  slug?: string;
  target: { definitionId: string } | { event: string };
  auth:
    | {
        type: 'hmac';
        preset?: 'standardWebhooks' | 'github' | 'stripe' | 'slack' | 'custom';
        secrets?: WebhookSecretBody[];
        toleranceSec?: number;
        header?: string;
        algorithm?: 'sha256' | 'sha512' | 'sha1';
        encoding?: 'hex' | 'base64';
        prefix?: string;
      }
    | { type: 'bearer'; secrets?: WebhookSecretBody[] }
    | { type: 'none' };
  dedupeHeader?: string | null;
  maxBodyBytes?: number;
  response?: { mode?: 'async' | 'sync'; timeoutMs?: number };
}

/** A webhook as answered. */
export interface Webhook {
  id: string;
  slug: string;
  /** POST deliveries here */
  url: string;
  target: { definitionId: string } | { event: string };
  auth: Record<string, unknown> & { type: string; secrets?: Array<{ id: string; notAfter: string | null }> };
  dedupeHeader: string | null;
  maxBodyBytes: number;
  response: { mode: 'async' | 'sync'; timeoutMs: number };
  version: number;
  createdAt: string;
  updatedAt: string;
  /** generated by this request: shown this once */
  secret?: string;
}

/** One delivery to a webhook. */
export interface WebhookDelivery {
  id: string;
  receivedAt: string;
  verdict: 'verified' | 'badSignature' | 'stale' | 'duplicate' | 'tooLarge' | 'noMatch' | 'refused';
  status: number;
  reason: string | null;
  dedupeKey: string | null;
  contentType: string | null;
  bodyBytes: number | null;
  runId: string | null;
  eventId: string | null;
}

/** `POST …/steer` body. */
export interface SteerBody {
  operationId: string;
  message: string;
}

/** `POST /v1/runs/{id}/step` body: `nodeKey` with mode "node" and only then. */
export type StepBody = { mode: 'one' | 'wave' } | { mode: 'node'; nodeKey: string };

/** A 202 answer. */
export interface Accepted {
  accepted: true;
}

/** `POST /v1/runs/{id}/step` answer. */
export interface StepAccepted extends Accepted {
  stepId: string;
  /** true when an identical allowance was already outstanding */
  coalesced: boolean;
}

/** `PUT /v1/runs/{id}/breakpoints` answer. */
export interface Breakpoints {
  nodeKeys: string[];
}

/** `PUT /v1/runs/{id}/edges/{edgeKey}/override` answer. */
export interface EdgeOverride {
  edgeKey: string;
  verdict: boolean | null;
}

/** `PUT /v1/runs/{id}/nodes/{key}/input` answer. */
export interface NodeInputOverride {
  nodeKey: string;
  input: unknown;
}

/** A tool catalog entry of `GET /v1/tools` (§8). */
export interface ToolCatalogEntry {
  name: string;
  description: string;
  argumentsSchema: unknown;
  requiresAllowedUrls: boolean;
}

/** An MCP server of the tenant (`/v1/mcp-servers`): header names only, never their values. */
export interface McpServer {
  id: string;
  name: string;
  url: string;
  transport: 'streamable-http' | 'sse';
  headerNames: string[];
  /** the tools graphs may use; null = every tool the server lists */
  allowedTools: string[] | null;
  timeoutMs: number;
  version: number;
  createdAt: string;
  updatedAt: string;
}

/** `POST /v1/mcp-servers` and `PUT /v1/mcp-servers/{id}` body; on PUT, absent `headers` keeps the stored ones. */
export interface McpServerBody {
  name: string;
  url: string;
  transport: 'streamable-http' | 'sse';
  headers?: Record<string, string>;
  allowedTools?: string[] | null;
  timeoutMs?: number;
}

/** One tool an MCP server lists (`GET /v1/mcp-servers/{id}/tools`). */
export interface McpToolListing {
  /** how a graph names it: `mcp:<server>/<tool>` */
  ref: string;
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** A tool whose calls need an approval: its name, or `{ tool, when }`. */
export type ToolApproval = string | { tool: string; when?: unknown };

/** `POST /v1/agents` and `PUT /v1/agents/{id}` body: the members of an Agent node it stands for. */
export interface SavedAgentBody {
  name: string;
  instructions: string;
  model?: string | null;
  tools?: string[] | null;
  toolApprovals?: ToolApproval[] | null;
  responseJsonSchema?: Record<string, unknown> | null;
  reasoningEffort?: string | null;
  maxIterations?: number | null;
}

/** A saved agent of the tenant (`/v1/agents`) at one version. */
export interface SavedAgent {
  id: string;
  name: string;
  /** the version these members are */
  version: number;
  latestVersion: number;
  instructions: string;
  model: string | null;
  tools: string[];
  toolApprovals: ToolApproval[];
  responseJsonSchema: Record<string, unknown> | null;
  reasoningEffort: string | null;
  maxIterations: number | null;
  createdAt: string;
  /** when this version was saved */
  updatedAt: string;
}

/** One version of a saved agent in its history. */
export interface SavedAgentVersionSummary {
  version: number;
  name: string;
  createdAt: string;
}

/** A file attached to a chat message. */
export interface Attachment {
  fileId: string;
  name: string;
  kind: 'text' | 'image';
  bytes: number;
}

/** An uploaded file (`POST /v1/files`, `GET /v1/files/{id}`). */
export interface StoredFile {
  fileId: string;
  name: string;
  bytes: number;
  /** lowercase hex SHA-256 of the content */
  sha256: string;
  contentType: string;
  /** `image` for an image/* content type, else `text` */
  kind: 'text' | 'image';
}

/** `POST /v1/conversations/{id}/messages` body; `requestId` is the idempotency key. */
export interface SendMessageBody {
  definitionId: string;
  text: string;
  requestId: string;
  attachments?: Attachment[];
  /** the run's priority, 1–5, default 3, higher first (see `StartRunBody.priority`) */
  priority?: number;
  /** true starts the definition again after its last run here failed or was cancelled (else 409 `RerunConfirmationRequired`) */
  confirmRerun?: boolean;
}

/** A run start that waited (`?wait=`): `run` and `output` only when the run ended within the wait. */
export interface RunResult {
  runId: string;
  run?: RunSummary;
  /** `{ outcome, result }` of a Completed run, else null */
  output?: unknown;
}

/** `POST /v1/conversations/{id}/messages` answer. */
export interface MessageAccepted {
  runId: string;
  messageId: string;
  /** a new run, a new run after a failed or cancelled one (confirmed), or the same send replayed */
  action: 'started' | 'rerun' | 'replayed';
}

/** A run of `GET /v1/conversations/{id}/runs`: its summary and what the chat shows of it. */
export interface ConversationRun extends RunSummary {
  /** the definition's current name; null once it is deleted */
  definitionName: string | null;
  /** the user message whose send started the run */
  triggerMessageId: string | null;
  /** the ChatInput waiting for the next answer */
  pendingInput: { nodeKey: string } | null;
  /** an Agent or LlmCall node is Queued or Running: a steer would be taken */
  steerable: boolean;
}

/** A conversation message: the user's sends and the answers nodes published. */
export interface ConversationMessage {
  id: string;
  role: 'user' | 'assistant';
  text: string;
  attachments: Attachment[];
  runId: string | null;
  /** the publishing node of an assistant message */
  nodeKey: string | null;
  createdAt: string;
}

/** `GET /healthz` · `GET /readyz`. */
export interface Health {
  status: string;
}

/** An API key scope (CONTRACT §8). */
export type ApiKeyScope = 'read' | 'run' | 'operate' | 'define' | 'keys' | 'audit' | 'admin';

/** What a managed key may touch beyond its scopes (null: unconstrained). */
export interface ApiKeyConstraints {
  /** the definitions whose runs it may touch */
  definitionIds: string[] | null;
  /** the client networks (CIDR) it may be used from */
  cidrs: string[] | null;
}

/** `GET /v1/whoami`: who the key acts as. */
export interface Whoami {
  tenant: string;
  /** who the key acts as (`service:<key id>` for a managed key, `key:` + 16 hex digits of its digest for an API_KEYS entry; `anonymous` without keys) */
  principal: string;
  /** in the order read, run, operate, define, keys, audit, admin */
  scopes: ApiKeyScope[];
  /** a managed key's id; null for API_KEYS entries */
  keyId: string | null;
  /** a managed key's constraints; null for API_KEYS entries */
  constraints: ApiKeyConstraints | null;
  /** when a managed key stops working; null: never */
  expiresAt: string | null;
  /** false when the server runs single-tenant without keys */
  authRequired: boolean;
  /** how the request authenticated: a bearer key, a person's sign-in session (single sign-on), none (no keys) */
  via: 'key' | 'session' | 'none';
  /** a signed-in person's display name; null for keys */
  name: string | null;
  /** a signed-in person's groups; empty for keys */
  groups: string[];
  /** when a sign-in session ends; null for keys */
  sessionExpiresAt: string | null;
}

/** One lane worker as its heartbeat says (`GET /v1/workers`). */
export interface LaneWorkerInfo {
  /** `<host>:<pid>:<random>`, new at each process start */
  id: string;
  host: string;
  pid: number;
  startedAt: string;
  /** its last heartbeat (dropped after three missed) */
  lastBeatAt: string;
  /** the last job it took or finished */
  lastProgressAt: string;
  /** invocations running on it now */
  inFlight: number;
  /** most invocations it runs at once */
  concurrency: number;
}

/** A lane's waiting jobs and its workers. */
export interface LaneInfo {
  lane: 'llm' | 'tool';
  /** jobs waiting for a worker (every tenant) */
  depth: number;
  /** how long the oldest of them has waited, ms */
  oldestWaitMs: number;
  workers: LaneWorkerInfo[];
}

/** `GET /auth/config`: how the console signs in. */
export interface AuthConfig {
  /** people can sign in through the OpenID Connect issuer */
  sso: boolean;
  /** where a browser starts a sign-in (append ?returnTo=<path>); null without single sign-on */
  loginUrl: string | null;
  /** false when the server runs single-tenant without keys */
  authRequired: boolean;
}

/** `POST /v1/api-keys` body. */
export interface ApiKeyCreate {
  name: string;
  /** no more than the calling key holds (else 403 `ScopeEscalation`) */
  scopes: ApiKeyScope[];
  constraints?: { definitionIds?: string[]; cidrs?: string[] };
  /** ISO time after which the key answers 401 */
  expiresAt?: string;
}

/** A managed API key as listed: never its secret. */
export interface ApiKey {
  id: string;
  name: string;
  /** `service:<id>` */
  principal: string;
  /** `fl_<tenant>` */
  prefix: string;
  lastFour: string;
  /** the principal that created it */
  owner: string;
  scopes: ApiKeyScope[];
  constraints: ApiKeyConstraints;
  createdAt: string;
  expiresAt: string | null;
  rotatedAt: string | null;
  revokedAt: string | null;
  /** written at most once a minute */
  lastUsed: { at: string; address: string | null } | null;
}

/** A key as minted or rotated: with its secret, shown this once. */
export interface ApiKeyWithSecret extends ApiKey {
  secret: string;
}

/** `GET /v1/runs/{id}/controls`: what operators set on a run. */
export interface RunControls {
  paused: boolean;
  /** node keys admission stops before */
  breakpoints: string[];
  /** edge key → forced verdict */
  edgeOverrides: Record<string, boolean>;
  /** the one-shot step allowance not consumed yet */
  step: { mode: 'one' | 'wave' | 'node'; nodeKey: string | null } | null;
}

/** What a non-terminal node waits for (`GET /v1/runs/{id}/blockers`). */
export type BlockerKind = Named<
  | 'shardOwner' | 'runSlot' | 'concurrencyKey' | 'cancelDrain' | 'runCancelling' | 'upstream' | 'join' | 'heldDecision' | 'timer'
  | 'branchPlace' | 'breakpoint' | 'runPaused' | 'laneBacklog' | 'admission' | 'worker' | 'child' | 'gate' | 'budgetExhausted' | 'tick'
>;

/** One node's blocker: the one thing it waits for, since when, and kind-specific details. */
export interface Blocker {
  nodeKey: string;
  status: NodeRunStatus;
  kind: BlockerKind;
  since: string | null;
  details: Record<string, unknown>;
}

/** `GET /v1/runs/{id}/blockers`: one blocker per non-terminal node, document order. */
export interface RunBlockers {
  runId: string;
  status: RunStatus;
  at: string;
  blockers: Blocker[];
}

/** Options of an operator act: the `Idempotency-Key` header naming the act. */
export interface ActOptions {
  idempotencyKey?: string;
}

/** A conversation of `GET /v1/conversations`. */
export interface Conversation {
  id: string;
  /** the run the last accepted message started */
  boundRunId: string | null;
  /** the bound run's definition */
  definitionId: string | null;
  boundRunStatus: Named<RunStatus> | null;
  createdAt: string;
  updatedAt: string;
}

/** A schedule's `spec`: `cron` (5 or 6 fields) and/or `every` (ISO-8601 duration), read in `timezone` (IANA, default UTC). */
export interface ScheduleSpec {
  cron?: string;
  every?: string;
  timezone?: string;
  startAt?: string;
  endAt?: string;
  jitter?: string;
}

export type ScheduleOverlap = 'skip' | 'bufferOne' | 'bufferAll' | 'cancelPrevious' | 'allowAll';

/** A schedule's `policy`; absent members take the defaults (skip; catch-up PT1H latest). */
export interface SchedulePolicy {
  overlap?: ScheduleOverlap;
  catchup?: { window?: string; mode?: 'latest' | 'all' | 'none' };
  pauseOnFailure?: boolean;
}

/** `POST /v1/schedules` / `PUT /v1/schedules/{id}`. */
export interface ScheduleBody {
  key: string;
  definitionId: string;
  version?: 'current' | number;
  /** a version alias resolved at each slot (default `current`); not with a version number */
  alias?: string;
  input?: unknown;
  metadata?: Record<string, string>;
  spec: ScheduleSpec;
  policy?: SchedulePolicy;
}

/** One slot as a preview lists it: the instant (UTC), the zone's wall clock then, its offset. */
export interface ScheduleSlotView {
  at: string;
  local: string;
  utcOffset: string;
}

export interface Schedule {
  id: string;
  key: string;
  definitionId: string;
  version: 'current' | number;
  /** the alias resolved at each slot (null: `current`, or a pinned version) */
  alias: string | null;
  input: unknown;
  metadata: Record<string, string>;
  spec: ScheduleSpec & { timezone: string };
  policy: Required<SchedulePolicy>;
  paused: boolean;
  pausedReason: string | null;
  nextSlot: ScheduleSlotView | null;
  lastSlotAt: string | null;
  revision: number;
  createdAt: string;
  updatedAt: string;
}

export type ScheduleSlotOutcome = 'started' | 'skippedOverlap' | 'skippedCatchup' | 'buffered' | 'cancelledPrevious' | 'failed';

/** A row of the slot ledger. */
export interface ScheduleSlot {
  slotAt: string;
  source: 'cron' | 'trigger' | 'backfill';
  outcome: ScheduleSlotOutcome;
  runId: string | null;
  reason: string | null;
  decidedAt: string;
}

export interface ScheduleBackfill {
  dryRun: boolean;
  slots: Array<{ slotAt: string; runId: string | null; outcome: string }>;
}

/** One row of the audit log (`GET /v1/audit`, `/v1/audit/export`). */
export interface AuditRecord {
  /** the row's place in the tenant's hash chain; null while pending (committed, not chained yet) */
  seq: number | null;
  at: string;
  principal: string;
  keyPrefix: string | null;
  /** the route's stable dotted name: `definition.update`, `run.cancel`, `gate.decide`… */
  action: string;
  resourceType: string;
  resourceId: string | null;
  requestId: string;
  clientAddress: string | null;
  /** the HTTP status answered (null: the process ended before answering) */
  status: number | null;
  errorCode: string | null;
  /** a definition change as an RFC 6902 JSON Patch, secret values `"[redacted]"` */
  patch: unknown;
  prevHash: string | null;
  hash: string | null;
}

/** Filters of the audit list and export. */
export interface AuditQuery {
  principal?: string;
  /** an action, or a prefix ending in `.*` */
  action?: string;
  /** `type` or `type:id` */
  resource?: string;
  /** ISO 8601, inclusive */
  from?: string;
  /** ISO 8601, exclusive */
  to?: string;
}

/** `GET /v1/audit/verify`. */
export interface AuditVerification {
  ok: boolean;
  checked: number;
  prunedSeq: number;
  headSeq: number;
  pending: number;
  brokenAt: number | null;
  reason: 'missing' | 'hashMismatch' | 'prevHashMismatch' | 'headMismatch' | null;
}
