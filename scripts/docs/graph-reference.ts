/**
 * docs/reference/graph.md: every graph, node, edge and condition member, every node kind
 * with its config, the condition operators with computed examples, every validation rule
 * and warning with the message the parser returns, and the built-in tools. Written from
 * the member descriptions of `@flowline/graph`, its evaluator and its parser, so the page
 * cannot disagree with them.
 */
import {
  BUDGET_MEMBER_SPECS,
  CHAT_MEMBER_SPECS,
  CONDITION_MEMBER_SPECS,
  CONDITION_OPS,
  DEFAULT_CORE_OPTIONS,
  EDGE_MEMBER_SPECS,
  GRAPH_MEMBER_SPECS,
  NODE_KINDS,
  NODE_KIND_SPECS,
  NODE_MEMBER_SPECS,
  RETRY_BACKOFF_MEMBER_SPECS,
  SAMPLING_MEMBER_SPECS,
  evaluateCondition,
  parseGraph,
  parseJsonExact,
  type ConditionOp,
  type Issue,
  type MemberSpec,
  type OutputEnvelope,
  type Scalar,
  type ToolCatalog,
} from '@flowline/graph';
import { createToolRegistry, type ToolCatalogEntry } from '@flowline/tools';
import { RULE_CASES, type RuleCase } from './graph-cases';
import { code, fence, generatedBanner, json, page, table } from './markdown';

/** Where a member list is described, for links from type cells. */
const RECORD_ANCHORS: Record<string, string> = {
  retryBackoff: '#retrybackoff',
  samplingOptions: '#samplingoptions',
  chat: '#chat-block',
  budget: '#budget-block',
};

function rangeOf(m: MemberSpec): string {
  const { min, max } = m;
  if (min !== undefined && max !== undefined) return min === max ? ` = ${min}` : ` from ${min} to ${max}`;
  if (min !== undefined) return ` ≥ ${min}`;
  if (max !== undefined) return ` ≤ ${max}`;
  return '';
}

/** The type column: what the member holds, its values or range. */
export function typeText(m: MemberSpec): string {
  const values = (m.values ?? []).map(code).join(', ');
  switch (m.type) {
    case 'string':
      return m.nonBlank === true ? 'string, not blank' : 'string';
    case 'key':
      return "key: 1–64 of `A–Z a–z 0–9 _ -`";
    case 'boolean':
      return 'boolean';
    case 'integer':
    case 'number':
      return `${m.type}${rangeOf(m)}`;
    case 'enum':
      return `one of ${values}`;
    case 'enumList':
      return `non-empty list of distinct ${values}`;
    case 'stringList': {
      const parts = [m.format === 'httpUrl' ? 'list of absolute http(s) URL prefixes' : 'list of strings'];
      if (m.minItems !== undefined && m.maxItems !== undefined) parts.push(`${m.minItems}–${m.maxItems} items`);
      else if (m.minItems !== undefined) parts.push(`at least ${m.minItems}`);
      if (m.maxLength !== undefined) parts.push(`each ≤ ${m.maxLength} characters`);
      if (m.nonBlank === true) parts.push('none blank');
      if (m.unique === true) parts.push('distinct');
      return parts.join(', ');
    }
    case 'stringOrList':
      return 'string or list of strings';
    case 'dotPath':
      return 'dot path (`a.b.c`)';
    case 'bindings':
      return 'object: name → dot path';
    case 'jsonSchema':
      return 'JSON Schema';
    case 'json':
      return 'any JSON';
    case 'object':
      return 'object';
    case 'scalar':
      return 'string, number, boolean or null';
    case 'condition':
      return '[condition](#conditions) `{ path?, op, value? }`';
    case 'record':
      return RECORD_ANCHORS[m.name] ? `object, see [${m.name}](${RECORD_ANCHORS[m.name]})` : 'object';
    case 'joinPolicy':
      return '`"All"`, `"Any"`, `"First"` or `{ "quorum": N }`';
    case 'position':
      return '`{ x, y }`, numbers';
    case 'list':
      return 'list';
  }
}

function defaultOf(m: MemberSpec): string {
  if (m.required) return 'required';
  if (m.default !== undefined) return json(m.default);
  return m.defaultText ?? 'none';
}

/** Examples for the members whose description carries none (a definition id, the lists). */
const FALLBACK_EXAMPLES: Record<string, string> = {
  schemaVersion: '`1`',
  kind: '`"Chat"`',
  chat: '`{"acceptsAttachments":true}`',
  nodes: 'see [Nodes](#nodes)',
  edges: 'see [Edges](#edges)',
  config: 'see [Node kinds](#node-kinds)',
  sourceHandle: '`"out"`',
};
const DEFINITION_ID_EXAMPLE = '`"0b5c8a4e-7d2f-4c1a-9e3b-6f8d2a1c4e7b"`';

function exampleOf(m: MemberSpec): string {
  if (m.example !== undefined) return json(m.example);
  if (m.refersTo === 'definition') return DEFINITION_ID_EXAMPLE;
  return FALLBACK_EXAMPLES[m.name] ?? '';
}

function meaningOf(m: MemberSpec): string {
  const notes: string[] = [];
  if (m.refersTo === 'definition') notes.push('Names a definition id (`GET /v1/definitions`).');
  if (m.template === true) notes.push('A [template](../concepts.md#templates) over `input`, `state`, `upstream` and `run`.');
  if (m.chatOnly === true) notes.push('Chat graphs only.');
  return [m.help, ...notes].join(' ');
}

function memberTable(list: readonly MemberSpec[], withExample = true): string {
  const head = ['member', 'type', 'default', 'meaning', ...(withExample ? ['example'] : [])];
  return table(
    head,
    list.map((m) => [code(m.name), typeText(m), defaultOf(m), meaningOf(m), ...(withExample ? [exampleOf(m)] : [])]),
  );
}

function kindSection(kind: (typeof NODE_KINDS)[number]): string {
  const s = NODE_KIND_SPECS[kind];
  const facts = [
    `- Output: ${s.output}`,
    `- Default \`maxAttempts\`: ${s.maxAttempts}`,
    s.chatOnly ? '- Allowed only in a Chat graph.' : null,
  ].filter((l): l is string => l !== null);
  const example = { key: kind.toLowerCase(), kind, ...(Object.keys(s.starter).length > 0 ? { config: s.starter } : {}) };
  return page([
    `### ${kind}`,
    s.summary,
    facts.join('\n'),
    s.config.length === 0 ? '`config` takes no member: an empty object (or none).' : memberTable(s.config),
    'A new node of this kind starts as:',
    fence('json', JSON.stringify(example, null, 2)),
  ]).trimEnd();
}

/** Condition examples: the envelope's `output`, the condition, and the evaluator's verdict. */
const CONDITION_EXAMPLES: ReadonlyArray<{ output: string; path: string; op: ConditionOp; value?: string; why: string }> = [
  { output: '{ "score": 0.8 }', path: 'output.score', op: 'Gte', value: '0.5', why: 'numbers compare by value' },
  { output: '{ "n": 9007199254740993 }', path: 'output.n', op: 'Gt', value: '9007199254740992', why: 'integers of any size compare exactly (2^53 + 1 > 2^53)' },
  { output: '{ "x": 0.1000000000000000055511151231257827 }', path: 'output.x', op: 'Gt', value: '0.1', why: 'decimals compare by their decimal text, exactly' },
  { output: '{ "x": 1e-7 }', path: 'output.x', op: 'Lt', value: '0.000001', why: 'an exponent form falls back to a double comparison' },
  { output: '{ "n": 5 }', path: 'output.n', op: 'Eq', value: '5.0', why: '5 and 5.0 are the same number' },
  { output: '{ "n": "5" }', path: 'output.n', op: 'Eq', value: '5', why: 'a string is never equal to a number (type mismatch)' },
  { output: '{ "n": "5" }', path: 'output.n', op: 'Ne', value: '5', why: 'a type mismatch is false for Ne too' },
  { output: '{ "name": "Zed" }', path: 'output.name', op: 'Lt', value: '"abe"', why: 'strings compare by UTF-16 code unit: "Z" sorts before "a"' },
  { output: '{ "name": "abe" }', path: 'output.name', op: 'Eq', value: '"Abe"', why: 'string comparison is case-sensitive' },
  { output: '{ "ok": true }', path: 'output.ok', op: 'Eq', value: 'true', why: 'booleans support Eq and Ne' },
  { output: '{ "v": null }', path: 'output.v', op: 'Eq', value: 'null', why: 'null equals null' },
  { output: '{ "v": null }', path: 'output.v', op: 'Exists', why: 'a member holding null exists' },
  { output: '{}', path: 'output.v', op: 'NotExists', why: 'a missing path is true only for NotExists' },
  { output: '{}', path: 'output.v', op: 'Ne', value: '1', why: 'a missing path is false for every other operator' },
  { output: '{ "items": [1, 2] }', path: 'output.items', op: 'Eq', value: '1', why: 'arrays and objects match no comparison' },
  { output: '{ "decision": "Approve" }', path: 'output.decision', op: 'Eq', value: '"Approve"', why: 'the usual route out of a Pause' },
];

function conditionSection(): string {
  const rows = CONDITION_EXAMPLES.map((x) => {
    const envelope = parseJsonExact(`{"status":"succeeded","attempt":1,"branch":null,"output":${x.output}}`) as OutputEnvelope;
    const value = x.value === undefined ? null : (parseJsonExact(x.value) as Scalar);
    const fires = evaluateCondition({ path: x.path, op: x.op, value }, envelope);
    const cond = x.value === undefined ? `${x.path} ${x.op}` : `${x.path} ${x.op} ${x.value}`;
    return [code(x.output), code(cond), fires ? '**fires**' : 'does not fire', x.why];
  });
  return page([
    '## Conditions',
    'An edge condition (and a Loop\'s `exitCondition`) is evaluated against the **source node\'s output envelope** ' +
      '`{ status, attempt, branch, output, error? }` (see [Concepts](../concepts.md#documents-and-envelopes)). It fails closed: ' +
      'a path that resolves to nothing, or a value of another type, never fires — except `NotExists`, which fires exactly when the path is missing.',
    memberTable(CONDITION_MEMBER_SPECS),
    '### Operators',
    table(
      ['operator', 'fires when the value at `path`…'],
      [
        ['`Eq`', 'equals `value` (same type: number, string, boolean or null)'],
        ['`Ne`', 'has the same type as `value` and differs from it'],
        ['`Gt` `Gte` `Lt` `Lte`', 'is a number (or a string) ordered after / at or after / before / at or before `value` of the same type; never against a boolean'],
        ['`Exists`', 'is present, `null` included; takes no `value`'],
        ['`NotExists`', 'is missing; takes no `value`'],
      ],
    ),
    `Operator names are case-insensitive (\`gte\` reads as \`Gte\`); numeric tokens such as \`"0"\` are refused. The operators are ${CONDITION_OPS.map(code).join(', ')}.`,
    [
      '- **Paths** are dot paths (`output.json.score`): no wildcard, no indexing, no empty segment; they walk own members of objects only (arrays are never indexed).',
      '- **Numbers** compare exactly: integers of any size as integers, decimals by their decimal text; only exponent forms (`1e-7`) fall back to doubles, and two that no double tells apart (both beyond its range, like `1e400` and `1e401`) are ordered by their written digits and exponent.',
      '- **Strings** compare ordinally, by UTF-16 code unit (not by locale).',
      '- **Booleans and null** take `Eq` and `Ne` only.',
      '- A pathless condition on an out-edge of a Condition node reads that node\'s `config.path`.',
    ].join('\n'),
    'Each row below is evaluated by the engine\'s own evaluator when this page is generated:',
    table(['`output` of the source', 'condition', 'verdict', 'why'], rows),
  ]).trimEnd();
}

async function parserTools(): Promise<{ catalog: ToolCatalogEntry[]; parser: ToolCatalog }> {
  const registry = await createToolRegistry({ testTools: false });
  return { catalog: registry.catalog(), parser: registry.asParserCatalog() };
}

const GROUP_TITLES: Record<RuleCase['group'], string> = {
  document: 'Document',
  structure: 'Structure',
  graph: 'Graph members and whole-graph rules',
  node: 'Node members',
  config: 'Node config',
  edge: 'Edges and conditions',
  warning: 'Warnings',
};

function issuesOf(c: RuleCase, tools: ToolCatalog): Issue[] {
  const r = parseGraph(c.graph, {
    maxNodes: c.maxNodes ?? DEFAULT_CORE_OPTIONS.maxNodesPerDefinition,
    tools,
    ...(c.definitions ? { definitions: new Set(c.definitions) } : {}),
  });
  const all = c.group === 'warning' ? r.warnings : r.ok ? [] : r.errors;
  const wanted = c.key === undefined ? all : all.filter((i) => i.key === c.key);
  if (wanted.length === 0 || (c.group === 'warning' && !r.ok)) {
    const got = JSON.stringify(r.ok ? { warnings: r.warnings } : { errors: r.errors, warnings: r.warnings });
    throw new Error(`graph reference: the case "${c.rule}" no longer produces ${c.group === 'warning' ? 'a warning (and no error)' : 'an error'}; the parser answered ${got}. Update scripts/docs/graph-cases.ts.`);
  }
  return wanted;
}

function rulesSection(tools: ToolCatalog): string {
  const groups = Object.keys(GROUP_TITLES) as RuleCase['group'][];
  const blocks = groups.map((g) => {
    const rows = RULE_CASES.filter((c) => c.group === g).flatMap((c) =>
      issuesOf(c, tools).map((i, n) => [n === 0 ? c.rule : '〃', i.key === null ? '`null`' : code(i.key), i.message]),
    );
    return page([`### ${GROUP_TITLES[g]}`, table(['rule', 'key', 'message'], rows)]).trimEnd();
  });
  return page([
    '## Validation rules and warnings',
    'Saving a definition (`POST /v1/definitions`, `PUT /v1/definitions/{id}`), validating one (`POST /v1/definitions/validate`) and ' +
      '`npx flowline definitions validate|describe <file>` run the same parser. Errors refuse the graph and come back all at once as ' +
      '`{ key, message }` (the key names the node or edge, or is `null` for the whole graph); warnings never refuse. Document-level ' +
      'problems and structural errors (Start, End, cycles, reachability) are reported alone: the other rules are judged only once the ' +
      'structure holds. Optional members may be `null`, which reads as absent.',
    'Each message below is what the parser returns for a small graph breaking that one rule (the graphs are in `scripts/docs/graph-cases.ts`).',
    ...blocks,
  ]).trimEnd();
}

function toolsSection(catalog: ToolCatalogEntry[]): string {
  return page([
    '## Built-in tools',
    'What a Tool node may name (and an Agent may offer) in every deployment; `GET /v1/tools` lists these plus the tools of ' +
      '`TOOL_MODULES` (see [Writing a tool module](../guides/tool-modules.md)). Tools are read-only; an Agent\'s `toolApprovals` may still ask a person before a call.',
    table(
      ['tool', 'what it does', 'arguments (JSON Schema)', 'needs `allowedUrls`'],
      catalog.map((t) => [code(t.name), t.description, json(t.argumentsSchema), t.requiresAllowedUrls ? 'yes' : 'no']),
    ),
  ]).trimEnd();
}

/** The whole page. */
export async function renderGraphReference(): Promise<string> {
  const tools = await parserTools();
  return page([
    generatedBanner('the member descriptions, evaluator and parser of `@flowline/graph` (`libs/graph/src/spec`) and `scripts/docs/graph-cases.ts`'),
    '# Graph reference',
    'A graph document is JSON: a `nodes` list and an `edges` list, plus a few optional members. This page lists every member ' +
      'the format has, every node kind and its `config`, how conditions compare, and every message validation can return. ' +
      'For what the pieces mean together, read [Concepts](../concepts.md) first.',
    '- [Graph document](#graph-document) · [Nodes](#nodes) · [Node kinds](#node-kinds) · [Edges](#edges) · [Conditions](#conditions) · ' +
      '[Validation rules and warnings](#validation-rules-and-warnings) · [Built-in tools](#built-in-tools)',
    '## Graph document',
    memberTable(GRAPH_MEMBER_SPECS),
    '### chat block',
    memberTable(CHAT_MEMBER_SPECS, false),
    '### budget block',
    'Limits of a whole run. A start request (`POST /v1/definitions/{id}/runs`) may carry a `budget` of the same shape; ' +
      "per member the stricter of the two applies. A run that goes past one (at the limit is within it) fails with class " +
      '`BudgetExceeded` and a reason naming the budget and the figures, e.g. `budget maxTokens 1000 exceeded: 1234 tokens used`; ' +
      'its live work is cancelled. Usage reads on the run summary as `usage`.',
    memberTable(BUDGET_MEMBER_SPECS, false),
    '## Nodes',
    'Members every node may carry, whatever its kind:',
    memberTable(NODE_MEMBER_SPECS),
    '### retryBackoff',
    memberTable(RETRY_BACKOFF_MEMBER_SPECS, false),
    '## Node kinds',
    table(
      ['kind', 'what it does', 'default `maxAttempts`'],
      NODE_KINDS.map((k) => [`[${k}](#${k.toLowerCase()})`, NODE_KIND_SPECS[k].summary, String(NODE_KIND_SPECS[k].maxAttempts)]),
    ),
    ...NODE_KINDS.map(kindSection),
    '### samplingOptions',
    "An LlmCall's `samplingOptions` (closed; the provider's defaults apply to the members left out):",
    memberTable(SAMPLING_MEMBER_SPECS, false),
    '## Edges',
    memberTable(EDGE_MEMBER_SPECS),
    conditionSection(),
    rulesSection(tools.parser),
    toolsSection(tools.catalog),
  ]);
}
