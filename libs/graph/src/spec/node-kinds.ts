/**
 * Every node kind and its closed config (CONTRACT §2): each member with its type, whether
 * it is required, its default, allowed values or range, and help. The parser checks a
 * node's `config` against these lists (a member not listed is refused) and fills the
 * per-kind `maxAttempts` default from here.
 */
import type { JsonObject, NodeKind } from '../model';
import { CONDITION_MEMBER_SPECS } from './document';
import type { MemberSpec, NodeKindGroup } from './member';

/** One node kind. */
export interface NodeKindSpec {
  readonly kind: NodeKind;
  readonly group: NodeKindGroup;
  /** what the node does, one sentence */
  readonly summary: string;
  /** its output document */
  readonly output: string;
  /** default `maxAttempts` */
  readonly maxAttempts: number;
  /** the member a node card shows (a config member, or `joinPolicy`), or null */
  readonly fact: string | null;
  /** allowed only in a Chat graph */
  readonly chatOnly: boolean;
  /** its config members, closed */
  readonly config: readonly MemberSpec[];
  /** the config a new node of this kind starts with */
  readonly starter: JsonObject;
}

/** Reasoning effort vocabulary (closed). */
export const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high'] as const;

const num = (name: string, help: string): MemberSpec => ({ name, type: 'number', required: false, help });

/** `samplingOptions` members (closed; the provider's defaults apply to those left out). */
export const SAMPLING_MEMBER_SPECS: readonly MemberSpec[] = [
  num('temperature', 'Randomness of the answer; 0 is the most deterministic.'),
  num('topP', 'Nucleus sampling: sample only from the tokens holding this much probability.'),
  num('topK', 'Sample only from the K most likely tokens (servers that support it).'),
  num('minP', 'Drop tokens less likely than this fraction of the most likely one (servers that support it).'),
  num('maxOutputTokens', 'Most tokens the answer may hold.'),
  num('seed', 'Seed for providers that sample reproducibly.'),
  num('repeatPenalty', 'Penalty on repeated tokens (servers that support it).'),
  num('repeatLastN', 'How many recent tokens the repeat penalty looks at (servers that support it).'),
  num('presencePenalty', 'Penalty on tokens that already appeared at all.'),
  num('frequencyPenalty', 'Penalty on tokens in proportion to how often they appeared.'),
  num('numCtx', 'Context window size to ask the server for (servers that support it).'),
  { name: 'stop', type: 'stringOrList', required: false, help: 'Text, or a list of texts, that ends the answer.' },
];

const model: MemberSpec = {
  name: 'model', type: 'string', required: false, nonBlank: true, example: 'gpt-4o-mini',
  defaultText: "the deployment's model (LLM_MODEL, else the one model the provider lists)",
  help: 'Model to call.',
};
const inputBindings: MemberSpec = {
  name: 'inputBindings', type: 'bindings', required: false, example: { text: 'run.input.text' },
  help:
    "Named values for the model: each name maps to a dot path into the node's input document (run.input…, input.output…, " +
    'upstream.<key>.output…); they follow the prompt as an "Input data" JSON block. A path that resolves to nothing fails ' +
    'the node before the model is called.',
};
const reasoningEffort: MemberSpec = {
  name: 'reasoningEffort', type: 'enum', required: false, values: REASONING_EFFORTS, defaultText: "the provider's default",
  example: 'low', help: 'Reasoning effort asked of a reasoning model.',
};
const responseJsonSchema: MemberSpec = {
  name: 'responseJsonSchema', type: 'jsonSchema', required: false, example: { type: 'object', properties: { score: { type: 'number' } }, required: ['score'] },
  help:
    'JSON Schema the answer must follow: the provider is asked for it, and an answer that is not a JSON object matching it ' +
    'fails the attempt (retried). The parsed answer is output.json.',
};
const publishToChat: MemberSpec = {
  name: 'publishToChat', type: 'boolean', required: false, default: false, chatOnly: true, example: true,
  help: "Post the node's answer to the conversation as an assistant message (Chat graphs only).",
};
const includeAttachments: MemberSpec = {
  name: 'includeAttachments', type: 'boolean', required: false, default: false, chatOnly: true, example: true,
  help:
    "Give the model the attachments of the run's message: text files in an Attachments section, images as image " +
    'content parts (Chat graphs with chat.acceptsAttachments only).',
};
const inputBinding: MemberSpec = {
  name: 'inputBinding', type: 'dotPath', required: false, example: 'input.output',
  defaultText: "the single satisfied predecessor's output, or { <key>: <output> } over several",
  help: "Dot path into the node's input document whose value becomes the child run's input.",
};

/** A Subworkflow's or Map's pin of the child definition's version (libs/graph aliases `childVersion`). */
const childVersionMembers: MemberSpec[] = [
  {
    name: 'version', type: 'integer', required: false, min: 1, example: 3, defaultText: "none (the parent's alias, else current)",
    help:
      'A saved version of the child definition to run. Not together with alias. A version retired, never saved, or saved before versions kept ' +
      'their parsed graph fails the child (ValidationFailed) with the reason.',
  },
  {
    name: 'alias', type: 'key', required: false, example: 'current', defaultText: "the parent run's alias when the child definition has one of that name, else current",
    help: "A version alias of the child definition to run through (its weighted targets place each child). Not together with version. An alias the child definition lacks fails the child (ValidationFailed).",
  },
];

const kind = (spec: Omit<NodeKindSpec, 'maxAttempts' | 'chatOnly'> & Partial<Pick<NodeKindSpec, 'maxAttempts' | 'chatOnly'>>): NodeKindSpec => ({
  maxAttempts: 1,
  chatOnly: false,
  ...spec,
});

/** The node kinds, in palette order. */
export const NODE_KIND_SPECS: Readonly<Record<NodeKind, NodeKindSpec>> = {
  Start: kind({
    kind: 'Start', group: 'flow', fact: null, starter: {},
    summary: 'Where every run begins: the one node without inbound edges.',
    output: '{ input }: the run input.',
    config: [
      {
        name: 'inputSchema', type: 'jsonSchema', required: false, example: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
        help: 'JSON Schema the run input must satisfy; a run started with an input that fails it is refused (400).',
      },
      {
        name: 'defaultInput', type: 'json', required: false, defaultText: '{}', example: { text: 'Flowline runs graphs durably.' },
        help: 'The run input when a run is started without one; a warning when it does not satisfy inputSchema or the graph inputSchema.',
      },
    ],
  }),
  LlmCall: kind({
    kind: 'LlmCall', group: 'model', maxAttempts: 3, fact: 'model', starter: { prompt: 'Summarise the input data in one sentence.' },
    summary: 'One chat completion: a prompt, optional named input data, one answer.',
    output: '{ text, json, usage }: json is the answer parsed as a JSON object (or null); usage.reasoningTokens where the provider reports it.',
    config: [
      model,
      { name: 'systemPrompt', type: 'string', required: false, multiline: true, template: true, example: 'You write one-sentence summaries.', help: 'System message sent before the prompt.' },
      {
        name: 'prompt', type: 'string', required: true, nonBlank: true, multiline: true, template: true, example: 'Summarise the input data.',
        help: "The user message; the named input data follow it.",
      },
      inputBindings,
      reasoningEffort,
      responseJsonSchema,
      {
        name: 'samplingOptions', type: 'record', required: false, members: SAMPLING_MEMBER_SPECS, defaultText: "the provider's defaults",
        example: { temperature: 0, maxOutputTokens: 256 }, help: 'Sampling settings passed to the provider.',
      },
      publishToChat,
      includeAttachments,
    ],
  }),
  Agent: kind({
    kind: 'Agent', group: 'model', maxAttempts: 3, fact: 'tools', starter: { instructions: 'Complete the task described by the upstream outputs.' },
    summary: 'A tool-calling loop: the model calls read-only catalog tools until it answers.',
    output:
      '{ text, json, usage, toolCalls, steps, reasoning? }: steps lists its checkpointed transcript ({ step, kind: model|tool|approval|steer, name?, ok?, toolCalls?, phase? }, no prompt or result text); ' +
      'reasoning is what the model reasoned on each call, when it said (kept, and sealed, with the output).',
    config: [
      {
        name: 'instructions', type: 'string', required: false, nonBlank: true, multiline: true, template: true, example: 'Find the answer with the tools and report it.',
        defaultText: "the saved agent's (agentDefinitionId); required without one",
        help: 'The task, sent as the first user message.',
      },
      {
        name: 'agentDefinitionId', type: 'string', required: false, nonBlank: true, refersTo: 'agent',
        help:
          'A saved agent of the tenant (POST /v1/agents) whose members this node uses; the node\'s own members override them. ' +
          'Its version is pinned when the run starts.',
      },
      {
        name: 'agentVersion', type: 'integer', required: false, min: 1, defaultText: 'the latest version when the run starts', example: 2,
        help: 'The saved agent\'s version to use (with agentDefinitionId).',
      },
      model,
      {
        name: 'tools', type: 'stringList', required: false, refersTo: 'tool', itemNoun: 'tool', default: [], example: ['echo', 'json_extract'],
        help:
          'Catalog tools the model may call, each named once; a tool that needs allowedUrls cannot be offered. ' +
          'An MCP tool is named mcp:SERVER/TOOL, and mcp:SERVER/* offers every tool the server lists (POST /v1/mcp-servers).',
      },
      { name: 'maxIterations', type: 'integer', required: false, min: 1, default: 8, example: 4, help: 'Most model calls; the last one offers no tools, so the model must answer.' },
      { name: 'maxToolCalls', type: 'integer', required: false, min: 1, default: 16, example: 8, help: 'Most tool calls over the whole loop.' },
      {
        name: 'maxToolCallsPerTurn', type: 'integer', required: false, min: 1, example: 4, defaultText: 'unbounded (maxToolCalls still applies)',
        help: "Most tool calls run from one model answer; each call beyond it gets 'error: per-turn tool call limit reached' as its result.",
      },
      {
        name: 'toolApprovals', type: 'json', required: false, default: [], example: ['mcp:payments/refund', { tool: 'echo', when: { path: 'arguments.text', op: 'Exists' } }],
        help:
          'Tool calls a person approves first: a tool name (every call), or { tool, when } with when a condition over ' +
          '{ tool, arguments }. Such a call parks the node (pendingDecisionKind ToolCall); decide Approve runs it ' +
          "(payload.arguments may edit them), Reject hands the model a refusal as the tool's result.",
      },
      responseJsonSchema,
      {
        name: 'includeUpstreamOutputs', type: 'boolean', required: false, default: true, example: false,
        help:
          'Send the upstream outputs after the instructions, as an "Upstream outputs" JSON block. In a Chat graph the user\'s ' +
          'message comes first in any case, as a "Conversation request" section (with an "Attachments:" line naming the files).',
      },
      reasoningEffort,
      publishToChat,
      includeAttachments,
    ],
  }),
  Tool: kind({
    kind: 'Tool', group: 'tool', maxAttempts: 3, fact: 'toolName', starter: { toolName: 'echo' },
    summary: 'Calls one read-only tool of the catalog.',
    output: '{ result }: the tool result (JSON when the tool returned an object or array).',
    config: [
      { name: 'toolName', type: 'string', required: true, nonBlank: true, refersTo: 'tool', example: 'echo', help: 'The catalog tool to call (GET /v1/tools), or an MCP tool as mcp:SERVER/TOOL (POST /v1/mcp-servers).' },
      {
        name: 'arguments', type: 'object', required: false, default: {}, template: true, example: { text: 'hello', ids: '{{ input.output.ids }}' },
        help:
          "Arguments, checked against the tool's argument schema when it runs; a string in them that is exactly one placeholder " +
          'keeps the JSON type it names (an array stays an array).',
      },
      {
        name: 'argumentBindings', type: 'bindings', required: false, example: { text: 'run.input.text' },
        help:
          "Arguments taken from the node's input document: each name maps to a dot path; a binding wins over a literal " +
          'argument of the same name, and a path that resolves to nothing fails the attempt.',
      },
      {
        name: 'allowedUrls', type: 'stringList', required: false, format: 'httpUrl', itemNoun: 'URL', example: ['https://example.com/api/'],
        help: 'Absolute http(s) URL prefixes the tool may reach; required (non-empty) by tools that fetch URLs, refused by the others.',
      },
    ],
  }),
  Condition: kind({
    kind: 'Condition', group: 'flow', fact: 'path', starter: {},
    summary: "Routes by its out-edges' conditions; passes its predecessor's output through.",
    output: "its single predecessor's output, verbatim ({} with several predecessors).",
    config: [
      {
        name: 'path', type: 'dotPath', required: false, example: 'output.result.risky',
        help:
          "Dot path its conditional out-edges compare when they name none. It reads this node's output envelope, whose output " +
          "is the predecessor's output (e.g. output.json.score).",
      },
    ],
  }),
  Parallel: kind({
    kind: 'Parallel', group: 'flow', fact: null, starter: {},
    summary: 'A fan-out label: every satisfied out-edge starts its branch.',
    output: "its single predecessor's output, verbatim.",
    config: [
      {
        name: 'maxConcurrency', type: 'integer', required: false, min: 1, example: 2, defaultText: 'unbounded',
        help:
          'Most branches working at once. A branch is one direct successor; it works while that node is queued, running ' +
          'or waiting on a person. The others wait Pending and start in document order as places free.',
      },
    ],
  }),
  Join: kind({
    kind: 'Join', group: 'flow', fact: 'joinPolicy', starter: {},
    summary: 'A fan-in label: collects its inbound branches by its join policy.',
    output: '{ <sourceKey>: <envelope>, … } over its satisfied inbound edges.',
    config: [],
  }),
  Pause: kind({
    kind: 'Pause', group: 'human', fact: 'allowedDecisions', starter: { prompt: 'Approve this result?', allowedDecisions: ['Approve', 'Reject'] },
    summary: 'Waits for a person to decide; out-edges route on output.decision.',
    output: '{ decision, comment, payload }.',
    config: [
      { name: 'prompt', type: 'string', required: true, nonBlank: true, multiline: true, example: 'Approve the change?', help: 'The question the person sees.' },
      {
        name: 'allowedDecisions', type: 'enumList', required: true, values: ['Approve', 'Reject'], unique: true, minItems: 1, example: ['Approve', 'Reject'],
        help: 'The decisions offered; each needs an out-edge that fires on it.',
      },
      { name: 'requireComment', type: 'boolean', required: false, default: false, example: true, help: 'A decision must carry a comment.' },
      {
        name: 'approval', type: 'json', required: false,
        example: { quorums: [{ name: 'finance', scope: 'operate', min: 2 }], approveRule: 'allQuorums', rejectRule: 'any', forbid: ['initiator'], timeout: 'P2D', onTimeout: 'reject' },
        help:
          'An approval policy { quorums: [{ name, principals|scope|group, min }], approveRule, rejectRule, forbid, timeout?, onTimeout?, escalate?, notify? }. ' +
          'Each principal decides once and counts toward one quorum; the gate waits with its quorum progress until the policy settles it.',
      },
    ],
  }),
  Wait: kind({
    kind: 'Wait', group: 'flow', fact: 'for', starter: { for: 'PT1H' },
    summary: 'Parks the run until a time, a signal, a token callback or an event (or any/all of them): no worker and no run slot while it waits; it survives restarts.',
    output:
      "{ fired: 'timer', at } (at: the wake time); { fired: 'signal', channel, payload, at } (at: when the signal was sent); " +
      "{ fired: 'token', token, payload, expired, revoked, at }; { fired: 'event', event, eventId, payload, at }; a composite (any/all): " +
      '{ mode, fired: [{ index, kind, signal|token|timer|event, payload, at, expired?, revoked?, eventId? }], index, kind, payload, at } where index, kind and payload name the first entry of fired.',
    config: [
      {
        name: 'for', type: 'string', required: false, nonBlank: true, example: 'PT30M',
        help: 'How long to wait once the node is reached, an ISO-8601 duration (PT30S, PT2H, P3D, P1W; no years or months). Give one of for, until, signal, token, event, any or all.',
      },
      {
        name: 'until', type: 'string', required: false, nonBlank: true, example: '2030-01-31T09:00:00Z',
        help:
          "When to wake: an RFC 3339 timestamp, or a dot path into the node's input document (run.input.…, input.output.…) holding one. " +
          'A time already past fires at once; a path that holds no timestamp fails the node (ValidationFailed).',
      },
      {
        name: 'signal', type: 'key', required: false, example: 'review',
        help:
          "Wait for a signal on this channel (one the graph's signals declare), sent with POST /v1/runs/{id}/signals: the oldest " +
          'signal not yet consumed (and passing filter), including one sent before the node was reached.',
      },
      {
        name: 'token', type: 'object', required: false, example: { timeout: 'P1D' },
        help:
          '{ timeout, schema?, singleUse? (default true) }: mint a waitpoint token with a signed callback URL (POST /w/{tokenId}/{signature}, ' +
          'or POST /v1/waitpoints/{id}/complete with a key); its body is the payload, checked against schema. Past timeout the token expires and the arm fires with expired: true; a revoked token (DELETE /v1/waitpoints/{id}) fires it with revoked: true.',
      },
      {
        name: 'event', type: 'string', required: false, nonBlank: true, example: 'payment.settled',
        help: 'Wait for an event of this name sent to POST /v1/events after the node was reached (and passing filter); its data is the payload.',
      },
      {
        name: 'filter', type: 'condition', required: false, example: { path: 'payload.ok', op: 'Eq', value: true },
        help: 'Beside signal or event: a condition a signal (over { payload, input }) or an event (over { data, input }) must meet; input is the run input.',
      },
      {
        name: 'any', type: 'json', required: false, example: [{ timer: 'PT1H' }, { token: { timeout: 'PT1H' } }],
        help:
          'Arms, each one of { signal, filter? }, { token: { timeout, schema?, singleUse? } }, { timer: duration or timestamp }, { event, filter? }: ' +
          'the first to fire wins (a signal, token or event delivered outranks a timer due in the same tick); the others are withdrawn in the same commit.',
      },
      {
        name: 'all', type: 'json', required: false, example: [{ timer: 'PT1M' }, { timer: 'PT2M' }],
        help: 'Arms as for any: the Wait fires once every arm holds in the same tick; signals are consumed then, not before.',
      },
    ],
  }),
  End: kind({
    kind: 'End', group: 'flow', fact: 'outcome', starter: { outcome: 'done' },
    summary: "Finishes the run: the first End to succeed gives the run's output.",
    output: '{ outcome, result }.',
    config: [
      { name: 'outcome', type: 'string', required: true, nonBlank: true, example: 'approved', help: 'Names how the run ended (output.outcome).' },
      {
        name: 'resultPath', type: 'dotPath', required: false, defaultText: 'the whole input document', example: 'input.output.text',
        help: "Dot path into the node's input document whose value is output.result (null when it resolves to nothing).",
      },
      {
        name: 'outputTemplate', type: 'json', required: false, template: true, defaultText: 'none (resultPath decides output.result)',
        example: { summary: '{{ input.output.text }}', topic: '{{ run.input.topic }}' },
        help:
          'What output.result is, rendered when the End settles: a string, or an object or array of them (a string that is ' +
          'exactly one placeholder keeps its JSON type). Not together with resultPath. A render that fails fails the End (ValidationFailed).',
      },
      {
        name: 'publishToChat', type: 'boolean', required: false, chatOnly: true, example: false,
        defaultText: 'true in a Chat graph (false says so explicitly); nothing publishes in a Standard graph',
        help: "Post the run's result (output.result) to the conversation as an assistant message (Chat graphs only).",
      },
      {
        name: 'stopRun', type: 'boolean', required: false, default: false, example: true,
        help:
          "Complete the run the moment this End succeeds, with its output as the run's: work still queued, running or " +
          'waiting on a person is cancelled (cause RunCompleted) and nodes not reached stay Pending.',
      },
    ],
  }),
  ChatInput: kind({
    kind: 'ChatInput', group: 'human', fact: 'prompt', chatOnly: true, starter: { prompt: 'What would you like to change?' },
    summary: 'Waits for the next message of the conversation (Chat graphs only).',
    output: '{ decision: "Answer", text }.',
    config: [{ name: 'prompt', type: 'string', required: true, nonBlank: true, multiline: true, example: 'Anything else?', help: 'What the person is asked.' }],
  }),
  DecisionModel: kind({
    kind: 'DecisionModel', group: 'model', maxAttempts: 3, fact: 'labels', starter: { question: 'Does the input need a human review?', labels: ['yes', 'no'] },
    summary: 'A model picks one of fixed labels (temperature 0); out-edges route on output.choice.',
    output: '{ choice, confidence, probabilities?, held, provider, usage }: probabilities gives every label its probability when the provider reports the alternatives at each token (top_logprobs).',
    config: [
      { name: 'question', type: 'string', required: true, nonBlank: true, multiline: true, template: true, example: 'Is the text a complaint?', help: 'What the model decides.' },
      {
        name: 'labels', type: 'stringList', required: true, minItems: 2, maxItems: 32, maxLength: 64, unique: true, nonBlank: true, itemNoun: 'label',
        example: ['yes', 'no'], help: 'The answers to choose from: 2–32 distinct labels of at most 64 characters. An answer outside them fails the attempt.',
      },
      model,
      inputBindings,
      {
        name: 'minConfidence', type: 'number', required: false, min: 0, max: 1, example: 0.8,
        help:
          'With it, an answer less confident than this (or with no confidence) succeeds held: its out-edges wait until an ' +
          'operator retries the node or overrides an edge.',
      },
    ],
  }),
  Loop: kind({
    kind: 'Loop', group: 'child', fact: 'body', starter: { maxIterations: 3 },
    summary: 'Runs a body definition as a child run per iteration, feeding each the previous output.',
    output: '{ iterations, exitReason, last, results }.',
    config: [
      { name: 'body', type: 'string', required: true, nonBlank: true, refersTo: 'definition', help: 'Id of the definition each iteration runs.' },
      { name: 'maxIterations', type: 'integer', required: true, min: 1, max: 1000, example: 5, help: 'Most iterations (1–1000).' },
      {
        name: 'exitCondition', type: 'condition', required: false, members: CONDITION_MEMBER_SPECS, example: { path: 'output.result.done', op: 'Eq', value: true },
        help: "Stop once this holds on an iteration's envelope (its output is the body run's output).",
      },
      inputBinding,
    ],
  }),
  Subworkflow: kind({
    kind: 'Subworkflow', group: 'child', fact: 'definitionId', starter: {},
    summary: 'Runs another definition as a child run (nesting depth ≤ 5).',
    output: "the child run's output.",
    config: [
      { name: 'definitionId', type: 'string', required: true, nonBlank: true, refersTo: 'definition', help: 'Id of the definition to run.' },
      ...childVersionMembers,
      inputBinding,
      {
        name: 'inputTemplate', type: 'json', required: false, template: true, defaultText: 'none (inputBinding decides the child input)',
        example: { topic: '{{ state.topic }}', ids: '{{ input.output.result.ids }}' },
        help:
          "The child run's input, rendered when the node starts its child: a string, or an object or array of them (a string " +
          'that is exactly one placeholder keeps its JSON type). Not together with inputBinding. A render that fails fails the node (ValidationFailed).',
      },
      {
        name: 'stateIn', type: 'bindings', required: false, example: { topic: 'state.topic' },
        help:
          "Seeds the child run's state: each child state key maps to a dot path into this node's input document (state.…, " +
          "run.input.…); the values are set over the child graph's state.initial (the child graph must keep state). A path " +
          'that resolves to nothing fails the node before the child starts.',
      },
      {
        name: 'stateOut', type: 'bindings', required: false, example: { findings: 'findings' },
        help:
          "Writes the child's final state into this run's state when the child completes: each state key of this run maps to " +
          "a dot path into the child's state, folded by this run's reducers like a node's writes. A path that resolves to " +
          'nothing fails the node (ValidationFailed).',
      },
    ],
  }),
  Map: kind({
    kind: 'Map', group: 'child', fact: 'items', starter: { items: 'input.output.items' },
    summary: 'Runs another definition as a child run once per item of an array, a bounded number at a time.',
    output: '{ results, succeeded, failed, errors }: results holds each child run output in item order (null for a failed item).',
    config: [
      { name: 'definitionId', type: 'string', required: true, nonBlank: true, refersTo: 'definition', help: 'Id of the definition each item runs; its run input is the item.' },
      ...childVersionMembers,
      {
        name: 'items', type: 'dotPath', required: true, example: 'state.urls',
        help: "Dot path into the node's input document to the array to map over (state.…, run.input.…, input.output.…); anything but an array fails the node.",
      },
      {
        name: 'maxConcurrency', type: 'integer', required: false, min: 1, max: 1000, default: 8, example: 16,
        help: 'Most child runs working at once (capped by the deployment option MAP_MAX_CONCURRENCY); the next item starts as one ends.',
      },
      {
        name: 'toleratedFailures', type: 'integer', required: false, min: 0, default: 0, example: 2,
        help: 'Failed items the node tolerates; one more fails it (the children still working are cancelled). Not together with toleratedFailurePercent.',
      },
      {
        name: 'toleratedFailurePercent', type: 'number', required: false, min: 0, max: 100, example: 5,
        help: 'Failed items tolerated, as a percentage of all items; more fail the node. Not together with toleratedFailures.',
      },
    ],
  }),
};
