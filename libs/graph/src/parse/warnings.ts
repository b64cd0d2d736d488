/**
 * Warnings (CONTRACT §1.4): never refuse. Computed only for graphs without structural
 * errors. The shape warnings below are heuristics documented on each function.
 */
import { starvedSuccessors, type ContextGraph } from '../inspect/pause-context';
import type { EdgeCondition, GraphNode, Json, JsonObject } from '../model';
import { validateJson } from '../schema';
import { adjacency } from './rules';
import type { RuleEdge } from './rules';
import type { Issues } from './util';
import { hasOwn, isObject, listSome, q } from './util';

/** Above this many nodes the quadratic shape analysis (exclusive joins) is skipped. */
export const SHAPE_ANALYSIS_MAX_NODES = 1000;

/** Roots a condition path may start at: the envelope's members, and `state` (the run state as of the source's commit). */
const ENVELOPE_MEMBERS = new Set(['status', 'attempt', 'branch', 'output', 'error', 'state']);

export function collectWarnings(nodes: readonly GraphNode[], edges: readonly RuleEdge[], graphInputSchema: JsonObject | null, out: Issues): void {
  const byKey = new Map(nodes.map((n) => [n.key, n] as const));
  const adj = adjacency(nodes, edges);
  humanStarved(nodes, edges, out);
  for (const n of nodes) {
    responseSchema(n, out);
    startDefaultInput(n, graphInputSchema, out);
  }
  neverFires(edges, byKey, out);
  sharedJoins(nodes, adj, out);
  if (nodes.length <= SHAPE_ANALYSIS_MAX_NODES) exclusiveJoins(nodes, adj, out);
}

/**
 * A node whose every inbound edge leaves a Pause/ChatInput receives the decision document,
 * not the content before the wait. Keyed to that node; a node whose join policy is not All is
 * exempt (collecting decisions is what it is for). The advice names the edge the editor would
 * add: the rule is the one of `pause-context.ts`, so the warning and the editor never differ.
 */
function humanStarved(nodes: readonly GraphNode[], edges: readonly RuleEdge[], out: Issues): void {
  const graph: ContextGraph = { nodes, edges: edges.map((e) => e.edge) };
  const starved = starvedSuccessors(graph);
  for (const n of nodes) {
    const s = starved.get(n.key);
    if (!s) continue;
    const advice = s.ancestor !== null ? ` Add an unconditional edge from ${q(s.ancestor)} to ${q(n.key)} to hand it that content.` : '';
    out.warn(n.key, `every inbound edge of ${q(n.key)} leaves a Pause/ChatInput (${listSome(s.waits)}): it receives the decision, not the content before the wait.${advice}`);
  }
}

const UNENFORCED_KEYWORDS = [
  'minLength', 'maxLength', 'pattern', 'format', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum',
  'multipleOf', 'minItems', 'maxItems', 'uniqueItems', 'minProperties', 'maxProperties', 'patternProperties',
  'propertyNames', 'contains', 'minContains', 'maxContains', 'if', 'then', 'else', 'dependentRequired',
  'dependentSchemas', 'unevaluatedProperties', 'unevaluatedItems', 'default',
];

/**
 * `responseJsonSchema` (LlmCall/Agent) features an OpenAI-style strict structured-output
 * provider will not enforce: a root that is not `type: "object"`, value keywords (which
 * become hints), optional properties (made required) and open objects (closed). The schema
 * is walked breadth-first over properties, additionalProperties, items, anyOf, oneOf, allOf.
 */
function responseSchema(n: GraphNode, out: Issues): void {
  const schema = n.config.responseJsonSchema;
  if (!isObject(schema)) return;
  const reasons: string[] = [];
  if (schema.type !== 'object') reasons.push('its root is not `"type": "object"` (the answer lands at output.json as an object)');
  const keywords = new Set<string>();
  const optional: string[] = [];
  let open = false;
  const queue: unknown[] = [schema];
  for (let h = 0; h < queue.length && h < 10_000; h++) {
    const s = queue[h];
    if (!isObject(s)) continue;
    for (const k of UNENFORCED_KEYWORDS) if (hasOwn(s, k)) keywords.add(k);
    if (isObject(s.properties)) {
      const required = Array.isArray(s.required) ? s.required : [];
      for (const p of Object.keys(s.properties)) if (!required.includes(p)) optional.push(p);
      if (!hasOwn(s, 'additionalProperties')) open = true;
      queue.push(...Object.values(s.properties));
    }
    if (isObject(s.additionalProperties)) queue.push(s.additionalProperties);
    if (isObject(s.items)) queue.push(s.items);
    for (const k of ['anyOf', 'oneOf', 'allOf']) if (Array.isArray(s[k])) queue.push(...(s[k] as unknown[]));
  }
  if (keywords.size > 0) reasons.push(`it drops ${listSome([...keywords])} rather than enforcing them`);
  if (optional.length > 0) reasons.push(`it requires every declared property (${listSome(optional)} are optional here)`);
  if (open) reasons.push('it forbids additional properties on objects that leave additionalProperties unset');
  if (reasons.length > 0) {
    out.warn(n.key, `${n.kind} ${q(n.key)} declares a response schema a strict structured-output provider does not enforce as written: ${reasons.join('; ')}.`);
  }
}

/**
 * A Start `defaultInput` that a run started without input would be refused for: a run
 * start checks its input against both the Start's `config.inputSchema` and the graph's
 * `inputSchema`, so either one the default breaks is worth a warning. Keyed to the Start,
 * where the default is written.
 */
function startDefaultInput(n: GraphNode, graphInputSchema: JsonObject | null, out: Issues): void {
  if (n.kind !== 'Start' || !hasOwn(n.config, 'defaultInput')) return;
  const why = (schema: unknown) => {
    const r = validateJson(schema, n.config.defaultInput);
    return r.valid ? null : r.errors.slice(0, 3).join('; ');
  };
  const own = isObject(n.config.inputSchema) ? why(n.config.inputSchema) : null;
  if (own !== null) out.warn(n.key, `Start ${q(n.key)}: config.defaultInput does not satisfy config.inputSchema (${own})`);
  // a null default stands for no default (the run starts with {}), which the caller is expected to replace
  const graph = graphInputSchema !== null && n.config.defaultInput !== null ? why(graphInputSchema) : null;
  if (graph !== null) out.warn(n.key, `Start ${q(n.key)}: config.defaultInput does not satisfy the graph inputSchema (${graph})`);
}

/**
 * Conditions that can never fire: a path that does not start at an envelope member, and
 * an `Eq` on a Pause/ChatInput decision or a DecisionModel choice the node cannot produce.
 */
function neverFires(edges: readonly RuleEdge[], byKey: Map<string, GraphNode>, out: Issues): void {
  for (const { edge } of edges) {
    const c = edge.condition;
    if (c === null) continue;
    const root = c.path.split('.')[0]!;
    if (!ENVELOPE_MEMBERS.has(root)) {
      out.warn(edge.key, `condition path '${c.path}' does not start at an output envelope member (${[...ENVELOPE_MEMBERS].join(', ')}); it never matches a value`);
      continue;
    }
    if (c.op !== 'Eq') continue;
    const src = byKey.get(edge.from)!;
    const possible = producible(src, c);
    if (possible !== null && !possible.includes(c.value as Json)) {
      out.warn(edge.key, `condition ${c.path} Eq ${JSON.stringify(c.value)} never fires: ${src.kind} ${q(src.key)} produces only ${possible.map((v) => JSON.stringify(v)).join(', ')}`);
    }
  }
}

function producible(src: GraphNode, c: EdgeCondition): Json[] | null {
  if (src.kind === 'Pause' && c.path === 'output.decision' && Array.isArray(src.config.allowedDecisions)) return src.config.allowedDecisions;
  if (src.kind === 'ChatInput' && c.path === 'output.decision') return ['Answer'];
  if (src.kind === 'DecisionModel' && c.path === 'output.choice' && Array.isArray(src.config.labels)) return src.config.labels;
  return null;
}

/**
 * Shared-join shape: a `First`/quorum join cancels only the pending sources whose every
 * out-edge leads into it; a source that also feeds another node keeps running.
 */
function sharedJoins(nodes: readonly GraphNode[], adj: ReturnType<typeof adjacency>, out: Issues): void {
  for (const n of nodes) {
    if (n.joinPolicy !== 'First' && typeof n.joinPolicy !== 'object') continue;
    const shared = [...new Set(adj.ins.get(n.key)!.map((e) => e.edge.from))].filter((s) => adj.outs.get(s)!.some((e) => e.edge.to !== n.key));
    if (shared.length > 0) {
      out.warn(n.key, `${q(n.key)} joins ${typeof n.joinPolicy === 'object' ? `quorum ${n.joinPolicy.quorum}` : 'First'}, but ${listSome(shared)} also feed(s) other nodes and will not be cancelled when it fires`);
    }
  }
}

/** Two conditional out-edges of one node that can never both fire. */
export function exclusive(a: RuleEdge, b: RuleEdge): boolean {
  if (a.edge.default !== b.edge.default) return (a.edge.default ? b : a).conditional;
  const x = a.edge.condition;
  const y = b.edge.condition;
  if (x === null || y === null || x.path !== y.path) return false;
  const pair = (p: string, r: string) => (x.op === p && y.op === r) || (x.op === r && y.op === p);
  if (x.op === 'Eq' && y.op === 'Eq') return x.value !== y.value;
  if (pair('Exists', 'NotExists')) return true;
  if (x.value !== y.value) return false;
  return pair('Eq', 'Ne') || pair('Gt', 'Lte') || pair('Gte', 'Lt');
}

/**
 * Unreachable-by-routing shape: an `All` node fed by two mutually exclusive branches of
 * one router (an exclusive pair of its out-edges, and each feeding source reached only
 * through its branch). Under `All` one branch is always dead, so the node is skipped.
 */
function exclusiveJoins(nodes: readonly GraphNode[], adj: ReturnType<typeof adjacency>, out: Issues): void {
  const start = nodes.find((n) => n.kind === 'Start');
  if (start === undefined) return;
  const reach = (from: string, avoid: string | null): Set<string> => {
    const seen = new Set<string>([from]);
    const stack = [from];
    while (stack.length > 0) {
      const k = stack.pop()!;
      for (const e of adj.outs.get(k)!) {
        const t = e.edge.to;
        if (t !== avoid && !seen.has(t)) {
          seen.add(t);
          stack.push(t);
        }
      }
    }
    return seen;
  };
  const warned = new Set<string>();
  for (const r of nodes) {
    const o = adj.outs.get(r.key)!;
    if (o.length < 2 || !o.some((e) => e.conditional)) continue;
    const bypass = r.key === start.key ? new Set<string>() : reach(start.key, r.key);
    const branch = o.map((e) => reach(e.edge.to, r.key));
    // branch index of an edge feeding a join, or -1 when not owned by exactly one branch
    const owner = (e: RuleEdge): number => {
      if (e.edge.from === r.key) return o.indexOf(e);
      if (bypass.has(e.edge.from)) return -1;
      const owners = branch.flatMap((b, i) => (b.has(e.edge.from) ? [i] : []));
      return owners.length === 1 ? owners[0]! : -1;
    };
    for (const x of nodes) {
      if (warned.has(x.key) || x.joinPolicy !== 'All') continue;
      const i = adj.ins.get(x.key)!;
      if (i.length < 2) continue;
      const owned = i.map(owner).filter((k) => k >= 0);
      let hit: [number, number] | null = null;
      for (let a = 0; a < owned.length && hit === null; a++) {
        for (let b = a + 1; b < owned.length; b++) {
          if (owned[a] !== owned[b] && exclusive(o[owned[a]!]!, o[owned[b]!]!)) {
            hit = [owned[a]!, owned[b]!];
            break;
          }
        }
      }
      if (hit !== null) {
        warned.add(x.key);
        out.warn(x.key, `${q(x.key)} joins "All" over mutually exclusive branches of ${q(r.key)} (${q(o[hit[0]]!.edge.key)} and ${q(o[hit[1]]!.edge.key)}); one is always dead, so it is skipped — consider joinPolicy "Any"`);
      }
    }
  }
}
