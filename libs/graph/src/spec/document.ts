/**
 * The members of a graph document, a node, an edge and a condition (CONTRACT §1), with
 * their defaults and help. The parser reads its closed member lists and defaults from
 * here; a per-kind `config` is described in `node-kinds.ts`.
 */
import { CONDITION_OPS, NODE_KINDS } from '../model';
import type { MemberSpec } from './member';
import { BUDGET_MEMBER_SPECS } from '../budget/budget-spec';

/** Members of `retryBackoff`. The parser's defaults are these `default`s. */
export const RETRY_BACKOFF_MEMBER_SPECS: readonly MemberSpec[] = [
  { name: 'initialMs', type: 'integer', required: false, min: 0, default: 500, help: 'Wait before the second attempt, in milliseconds.' },
  { name: 'multiplier', type: 'number', required: false, min: 1, default: 2, help: 'Each later wait is the previous one times this factor.' },
  {
    name: 'maxMs', type: 'integer', required: false, min: 0, default: 30_000,
    help: 'Longest wait between two attempts, in milliseconds; at least initialMs.',
  },
];

/** Members every node may carry, whatever its kind (CONTRACT §1.1). */
export const NODE_MEMBER_SPECS: readonly MemberSpec[] = [
  {
    name: 'key', type: 'key', required: true, example: 'summarise',
    help: "The node's id: 1–64 letters, digits, '_' or '-', unique among the graph's node and edge keys.",
  },
  { name: 'kind', type: 'enum', required: true, values: NODE_KINDS, example: 'LlmCall', help: 'What the node does (case-sensitive).' },
  { name: 'label', type: 'string', required: false, defaultText: 'the key', example: 'Summarise', help: 'Display text; the edges it sends never read it.' },
  {
    name: 'joinPolicy', type: 'joinPolicy', required: false, values: ['All', 'Any', 'First'], default: 'All', example: 'Any',
    help:
      'When the node may run given its inbound edges: All of them satisfied, Any (at least one, once none is pending), ' +
      'the First one to be satisfied (the others are cancelled), or { "quorum": N } of them.',
  },
  {
    name: 'maxAttempts', type: 'integer', required: false, min: 1,
    defaultText: '3 for LlmCall, Agent, Tool and DecisionModel; 1 for every other kind', example: 3,
    help: 'How many attempts the node gets before it fails AttemptsExhausted (retryable failures only).',
  },
  {
    name: 'timeoutSeconds', type: 'integer', required: false, min: 1,
    defaultText: "the deployment's DEFAULT_NODE_TIMEOUT_SECONDS (600)", example: 120,
    help: 'Limit of one attempt, in seconds; an attempt that runs longer fails Timeout and may be retried.',
  },
  {
    name: 'retryBackoff', type: 'record', required: false, members: RETRY_BACKOFF_MEMBER_SPECS,
    default: { initialMs: 500, multiplier: 2, maxMs: 30_000 }, example: { initialMs: 1000, multiplier: 2, maxMs: 10_000 },
    help: 'The wait between attempts: initialMs, then times multiplier after each attempt, at most maxMs.',
  },
  {
    name: 'onError', type: 'enum', required: false, values: ['FailRun', 'Continue'], default: 'FailRun', example: 'Continue',
    help:
      'FailRun: a failure of this node fails the run. Continue: the node reads Failed, its envelope says status "failed", ' +
      'and its out-edges route on that.',
  },
  {
    name: 'inputSchema', type: 'jsonSchema', required: false, example: { type: 'object' },
    help: "JSON Schema the node's input document must satisfy when the node starts; otherwise it fails ValidationFailed.",
  },
  {
    name: 'outputSchema', type: 'jsonSchema', required: false, example: { type: 'object', required: ['text'] },
    help: "JSON Schema the node's output must satisfy before it is committed; otherwise it fails ValidationFailed.",
  },
  {
    name: 'position', type: 'position', required: false, example: { x: 240, y: 80 },
    help: "Where the editor draws the node ({ x, y }); never read by the runtime.",
  },
  {
    name: 'config', type: 'object', required: false, default: {},
    help: "The kind's own settings; a member the kind does not read is refused.",
  },
  {
    name: 'writes', type: 'bindings', required: false, example: { findings: 'output.json.items' },
    help:
      "Run-state writes: state key → dot path into this node's own output envelope. When the node succeeds, each value is " +
      "folded into the run state by the key's reducer (state.reducers) and committed with the node's status; a path that " +
      'resolves to nothing, or a write the reducer or state.schema refuses, fails the node ValidationFailed.',
  },
];

/** Members of an edge condition (CONTRACT §1.2); a Loop's `exitCondition` has the same shape. */
export const CONDITION_MEMBER_SPECS: readonly MemberSpec[] = [
  {
    name: 'path', type: 'dotPath', required: false, defaultText: "the source Condition node's config.path", example: 'output.json.score',
    help: "Dot path into the source node's output envelope (status, attempt, branch, output, error), e.g. output.json.score.",
  },
  {
    name: 'op', type: 'enum', required: true, values: CONDITION_OPS, example: 'Gte',
    help:
      'Comparison: Eq, Ne, Gt, Gte, Lt, Lte, Exists, NotExists (names are case-insensitive). A missing path or a type ' +
      'mismatch is false for every operator but NotExists.',
  },
  {
    name: 'value', type: 'scalar', required: false, example: 0.5,
    help: 'What the path is compared with: a string, number, boolean or null. Needed by every operator but Exists and NotExists.',
  },
];

/** Members of an edge (CONTRACT §1.2). */
export const EDGE_MEMBER_SPECS: readonly MemberSpec[] = [
  {
    name: 'key', type: 'key', required: true, example: 'to-review',
    help: "The edge's id: 1–64 letters, digits, '_' or '-', unique among the graph's node and edge keys.",
  },
  { name: 'from', type: 'key', required: true, refersTo: 'node', example: 'start', help: 'Key of the source node.' },
  { name: 'to', type: 'key', required: true, refersTo: 'node', example: 'summarise', help: 'Key of the target node.' },
  {
    name: 'label', type: 'string', required: false, example: 'risky',
    help: "The named outcome: when this conditional edge fires first, it is the source envelope's branch.",
  },
  {
    name: 'condition', type: 'condition', required: false, members: CONDITION_MEMBER_SPECS,
    example: { path: 'output.json.score', op: 'Gte', value: 0.5 },
    help: 'Fires only when the condition holds on the source output envelope; absent: the edge is unconditional.',
  },
  {
    name: 'default', type: 'boolean', required: false, default: false, example: true,
    help: 'Fires only when no conditional sibling out-edge of the same source fired; carries no condition.',
  },
  { name: 'sourceHandle', type: 'string', required: false, help: 'Editor metadata (which handle the edge leaves from); ignored by the runtime.' },
];

/** Members of a Chat graph's `chat` block. */
export const CHAT_MEMBER_SPECS: readonly MemberSpec[] = [
  {
    name: 'acceptsAttachments', type: 'boolean', required: false, default: false,
    help: 'Conversation messages may carry attachments (needed by includeAttachments).',
  },
  {
    name: 'requireRerunConfirmation', type: 'boolean', required: false, default: true,
    help: 'A client asks the person before re-running a conversation turn.',
  },
];

/** Largest `concurrency.limit`. */
export const MAX_CONCURRENCY_LIMIT = 10_000;

/** Members of a graph's `concurrency` block (an addition to CONTRACT §1). */
export const CONCURRENCY_MEMBER_SPECS: readonly MemberSpec[] = [
  {
    name: 'key', type: 'dotPath', required: true, example: 'input.customerId',
    help:
      "Dot path over { input: <run input> } naming the run's key, e.g. input.customerId. A string, number or boolean " +
      'there (at most 200 characters as text) is the key; anything else (missing, null, an object or array) leaves the run without a key, not limited.',
  },
  {
    name: 'limit', type: 'integer', required: true, min: 1, max: MAX_CONCURRENCY_LIMIT, example: 2,
    help: "Most live runs of this definition with one key value at once (a tenant's own); more stay Pending until one ends.",
  },
];

/** Members of a graph's `state` block (run state). */
export const STATE_MEMBER_SPECS: readonly MemberSpec[] = [
  {
    name: 'schema', type: 'jsonSchema', required: false, example: { type: 'object', properties: { findings: { type: 'array' } } },
    help:
      'JSON Schema every committed state must satisfy: a write that breaks it fails the writing node ValidationFailed. ' +
      "Reducers are checked against its declared property types at save (append needs an array, sum a number, merge an object).",
  },
  {
    name: 'reducers', type: 'object', required: false, default: {}, example: { findings: 'append', cost: 'sum' },
    help:
      'State key → how writes fold: overwrite (the default: last commit wins), append (each write is one more item, in ' +
      'writer node key order), sum (numbers added in writer key order), merge (objects merged in writer key order), ' +
      'rejectConflict (a write of a different value than another node wrote fails the writer; its writers must be ordered by the graph).',
  },
  {
    name: 'initial', type: 'object', required: false, default: {}, example: { findings: [] },
    help: 'The state a run starts with (the Start node then maps the run input in through its writes).',
  },
];

/** Members of a graph document (CONTRACT §1). */
export const GRAPH_MEMBER_SPECS: readonly MemberSpec[] = [
  { name: 'schemaVersion', type: 'integer', required: false, min: 1, max: 1, default: 1, help: 'The graph format version; 1 when present.' },
  {
    name: 'kind', type: 'enum', required: false, values: ['Standard', 'Chat'], default: 'Standard',
    help: 'Chat graphs answer conversation messages: they may hold ChatInput nodes and publish answers to the conversation.',
  },
  {
    name: 'chat', type: 'record', required: false, members: CHAT_MEMBER_SPECS, chatOnly: true,
    defaultText: 'on a Chat graph: { acceptsAttachments: false, requireRerunConfirmation: true }',
    help: 'Conversation settings of a Chat graph; refused on a Standard graph.',
  },
  {
    name: 'inputSchema', type: 'jsonSchema', required: false, example: { type: 'object', required: ['text'] },
    help: 'JSON Schema the run input must satisfy; a run started with an input that fails it is refused (400).',
  },
  {
    name: 'outputSchema', type: 'jsonSchema', required: false, example: { type: 'object' },
    help: "JSON Schema the run's output (the first End's { outcome, result }) must satisfy; otherwise the run fails ValidationFailed.",
  },
  {
    name: 'budget', type: 'record', required: false, members: BUDGET_MEMBER_SPECS, example: { maxTokens: 100_000, maxWallClockMs: 600_000 },
    help: 'Limits of every run of this definition (tokens, cost, wall-clock, attempts); a run going past one fails BudgetExceeded. A start request may set stricter ones.',
  },
  {
    name: 'concurrency', type: 'record', required: false, members: CONCURRENCY_MEMBER_SPECS,
    example: { key: 'input.customerId', limit: 2 },
    help:
      "Concurrency key (an addition to CONTRACT §1): at most `limit` live top-level runs of this definition per value of " +
      "`key` (a tenant's own); the others stay Pending (blocker concurrencyKey) and are admitted as runs of that value end.",
  },
  {
    name: 'state', type: 'record', required: false, members: STATE_MEMBER_SPECS,
    example: { reducers: { findings: 'append' }, initial: { findings: [] } },
    help:
      "Run state: a JSON object kept with the run, written by nodes' `writes`, folded by per-key reducers, read by every node " +
      'as `state` in its input document (conditions, bindings: state.findings) and by GET /v1/runs/{id}/state.',
  },
  {
    name: 'signals', type: 'object', required: false, example: { review: { schema: { type: 'object', required: ['approved'] } } },
    help:
      'Signal channels a run of this definition accepts (an addition to CONTRACT §1): channel name (1–64 of A-Z a-z 0-9 _ -) → ' +
      '{ schema? }, the JSON Schema every payload sent on it must satisfy. POST /v1/runs/{id}/signals refuses any other channel; ' +
      'a Wait node with config.signal reads one.',
  },
  {
    name: 'triggers', type: 'list', required: false, example: [{ event: 'order.*', filter: { path: 'data.total', op: 'Gte', value: 100 }, input: 'data' }],
    help:
      'Events that start a run (an addition to CONTRACT §1): up to 16 of { event, filter?, input? }. `event` is a name or a pattern ' +
      "(* for any run of characters); `filter` is an edge condition over { data, name, id, ts }; `input` is the run input's dot path " +
      'there (default data). POST /v1/events starts one run per event a definition matches.',
  },
  { name: 'nodes', type: 'list', required: true, help: 'The nodes, in document order: exactly one Start and at least one End.' },
  {
    name: 'edges', type: 'list', required: false, default: [],
    help: 'The edges, in document order (the order decides which conditional edge names the branch).',
  },
];
