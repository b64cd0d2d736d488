/**
 * One small graph per validation rule and warning of the parser. The graph reference runs
 * `parseGraph` on each and prints the messages it really returns, so the page shows what a
 * user sees and cannot drift from the parser; a case that no longer produces an issue of
 * its severity stops the generator.
 */

export interface RuleCase {
  /** the section it belongs to */
  group: 'document' | 'structure' | 'node' | 'config' | 'edge' | 'graph' | 'warning';
  /** what the rule refuses (or warns about), one sentence */
  rule: string;
  graph: unknown;
  /** show only the issues keyed to this node or edge (others the small graph raises are beside the point) */
  key?: string;
  /** the tenant's definitions the parser is told exist (default: references are not judged) */
  definitions?: string[];
  /** parse with this MAX_NODES_PER_DEFINITION (default: the deployment default) */
  maxNodes?: number;
}

type Doc = Record<string, unknown>;
const start: Doc = { key: 'start', kind: 'Start' };
const end = (key = 'end', extra: Doc = {}): Doc => ({ key, kind: 'End', config: { outcome: 'done' }, ...extra });
const e = (key: string, from: string, to: string, extra: Doc = {}): Doc => ({ key, from, to, ...extra });
const when = (path: string, op: string, value?: unknown): Doc => (value === undefined ? { path, op } : { path, op, value });

/** Start → node → End, the node keyed `key`. */
function around(node: Doc, graph: Doc = {}): Doc {
  const key = node.key as string;
  return { ...graph, nodes: [start, node, end()], edges: [e('in', 'start', key), e('out', key, 'end')] };
}
const tool = (config: Doc, extra: Doc = {}) => around({ key: 'call', kind: 'Tool', config, ...extra });
const llm = (config: Doc, graph: Doc = {}) => around({ key: 'ask', kind: 'LlmCall', config: { prompt: 'Summarise.', ...config } }, graph);
/** Start → edge under test → End, plus an unconditional way out so only the edge is judged. */
function edgeCase(edge: Doc): Doc {
  return { nodes: [start, end('a'), end('b')], edges: [e('plain', 'start', 'a'), { key: 'x', from: 'start', to: 'b', ...edge }] };
}
const gate = (allowed: string[], edges: Doc[]): Doc => ({
  nodes: [start, { key: 'review', kind: 'Pause', config: { prompt: 'Ship it?', allowedDecisions: allowed } }, end('yes'), end('no')],
  // context edges: the ends also get the content from before the wait
  edges: [e('in', 'start', 'review'), e('ctx-yes', 'start', 'yes'), e('ctx-no', 'start', 'no'), ...edges],
});
const approve = when('output.decision', 'Eq', 'Approve');
const reject = when('output.decision', 'Eq', 'Reject');

export const RULE_CASES: readonly RuleCase[] = [
  // document-level refusals: reported alone
  { group: 'document', rule: 'The document is a JSON object.', graph: [] },
  { group: 'document', rule: '`nodes` is an array.', graph: { nodes: {} } },
  { group: 'document', rule: '`edges`, when present, is an array.', graph: { nodes: [start, end()], edges: {} } },
  {
    group: 'document',
    rule: 'At most `MAX_NODES_PER_DEFINITION` nodes, counted on the declared array before any node is read.',
    graph: { nodes: Array.from({ length: 201 }, () => ({})) },
  },

  // structural errors: reported alone
  { group: 'structure', rule: 'Exactly one Start: none is an error.', graph: { nodes: [end()], edges: [] } },
  {
    group: 'structure',
    rule: 'Exactly one Start: a second one is keyed to itself.',
    graph: { nodes: [start, { key: 'again', kind: 'Start' }, end()], edges: [e('a', 'start', 'end'), e('b', 'again', 'end')] },
  },
  {
    group: 'structure',
    rule: 'Nothing routes into Start.',
    graph: { nodes: [start, { key: 'mid', kind: 'Parallel' }, end()], edges: [e('a', 'start', 'mid'), e('back', 'mid', 'start'), e('c', 'mid', 'end')] },
  },
  { group: 'structure', rule: 'At least one End.', graph: { nodes: [start, { key: 'mid', kind: 'Parallel' }], edges: [e('a', 'start', 'mid')] } },
  {
    group: 'structure',
    rule: 'The graph is acyclic; the error names the cycle.',
    graph: {
      nodes: [start, { key: 'a', kind: 'Parallel' }, { key: 'b', kind: 'Parallel' }, end()],
      edges: [e('e1', 'start', 'a'), e('e2', 'a', 'b'), e('e3', 'b', 'a'), e('e4', 'b', 'end')],
    },
  },
  {
    group: 'structure',
    rule: 'Every node is reachable from Start.',
    graph: { nodes: [start, end(), end('orphan')], edges: [e('a', 'start', 'end')] },
  },

  // node members
  { group: 'node', rule: 'Node keys are 1–64 letters, digits, `_` or `-`.', graph: around({ key: 'two words', kind: 'Parallel' }) },
  {
    group: 'node',
    rule: 'Node and edge keys share one namespace; each is declared once.',
    graph: { nodes: [start, end()], edges: [e('end', 'start', 'end')] },
  },
  { group: 'node', rule: 'The kind is one of the node kinds, case-sensitive.', graph: around({ key: 'mid', kind: 'parallel' }) },
  { group: 'node', rule: '`label` is a string.', graph: around({ key: 'mid', kind: 'Parallel', label: 7 }) },
  { group: 'node', rule: '`joinPolicy` is `All`, `Any`, `First` or `{ "quorum": N }`.', graph: around({ key: 'mid', kind: 'Parallel', joinPolicy: 'Most' }) },
  { group: 'node', rule: 'A quorum is an integer of at least 2.', graph: around({ key: 'mid', kind: 'Parallel', joinPolicy: { quorum: 1 } }) },
  { group: 'node', rule: '`maxAttempts` is a positive integer.', graph: tool({ toolName: 'echo' }, { maxAttempts: 0 }) },
  { group: 'node', rule: '`timeoutSeconds` is a positive integer.', graph: tool({ toolName: 'echo' }, { timeoutSeconds: 1.5 }) },
  { group: 'node', rule: '`retryBackoff` holds only `initialMs`, `multiplier`, `maxMs`.', graph: tool({ toolName: 'echo' }, { retryBackoff: { jitter: true } }) },
  { group: 'node', rule: '`retryBackoff.multiplier` is at least 1.', graph: tool({ toolName: 'echo' }, { retryBackoff: { multiplier: 0.5 } }) },
  {
    group: 'node',
    rule: '`retryBackoff.maxMs` is at least `initialMs`.',
    graph: tool({ toolName: 'echo' }, { retryBackoff: { initialMs: 5000, maxMs: 1000 } }),
  },
  { group: 'node', rule: '`onError` is `FailRun` or `Continue`.', graph: tool({ toolName: 'echo' }, { onError: 'Ignore' }) },
  { group: 'node', rule: "A node's `inputSchema` / `outputSchema` is a JSON Schema that compiles.", graph: tool({ toolName: 'echo' }, { outputSchema: { type: 'thing' } }) },
  { group: 'node', rule: '`position` is `{ x, y }` with numbers.', graph: around({ key: 'mid', kind: 'Parallel', position: { x: '10' } }) },

  // per-kind config
  { group: 'config', rule: '`config` is an object.', graph: around({ key: 'mid', kind: 'Parallel', config: [] }) },
  { group: 'config', rule: "`config` is closed: a member the kind does not read is refused.", graph: around({ key: 'mid', kind: 'Parallel', config: { path: 'output.x' } }) },
  { group: 'config', rule: 'Required config members are present (and not null).', graph: around({ key: 'ask', kind: 'LlmCall', config: {} }) },
  { group: 'config', rule: 'A required text is not blank.', graph: llm({ prompt: '   ' }) },
  { group: 'config', rule: 'Booleans are booleans.', graph: around({ key: 'review', kind: 'Pause', config: { prompt: 'Ok?', allowedDecisions: ['Approve'], requireComment: 'yes' } }) },
  { group: 'config', rule: 'Integers respect their range.', graph: around({ key: 'loop', kind: 'Loop', config: { body: 'b7d5a3c2-0000-4000-8000-000000000000', maxIterations: 5000 } }) },
  { group: 'config', rule: 'Numbers respect their range.', graph: around({ key: 'pick', kind: 'DecisionModel', config: { question: 'Spam?', labels: ['yes', 'no'], minConfidence: 1.5 } }) },
  { group: 'config', rule: 'Enumerations take one of their values.', graph: llm({ reasoningEffort: 'max' }) },
  { group: 'config', rule: 'Decision lists hold only the decisions offered.', graph: around({ key: 'review', kind: 'Pause', config: { prompt: 'Ok?', allowedDecisions: ['Maybe'] } }) },
  { group: 'config', rule: 'String lists respect their length.', graph: around({ key: 'pick', kind: 'DecisionModel', config: { question: 'Spam?', labels: ['yes'] } }) },
  { group: 'config', rule: 'String lists hold distinct items.', graph: around({ key: 'pick', kind: 'DecisionModel', config: { question: 'Spam?', labels: ['yes', 'yes'] } }) },
  { group: 'config', rule: 'Dot paths have no wildcard, no indexing and no empty segment.', graph: { nodes: [start, { key: 'end', kind: 'End', config: { outcome: 'done', resultPath: 'input.items[0]' } }], edges: [e('a', 'start', 'end')] } },
  { group: 'config', rule: 'Bindings map names to dot paths.', graph: llm({ inputBindings: { text: 'run..input' } }) },
  { group: 'config', rule: 'JSON Schemas compile.', graph: llm({ responseJsonSchema: { type: 'object', required: 'score' } }) },
  { group: 'config', rule: 'Records (such as `samplingOptions`) are closed.', graph: llm({ samplingOptions: { temp: 0 } }) },
  { group: 'config', rule: '`publishToChat: true` only in a Chat graph.', graph: llm({ publishToChat: true }) },
  { group: 'config', rule: '`includeAttachments: true` needs a Chat graph whose `chat.acceptsAttachments` is on.', graph: llm({ includeAttachments: true }, { kind: 'Chat' }) },
  { group: 'config', rule: 'A Tool node names a tool of the catalog.', graph: tool({ toolName: 'send_email' }) },
  { group: 'config', rule: 'A tool that fetches URLs needs a non-empty `allowedUrls`.', graph: tool({ toolName: 'http_fetch', arguments: { url: 'https://example.com/' } }) },
  { group: 'config', rule: '`allowedUrls` applies only to tools that need it.', graph: tool({ toolName: 'echo', allowedUrls: ['https://example.com/'] }) },
  { group: 'config', rule: '`allowedUrls` items are absolute http(s) URLs.', graph: tool({ toolName: 'http_fetch', allowedUrls: ['example.com'] }) },
  {
    group: 'config',
    rule: 'A literal `arguments.url` sits under one of the `allowedUrls`.',
    graph: tool({ toolName: 'http_fetch', allowedUrls: ['https://example.com/api/'], arguments: { url: 'https://example.org/' } }),
  },
  {
    group: 'config',
    rule: "A Subworkflow's `definitionId` (and a Loop's `body`) names one of the tenant's definitions.",
    definitions: [],
    graph: around({ key: 'child', kind: 'Subworkflow', config: { definitionId: '0b5c8a4e-7d2f-4c1a-9e3b-6f8d2a1c4e7b' } }),
  },
  { group: 'config', rule: 'An Agent offers catalog tools only.', graph: around({ key: 'agent', kind: 'Agent', config: { instructions: 'Help.', tools: ['send_email'] } }) },
  { group: 'config', rule: 'An Agent offers each tool once.', graph: around({ key: 'agent', kind: 'Agent', config: { instructions: 'Help.', tools: ['echo', 'echo'] } }) },

  // edges and conditions
  { group: 'edge', rule: '`from` and `to` name declared nodes.', graph: { nodes: [start, end()], edges: [e('a', 'start', 'end'), e('b', 'start', 'nowhere')] } },
  { group: 'edge', rule: '`label` is a string.', graph: edgeCase({ label: 1, condition: when('status', 'Eq', 'succeeded') }) },
  { group: 'edge', rule: '`default` is a boolean.', graph: edgeCase({ default: 'yes' }) },
  { group: 'edge', rule: 'A default edge carries no condition.', graph: edgeCase({ default: true, condition: when('status', 'Eq', 'succeeded') }) },
  { group: 'edge', rule: 'A condition is an object.', graph: edgeCase({ condition: 'status == "succeeded"' }) },
  { group: 'edge', rule: 'A condition holds only `path`, `op`, `value`.', graph: edgeCase({ condition: { path: 'status', op: 'Eq', value: 'succeeded', negate: true } }) },
  { group: 'edge', rule: "A condition's path is a dot path.", graph: edgeCase({ condition: when('output.items.*', 'Exists') }) },
  {
    group: 'edge',
    rule: "A condition without a path needs a Condition source whose `config.path` it inherits (keyed to the edge).",
    graph: edgeCase({ condition: { op: 'Eq', value: 1 } }),
  },
  { group: 'edge', rule: '`op` is required.', graph: edgeCase({ condition: { path: 'status', value: 'succeeded' } }) },
  { group: 'edge', rule: '`op` is named, never a number.', graph: edgeCase({ condition: when('status', '0', 'succeeded') }) },
  { group: 'edge', rule: '`op` is one of the operators (any letter case).', graph: edgeCase({ condition: when('status', 'Like', 'succ%') }) },
  { group: 'edge', rule: 'Every operator but `Exists` / `NotExists` needs a `value`.', graph: edgeCase({ condition: { path: 'status', op: 'Eq' } }) },
  { group: 'edge', rule: '`value` is a scalar: string, number, boolean or null.', graph: edgeCase({ condition: when('output.tags', 'Eq', ['a']) }) },
  { group: 'edge', rule: 'Relational operators never compare against a boolean.', graph: edgeCase({ condition: when('output.ok', 'Gt', true) }) },

  // graph header
  { group: 'graph', rule: '`schemaVersion`, when present, is 1.', graph: { schemaVersion: 2, nodes: [start, end()], edges: [e('a', 'start', 'end')] } },
  { group: 'graph', rule: 'The graph `kind` is `Standard` or `Chat`.', graph: { kind: 'chat', nodes: [start, end()], edges: [e('a', 'start', 'end')] } },
  { group: 'graph', rule: 'A `chat` block only on a Chat graph.', graph: { chat: { acceptsAttachments: true }, nodes: [start, end()], edges: [e('a', 'start', 'end')] } },
  { group: 'graph', rule: 'The `chat` block is closed.', graph: { kind: 'Chat', chat: { maxTurns: 3 }, nodes: [start, end()], edges: [e('a', 'start', 'end')] } },
  { group: 'graph', rule: "The `chat` block's members are booleans.", graph: { kind: 'Chat', chat: { acceptsAttachments: 'yes' }, nodes: [start, end()], edges: [e('a', 'start', 'end')] } },
  { group: 'graph', rule: "The graph's `inputSchema` / `outputSchema` compiles.", graph: { inputSchema: 'object', nodes: [start, end()], edges: [e('a', 'start', 'end')] } },

  // whole-graph rules
  {
    group: 'graph',
    rule: 'At most one unconditional edge per (from, to) pair.',
    graph: { nodes: [start, end()], edges: [e('a', 'start', 'end'), e('b', 'start', 'end')] },
  },
  {
    group: 'graph',
    rule: 'At most one default edge per source node.',
    graph: {
      nodes: [start, { key: 'route', kind: 'Condition', config: { path: 'output.input.n' } }, end('big'), end('a'), end('b')],
      edges: [e('in', 'start', 'route'), e('gt10', 'route', 'big', { condition: { op: 'Gt', value: 10 } }), e('d1', 'route', 'a', { default: true }), e('d2', 'route', 'b', { default: true })],
    },
  },
  { group: 'graph', rule: 'Every node but an End has an out-edge.', graph: { nodes: [start, end(), { key: 'dead', kind: 'Parallel' }], edges: [e('a', 'start', 'end'), e('b', 'start', 'dead')] } },
  {
    group: 'graph',
    rule: 'Nothing leaves an End.',
    graph: { nodes: [start, end('first'), end('second')], edges: [e('a', 'start', 'first'), e('b', 'first', 'second')] },
  },
  { group: 'graph', rule: '`joinPolicy: "Any"` needs at least two inbound edges.', graph: around({ key: 'mid', kind: 'Parallel', joinPolicy: 'Any' }) },
  { group: 'graph', rule: 'A quorum is at most the number of inbound edges.', graph: around({ key: 'mid', kind: 'Parallel', joinPolicy: { quorum: 2 } }) },
  { group: 'graph', rule: 'A Condition has at least two out-edges.', graph: around({ key: 'route', kind: 'Condition' }) },
  {
    group: 'graph',
    rule: 'A Condition has at most one unconditional out-edge.',
    graph: { nodes: [start, { key: 'route', kind: 'Condition' }, end('a'), end('b')], edges: [e('in', 'start', 'route'), e('x', 'route', 'a'), e('y', 'route', 'b')] },
  },
  { group: 'graph', rule: 'Every decision a Pause offers has an out-edge that fires on it.', key: 'review', graph: gate(['Approve', 'Reject'], [e('ok', 'review', 'yes', { condition: approve })]) },
  {
    group: 'graph',
    rule: 'A ChatInput only in a Chat graph.',
    graph: around({ key: 'ask', kind: 'ChatInput', config: { prompt: 'Anything else?' } }),
  },
  {
    group: 'graph',
    rule: 'A ChatInput has an unconditional (or default) out-edge.',
    graph: {
      kind: 'Chat',
      nodes: [start, { key: 'ask', kind: 'ChatInput', config: { prompt: 'More?' } }, end()],
      edges: [e('in', 'start', 'ask'), e('out', 'ask', 'end', { condition: when('output.text', 'Eq', 'yes') })],
    },
  },

  {
    group: 'graph',
    rule: 'A node, edge or graph member outside the format is refused (a definition saved before this rule keeps loading).',
    graph: around({ key: 'mid', kind: 'Parallel', color: 'red' }),
  },

  // warnings: never refuse
  {
    group: 'warning',
    rule: 'A node whose every inbound edge leaves a Pause or ChatInput receives the decision, not the content before the wait.',
    graph: {
      nodes: [start, { key: 'draft', kind: 'Tool', config: { toolName: 'echo' } }, { key: 'review', kind: 'Pause', config: { prompt: 'Ok?', allowedDecisions: ['Approve'] } }, { key: 'publish', kind: 'Tool', config: { toolName: 'echo' } }, end()],
      edges: [e('a', 'start', 'draft'), e('b', 'draft', 'review'), e('c', 'review', 'publish'), e('d', 'publish', 'end')],
    },
  },
  {
    group: 'warning',
    rule: 'A `responseJsonSchema` a strict structured-output provider would not enforce as written.',
    graph: llm({ responseJsonSchema: { type: 'object', properties: { score: { type: 'number', minimum: 0 } } } }),
  },
  {
    group: 'warning',
    rule: "A Start `defaultInput` that does not satisfy the Start's `inputSchema`.",
    graph: { nodes: [{ key: 'start', kind: 'Start', config: { inputSchema: { type: 'object', required: ['text'] }, defaultInput: {} } }, end()], edges: [e('a', 'start', 'end')] },
  },
  {
    group: 'warning',
    rule: "A Start `defaultInput` that does not satisfy the graph's `inputSchema` (a run start checks both).",
    graph: { inputSchema: { type: 'object', required: ['text'] }, nodes: [{ key: 'start', kind: 'Start', config: { defaultInput: { note: 'x' } } }, end()], edges: [e('a', 'start', 'end')] },
  },
  { group: 'warning', rule: 'A condition path that does not start at an envelope member never matches.', graph: edgeCase({ condition: when('json.score', 'Gt', 1) }) },
  {
    group: 'warning',
    rule: 'An `Eq` on a decision or choice the source cannot produce never fires.',
    key: 'typo',
    graph: gate(['Approve', 'Reject'], [e('to-yes', 'review', 'yes', { condition: approve }), e('to-no', 'review', 'no', { condition: reject }), e('typo', 'review', 'no', { condition: when('output.decision', 'Eq', 'approve') })]),
  },
  {
    group: 'warning',
    rule: 'A `First` or quorum join does not cancel a source that also feeds other nodes.',
    graph: {
      nodes: [start, { key: 'a', kind: 'Tool', config: { toolName: 'echo' } }, { key: 'b', kind: 'Tool', config: { toolName: 'echo' } }, { key: 'first', kind: 'Join', joinPolicy: 'First' }, end(), end('audit')],
      edges: [e('e1', 'start', 'a'), e('e2', 'start', 'b'), e('e3', 'a', 'first'), e('e4', 'b', 'first'), e('e5', 'first', 'end'), e('e6', 'b', 'audit')],
    },
  },
  {
    group: 'warning',
    rule: 'An `All` join over mutually exclusive branches of one router is always skipped.',
    graph: {
      nodes: [start, { key: 'route', kind: 'Condition', config: { path: 'output.input.n' } }, { key: 'low', kind: 'Tool', config: { toolName: 'echo' } }, { key: 'high', kind: 'Tool', config: { toolName: 'echo' } }, { key: 'both', kind: 'Join' }, end()],
      edges: [
        e('in', 'start', 'route'),
        e('lo', 'route', 'low', { condition: { op: 'Lt', value: 10 } }),
        e('hi', 'route', 'high', { condition: { op: 'Gte', value: 10 } }),
        e('j1', 'low', 'both'),
        e('j2', 'high', 'both'),
        e('out', 'both', 'end'),
      ],
    },
  },
  {
    group: 'warning',
    rule: 'An Agent cannot carry the `allowedUrls` a URL-fetching tool needs, so that tool is not offered.',
    graph: around({ key: 'agent', kind: 'Agent', config: { instructions: 'Look it up.', tools: ['http_fetch'] } }),
  },
];
