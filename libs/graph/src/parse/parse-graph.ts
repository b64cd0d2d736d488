/**
 * parseGraph: the one entry point from a graph document (any JSON value) to a Graph.
 * Parsing is the validation (CONTRACT §1.4, §8): document-level refusals and structural
 * errors are reported alone; otherwise every accumulated error is returned at once.
 * Never throws.
 */
import { parseEventTriggers, type EventTrigger } from '../triggers/event-triggers';
import type { Graph, GraphKind, GraphNode, Issue, JsonObject, StateSpec } from '../model';
import { parseBudget } from '../budget/budget';
import { checkBudgetReach } from './budget-reach';
import type { RunBudget } from '../budget/budget';
import { CHAT_MEMBER_SPECS, GRAPH_MEMBER_SPECS, MAX_CONCURRENCY_LIMIT } from '../spec/document';
import { isValidPath } from '../conditions/path';
import { schemaObject } from './member-check';
import { waitSignalChannels } from '../wait/wait-config';
import { parseEdge } from './edge';
import { definitionReferenceOf, isNodeKind, parseNode } from './node';
import type { GraphContext } from './node';
import { checkGraphRules } from './rules';
import { checkTemplates } from './templates';
import type { RuleEdge } from './rules';
import { readSkeleton, structuralErrors } from './structure';
import type { GraphValidation, ParseOptions, ParseResult } from './types';
import { Issues, KEY_PATTERN, hasOwn, isObject, present, q, typeName } from './util';
import { collectWarnings } from './warnings';
import { checkConflictWriters, keepsState, parseStateBlock } from '../state/parse-state';

const GRAPH_MEMBERS: ReadonlySet<string> = new Set(GRAPH_MEMBER_SPECS.map((m) => m.name));
/** A Chat graph's `chat` block when absent, and the value of each member left out. */
const CHAT_DEFAULTS = Object.fromEntries(CHAT_MEMBER_SPECS.map((m) => [m.name, m.default as boolean])) as NonNullable<Graph['chat']>;

/**
 * Parse and validate a graph document. `opts.maxNodes` is checked against the declared
 * length of `nodes` before any node is read; `opts.tools` is the catalog Tool nodes
 * (and Agent `tools`) may name.
 */
export function parseGraph(doc: unknown, opts: ParseOptions): ParseResult {
  try {
    return parseUnchecked(doc, opts);
  } catch (err) {
    const detail = err instanceof RangeError ? 'the document is too deeply nested' : err instanceof Error ? err.message : String(err);
    return { ok: false, errors: [{ key: null, message: `the graph could not be validated: ${detail}` }], warnings: [] };
  }
}

/**
 * The definition ids a graph document names (Subworkflow `config.definitionId`, Loop
 * `config.body`), each once, as written; read from the raw document so a caller can look
 * them all up in one query before {@link parseGraph} judges them (`opts.definitions`).
 */
export function definitionReferences(doc: unknown): string[] {
  const nodes = isObject(doc) && hasOwn(doc, 'nodes') && Array.isArray(doc.nodes) ? doc.nodes : [];
  const refs = new Set<string>();
  for (const n of nodes) {
    if (!isObject(n)) continue;
    const ref = definitionReferenceOf(hasOwn(n, 'kind') ? n.kind : undefined, hasOwn(n, 'config') ? n.config : undefined);
    if (ref !== null) refs.add(ref);
  }
  return [...refs];
}

/** The validate route's answer: `valid` is true when there is no error (warnings never refuse). */
export function validateGraph(doc: unknown, opts: ParseOptions): GraphValidation {
  const r = parseGraph(doc, opts);
  return r.ok ? { valid: true, errors: [], warnings: r.warnings } : { valid: false, errors: r.errors, warnings: r.warnings };
}

function fail(errors: Issue[], warnings: Issue[] = []): ParseResult {
  return { ok: false, errors, warnings };
}

function parseUnchecked(doc: unknown, opts: ParseOptions): ParseResult {
  if (!isObject(doc)) return fail([{ key: null, message: `a graph must be a JSON object, not ${typeName(doc)}` }]);
  const rawNodes = hasOwn(doc, 'nodes') ? doc.nodes : undefined;
  if (Array.isArray(rawNodes) && rawNodes.length > opts.maxNodes) {
    return fail([{ key: null, message: `the graph declares ${rawNodes.length} nodes; at most ${opts.maxNodes} are allowed` }]);
  }
  if (!Array.isArray(rawNodes)) return fail([{ key: null, message: `'nodes' must be an array, not ${typeName(rawNodes)}` }]);
  const rawEdgesMember = hasOwn(doc, 'edges') ? doc.edges : undefined;
  if (rawEdgesMember !== undefined && rawEdgesMember !== null && !Array.isArray(rawEdgesMember)) {
    return fail([{ key: null, message: `'edges' must be an array, not ${typeName(rawEdgesMember)}` }]);
  }
  const rawEdges: unknown[] = Array.isArray(rawEdgesMember) ? rawEdgesMember : [];

  const structural = structuralErrors(readSkeleton(rawNodes, rawEdges));
  if (structural.length > 0) return fail(structural);

  const out = new Issues();
  // Documents are closed: a member the contract does not know is refused (a typo such as
  // `maxAtempts` would otherwise be dropped silently); a stored document re-parsed keeps loading.
  const unknownMember = (key: string | null, what: string): void => {
    if (opts.stored === true) out.warn(key, `${what} is not part of the graph contract and is ignored`);
    else out.error(key, `${what} is not part of the graph contract`);
  };
  const header = parseHeader(doc, out);
  const ctx: GraphContext = {
    kind: header.kind,
    acceptsAttachments: header.chat?.acceptsAttachments === true,
    tools: opts.tools,
    definitions: opts.definitions,
    mcp: opts.mcp,
    agents: opts.agents,
  };

  // Keys: one namespace for nodes and edges; the first declaration wins. A key outside
  // the charset is an error but still identifies its element, so the rules judge it too.
  const used = new Map<string, string>();
  const claim = (raw: Record<string, unknown>, what: 'node' | 'edge', index: number): { key: string; duplicate: boolean } | null => {
    const key = hasOwn(raw, 'key') ? raw.key : undefined;
    if (typeof key !== 'string') {
      out.error(null, `${what}s[${index}].key must be a string, not ${typeName(key)}`);
      return null;
    }
    if (!KEY_PATTERN.test(key)) {
      out.error(key, `${what} key ${JSON.stringify(key)} must be 1–64 characters of letters, digits, '_' and '-'`);
    }
    const prior = used.get(key);
    if (prior !== undefined) {
      out.error(key, `key ${q(key)} is declared more than once (already used by a ${prior}); node and edge keys share one namespace`);
      return { key, duplicate: true };
    }
    used.set(key, what);
    return { key, duplicate: false };
  };

  const nodes: GraphNode[] = [];
  const declared = new Set<string>();
  /** Condition nodes whose own config.path is invalid (reported on the node alone). */
  const brokenPaths = new Set<string>();
  rawNodes.forEach((raw, i) => {
    if (!isObject(raw)) {
      out.error(null, `nodes[${i}] must be an object, not ${typeName(raw)}`);
      return;
    }
    const id = claim(raw, 'node', i);
    if (id !== null) declared.add(id.key);
    const kind = hasOwn(raw, 'kind') ? raw.kind : undefined;
    if (!isNodeKind(kind)) {
      out.error(id?.key ?? null, `node kind ${JSON.stringify(kind) ?? typeName(kind)} is not one of the node kinds (case-sensitive)`);
      return;
    }
    // A second declaration of a key is reported once (above) and not judged further.
    if (id === null || id.duplicate) return;
    const key = id.key;
    const p = parseNode(raw, key, kind, ctx);
    for (const e of p.errors) out.error(key, `${kind} ${q(key)}: ${e}`);
    for (const m of p.unknownMembers) unknownMember(key, `${kind} ${q(key)}: node member '${m}'`);
    for (const w of p.warnings) out.warn(key, `${kind} ${q(key)}: ${w}`);
    if (p.node !== null) nodes.push(p.node);
    if (kind === 'Condition' && p.node !== null && !hasOwn(p.node.config, 'path') && isObject(raw.config) && present(raw.config.path)) {
      brokenPaths.add(key);
    }
  });
  const byKey = new Map(nodes.map((n) => [n.key, n] as const));

  // Rules see every edge between declared nodes (so a node whose kind failed still counts
  // as a successor); warnings and the graph see edges between parsed nodes only.
  const ruleEdges: RuleEdge[] = [];
  const parsedEdges: RuleEdge[] = [];
  rawEdges.forEach((raw, i) => {
    if (!isObject(raw)) {
      out.error(null, `edges[${i}] must be an object, not ${typeName(raw)}`);
      return;
    }
    const key = claim(raw, 'edge', i)?.key ?? null;
    const p = parseEdge(raw, key ?? `edges[${i}]`, byKey, declared, brokenPaths);
    const name = key === null ? `#${i}` : q(key);
    for (const e of p.errors) out.error(key, `edge ${name}: ${e}`);
    for (const m of p.unknownMembers) unknownMember(key, `edge ${name}: edge member '${m}'`);
    for (const w of p.warnings) out.warn(key, `edge ${name}: ${w}`);
    if (p.edge === null) return;
    const re = { edge: p.edge, conditional: p.conditional };
    ruleEdges.push(re);
    if (byKey.has(p.edge.from) && byKey.has(p.edge.to)) parsedEdges.push(re);
  });

  checkGraphRules(nodes, ruleEdges, header.kind, out);
  checkSignalWaits(nodes, header.signals, out);
  checkTemplates(nodes, hasOwn(doc, 'state') ? doc.state : undefined, opts.stored === true, out);
  const edges = parsedEdges.map((e) => e.edge);
  const state = keepsState(header.state !== null, nodes, edges) ? (header.state ?? parseStateBlock(undefined, out)) : null;
  if (state) checkConflictWriters({ nodes, edges }, state, out);
  checkBudgetReach(nodes, parsedEdges, header.budget, out);
  collectWarnings(nodes, parsedEdges, header.inputSchema, out);
  for (const k of Object.keys(doc)) if (!GRAPH_MEMBERS.has(k)) unknownMember(null, `graph member '${k}'`);

  if (out.errors.length > 0) return fail(out.errors, out.warnings);
  const graph: Graph = {
    schemaVersion: 1,
    kind: header.kind,
    chat: header.chat,
    inputSchema: header.inputSchema,
    outputSchema: header.outputSchema,
    ...(header.budget ? { budget: header.budget } : {}),
    ...(header.concurrency ? { concurrency: header.concurrency } : {}),
    ...(state ? { state } : {}),
    ...(header.signals ? { signals: header.signals } : {}),
    ...(header.triggers ? { triggers: header.triggers } : {}),
    nodes,
    edges,
  };
  return { ok: true, graph, warnings: out.warnings };
}

interface Header {
  kind: GraphKind;
  chat: Graph['chat'];
  inputSchema: JsonObject | null;
  outputSchema: JsonObject | null;
  budget: RunBudget | null;
  concurrency: Graph['concurrency'] | null;
  /** the `state` block when declared */
  state: StateSpec | null;
  /** the `signals` block when declared */
  signals: Graph['signals'] | null;
  /** the `triggers` list when declared */
  triggers: EventTrigger[] | null;
}

/** The `concurrency` block: `{ key: <dot path>, limit: 1–MAX_CONCURRENCY_LIMIT }`, closed. */
function parseConcurrency(raw: unknown, out: Issues): Graph['concurrency'] | null {
  if (!isObject(raw)) {
    out.error(null, `'concurrency' must be an object, not ${typeName(raw)}`);
    return null;
  }
  let ok = true;
  for (const k of Object.keys(raw)) {
    if (k !== 'key' && k !== 'limit') {
      out.error(null, `'concurrency' has an unknown member '${k}'`);
      ok = false;
    }
  }
  const key = raw.key;
  if (typeof key !== 'string' || !isValidPath(key)) {
    out.error(null, `concurrency.key must be a dot path (e.g. input.customerId), not ${JSON.stringify(key) ?? 'absent'}`);
    ok = false;
  }
  const limit = raw.limit;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_CONCURRENCY_LIMIT) {
    out.error(null, `concurrency.limit must be an integer 1–${MAX_CONCURRENCY_LIMIT}, not ${JSON.stringify(limit) ?? 'absent'}`);
    ok = false;
  }
  return ok ? { key: key as string, limit: limit as number } : null;
}

/** The `signals` block: channel name → `{ schema? }`, each closed. */
function parseSignals(raw: unknown, out: Issues): Graph['signals'] | null {
  if (!isObject(raw)) {
    out.error(null, `'signals' must be an object of channel name → { schema? }, not ${typeName(raw)}`);
    return null;
  }
  const channels: NonNullable<Graph['signals']> = {};
  let ok = true;
  for (const [name, spec] of Object.entries(raw)) {
    const fail = (message: string) => {
      out.error(null, `signals.${name}: ${message}`);
      ok = false;
    };
    if (!CHANNEL_NAME.test(name)) fail('a channel name is 1–64 of A-Z a-z 0-9 _ -');
    else if (spec !== null && !isObject(spec)) fail(`must be an object { schema? }, not ${typeName(spec)}`);
    else {
      const body = spec ?? {};
      const extra = Object.keys(body).find((k) => k !== 'schema');
      if (extra !== undefined) fail(`unknown member '${extra}'`);
      let schema: JsonObject | null = null;
      if (body.schema !== undefined && body.schema !== null) {
        const r = schemaObject(body.schema);
        if ('error' in r) fail(`schema ${r.error}`);
        else schema = r.value as JsonObject;
      }
      channels[name] = { schema };
    }
  }
  return ok ? channels : null;
}

/** A channel name: like a node key. */
const CHANNEL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** A Wait reading a signal must name a channel the graph declares. */
function checkSignalWaits(nodes: GraphNode[], signals: Graph['signals'] | null, out: Issues): void {
  for (const n of nodes) {
    if (n.kind !== 'Wait') continue;
    for (const channel of waitSignalChannels(n.config)) {
      if (signals && hasOwn(signals, channel)) continue;
      const declared = signals ? Object.keys(signals) : [];
      out.error(n.key, `Wait ${q(n.key)}: config.signal names channel ${q(channel)}, which the graph's signals do not declare${declared.length > 0 ? ` (declared: ${declared.join(', ')})` : ''}`);
    }
  }
}

function parseHeader(doc: Record<string, unknown>, out: Issues): Header {
  const get = (k: string) => (hasOwn(doc, k) && doc[k] !== null ? doc[k] : undefined);
  const version = get('schemaVersion');
  if (version !== undefined && version !== 1) out.error(null, `schemaVersion must be 1 when present, not ${JSON.stringify(version)}`);
  let kind: GraphKind = 'Standard';
  const rawKind = get('kind');
  if (rawKind === 'Chat' || rawKind === 'Standard') kind = rawKind;
  else if (rawKind !== undefined) out.error(null, `graph kind must be "Standard" or "Chat", not ${JSON.stringify(rawKind)}`);
  let chat: Graph['chat'] = kind === 'Chat' ? { ...CHAT_DEFAULTS } : null;
  const rawChat = get('chat');
  if (rawChat !== undefined) {
    if (kind !== 'Chat') out.error(null, "a 'chat' block is allowed only on a Chat graph");
    else if (!isObject(rawChat)) out.error(null, `'chat' must be an object, not ${typeName(rawChat)}`);
    else {
      const c = { ...CHAT_DEFAULTS };
      for (const [k, v] of Object.entries(rawChat)) {
        if (k !== 'acceptsAttachments' && k !== 'requireRerunConfirmation') out.error(null, `'chat' has an unknown member '${k}'`);
        else if (v === null) continue;
        else if (typeof v !== 'boolean') out.error(null, `chat.${k} must be a boolean, not ${typeName(v)}`);
        else c[k] = v;
      }
      chat = c;
    }
  }
  const schemas: Record<'inputSchema' | 'outputSchema', JsonObject | null> = { inputSchema: null, outputSchema: null };
  for (const m of ['inputSchema', 'outputSchema'] as const) {
    const v = get(m);
    if (v === undefined) continue;
    const r = schemaObject(v);
    if ('error' in r) out.error(null, `graph ${m} ${r.error}`);
    else schemas[m] = r.value as JsonObject;
  }
  const budget = parseBudget(get('budget'));
  if (!budget.ok) for (const e of budget.errors) out.error(null, e);
  const rawConcurrency = get('concurrency');
  const concurrency = rawConcurrency === undefined ? null : parseConcurrency(rawConcurrency, out);
  const rawState = get('state');
  const state = rawState === undefined ? null : parseStateBlock(rawState, out);
  const rawSignals = get('signals');
  const signals = rawSignals === undefined ? null : parseSignals(rawSignals, out);
  const rawTriggers = get('triggers');
  let triggers: EventTrigger[] | null = null;
  if (rawTriggers !== undefined) {
    const t = parseEventTriggers(rawTriggers);
    if (t.ok) triggers = t.triggers.length > 0 ? t.triggers : null;
    else for (const e of t.errors) out.error(null, e);
  }
  return { kind, chat, ...schemas, budget: budget.ok ? budget.budget : null, concurrency, state, signals, triggers };
}
