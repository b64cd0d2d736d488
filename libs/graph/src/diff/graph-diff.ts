/**
 * The difference between two versions of a definition, over their parsed graphs (every
 * default filled in, so a member written out with its default value is no change): nodes and
 * edges added, removed and changed member by member, the run input and state schemas, and
 * every other graph-level member. Pure; keys are compared as identities (a renamed node is one
 * node removed and one added).
 *
 * A change is `{ member, from, to }` where `member` is a dot path: a node's own members
 * (`kind`, `joinPolicy`, `maxAttempts`, `retryBackoff`, …), its config one member deep
 * (`config.prompt`), and `writes`; an edge's `from`, `to`, `label`, `condition`, `default`.
 * `from` / `to` are the values before and after (null when absent on that side).
 */
import { canonicalJson } from '../schema/canonical-json';
import type { Graph, GraphEdge, GraphNode, Json, NodeKind } from '../model';

export interface MemberChange {
  member: string;
  from: Json;
  to: Json;
}

export interface SchemaChange {
  changed: boolean;
  from: Json;
  to: Json;
}

export interface GraphDiff {
  /** true when nothing below differs */
  identical: boolean;
  nodes: {
    added: Array<{ key: string; kind: NodeKind }>;
    removed: Array<{ key: string; kind: NodeKind }>;
    changed: Array<{ key: string; kind: NodeKind; changes: MemberChange[] }>;
  };
  edges: {
    added: Array<{ key: string; from: string; to: string }>;
    removed: Array<{ key: string; from: string; to: string }>;
    changed: Array<{ key: string; changes: MemberChange[] }>;
  };
  /** the graph's run input schema (`inputSchema`) */
  inputSchema: SchemaChange;
  /** the run state's schema (`state.schema`) */
  stateSchema: SchemaChange;
  /** every other graph-level member that differs (`kind`, `outputSchema`, `state.reducers`, `budget`, …) */
  graph: MemberChange[];
}

const same = (a: unknown, b: unknown) => canonicalJson(a ?? null) === canonicalJson(b ?? null);
const json = (v: unknown): Json => (v === undefined ? null : (v as Json));

/** Changes between two flat records, member by member, in the order `from` then `to` names them. */
function memberChanges(prefix: string, a: Record<string, unknown>, b: Record<string, unknown>, skip: ReadonlySet<string> = new Set()): MemberChange[] {
  const out: MemberChange[] = [];
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => !skip.has(k));
  for (const k of keys) if (!same(a[k], b[k])) out.push({ member: `${prefix}${k}`, from: json(a[k]), to: json(b[k]) });
  return out;
}

const NODE_SKIP = new Set(['key', 'config']);

function nodeChanges(a: GraphNode, b: GraphNode): MemberChange[] {
  return [
    ...memberChanges('', a as unknown as Record<string, unknown>, b as unknown as Record<string, unknown>, NODE_SKIP),
    ...memberChanges('config.', a.config, b.config),
  ];
}

function edgeChanges(a: GraphEdge, b: GraphEdge): MemberChange[] {
  return memberChanges('', a as unknown as Record<string, unknown>, b as unknown as Record<string, unknown>, new Set(['key']));
}

const GRAPH_SKIP = new Set(['nodes', 'edges', 'inputSchema', 'state']);

/** The difference from `a` (the older version, usually) to `b`. */
export function diffGraphs(a: Graph, b: Graph): GraphDiff {
  const aNodes = new Map(a.nodes.map((n) => [n.key, n]));
  const bNodes = new Map(b.nodes.map((n) => [n.key, n]));
  const aEdges = new Map(a.edges.map((e) => [e.key, e]));
  const bEdges = new Map(b.edges.map((e) => [e.key, e]));
  const nodes: GraphDiff['nodes'] = {
    added: b.nodes.filter((n) => !aNodes.has(n.key)).map((n) => ({ key: n.key, kind: n.kind })),
    removed: a.nodes.filter((n) => !bNodes.has(n.key)).map((n) => ({ key: n.key, kind: n.kind })),
    changed: [],
  };
  for (const n of b.nodes) {
    const old = aNodes.get(n.key);
    const changes = old ? nodeChanges(old, n) : [];
    if (changes.length > 0) nodes.changed.push({ key: n.key, kind: n.kind, changes });
  }
  const edges: GraphDiff['edges'] = {
    added: b.edges.filter((e) => !aEdges.has(e.key)).map((e) => ({ key: e.key, from: e.from, to: e.to })),
    removed: a.edges.filter((e) => !bEdges.has(e.key)).map((e) => ({ key: e.key, from: e.from, to: e.to })),
    changed: [],
  };
  for (const e of b.edges) {
    const old = aEdges.get(e.key);
    const changes = old ? edgeChanges(old, e) : [];
    if (changes.length > 0) edges.changed.push({ key: e.key, changes });
  }
  const schema = (x: unknown, y: unknown): SchemaChange => ({ changed: !same(x, y), from: json(x), to: json(y) });
  const inputSchema = schema(a.inputSchema, b.inputSchema);
  const stateSchema = schema(a.state?.schema, b.state?.schema);
  const graph = [
    ...memberChanges('', a as unknown as Record<string, unknown>, b as unknown as Record<string, unknown>, GRAPH_SKIP),
    ...memberChanges('state.', { reducers: a.state?.reducers, initial: a.state?.initial }, { reducers: b.state?.reducers, initial: b.state?.initial }),
  ];
  const identical =
    nodes.added.length + nodes.removed.length + nodes.changed.length + edges.added.length + edges.removed.length + edges.changed.length + graph.length === 0 &&
    !inputSchema.changed && !stateSchema.changed;
  return { identical, nodes, edges, inputSchema, stateSchema, graph };
}
