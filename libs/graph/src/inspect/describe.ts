/**
 * describe(graph): an exact, JSON-safe descriptor of a parsed graph for editors, the API
 * and diagnostics. Nodes and edges keep document order; every list in `analysis` is in
 * document order unless stated otherwise, so equal graphs describe identically.
 */
import { CHILD_KINDS, HUMAN_KINDS, INLINE_KINDS, LANE_OF_KIND } from '../model';
import type { EdgeCondition, Graph, GraphKind, GraphNode, Lane } from '../model';

export type EdgeKind = 'unconditional' | 'conditional' | 'default';

/** A node as described: its parsed members that say how it runs (defaults filled in), then what the graph makes of it. */
export interface NodeDescriptor extends Pick<GraphNode, 'key' | 'kind' | 'label' | 'joinPolicy' | 'maxAttempts' | 'timeoutSeconds' | 'onError'> {
  index: number;
  /** Pause/ChatInput: parks on a person */
  human: boolean;
  /** executed by the planner in the tick (Start, Condition, Parallel, Join, End) */
  inline: boolean;
  /** Loop/Subworkflow: starts a child run */
  child: boolean;
  lane: Lane | null;
  /** in-edge keys, document order */
  inbound: string[];
  /** out-edge keys, document order */
  outbound: string[];
  /** longest path (in edges) from the Start; null when unreachable */
  depth: number | null;
}

export interface EdgeDescriptor {
  index: number;
  key: string;
  from: string;
  to: string;
  label: string | null;
  kind: EdgeKind;
  condition: EdgeCondition | null;
}

export interface GraphAnalysis {
  start: string | null;
  ends: string[];
  /** nodes with two or more out-edges */
  fanOut: string[];
  /** nodes with two or more in-edges (they join by their joinPolicy) */
  joins: string[];
  /** Pause/ChatInput nodes */
  human: string[];
  /** Loop/Subworkflow nodes */
  children: string[];
  /** Condition nodes and nodes with a conditional or default out-edge */
  routers: string[];
  /** Kahn order; among ready nodes, document order first */
  topologicalOrder: string[];
  /** longest Start→End path, in edges */
  depth: number;
  /** distinct tool names the graph uses (Tool toolName, Agent tools), sorted */
  tools: string[];
  nodeCount: number;
  edgeCount: number;
}

export interface GraphDescriptor {
  schemaVersion: 1;
  kind: GraphKind;
  nodes: NodeDescriptor[];
  edges: EdgeDescriptor[];
  analysis: GraphAnalysis;
}

export function edgeKind(e: Graph['edges'][number]): EdgeKind {
  return e.default ? 'default' : e.condition !== null ? 'conditional' : 'unconditional';
}

/** Describe a parsed graph (assumed valid: acyclic, edges between declared nodes). */
export function describe(graph: Graph): GraphDescriptor {
  const index = new Map(graph.nodes.map((n, i) => [n.key, i] as const));
  const ins: string[][] = graph.nodes.map(() => []);
  const outs: string[][] = graph.nodes.map(() => []);
  const succ: number[][] = graph.nodes.map(() => []);
  const indeg = new Array<number>(graph.nodes.length).fill(0);
  for (const e of graph.edges) {
    const f = index.get(e.from);
    const t = index.get(e.to);
    if (f === undefined || t === undefined) continue;
    outs[f]!.push(e.key);
    ins[t]!.push(e.key);
    succ[f]!.push(t);
    indeg[t]!++;
  }

  // Kahn with a min-heap on document index: deterministic and O((n + e) log n).
  const heap: number[] = [];
  const push = (v: number) => {
    heap.push(v);
    for (let i = heap.length - 1; i > 0; ) {
      const p = (i - 1) >> 1;
      if (heap[p]! <= heap[i]!) break;
      [heap[p], heap[i]] = [heap[i]!, heap[p]!];
      i = p;
    }
  };
  const pop = (): number => {
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && heap[l]! < heap[m]!) m = l;
        if (r < heap.length && heap[r]! < heap[m]!) m = r;
        if (m === i) break;
        [heap[m], heap[i]] = [heap[i]!, heap[m]!];
        i = m;
      }
    }
    return top;
  };
  const remaining = [...indeg];
  indeg.forEach((d, i) => d === 0 && push(i));
  const order: number[] = [];
  while (heap.length > 0) {
    const u = pop();
    order.push(u);
    for (const v of succ[u]!) if (--remaining[v]! === 0) push(v);
  }
  // A cyclic input (never produced by parseGraph) keeps its leftovers in document order.
  if (order.length < graph.nodes.length) {
    const seen = new Set(order);
    graph.nodes.forEach((_, i) => !seen.has(i) && order.push(i));
  }

  const startIndex = graph.nodes.findIndex((n) => n.kind === 'Start');
  const depth: Array<number | null> = graph.nodes.map(() => null);
  if (startIndex >= 0) {
    depth[startIndex] = 0;
    for (const u of order) {
      const du = depth[u];
      if (du === null || du === undefined) continue;
      for (const v of succ[u]!) if ((depth[v] ?? -1) < du + 1) depth[v] = du + 1;
    }
  }

  const keysWhere = (p: (i: number) => boolean) => graph.nodes.filter((_, i) => p(i)).map((n) => n.key);
  const routerFrom = new Set(graph.edges.filter((e) => e.condition !== null || e.default).map((e) => e.from));
  const tools = new Set<string>();
  for (const n of graph.nodes) {
    if (n.kind === 'Tool' && typeof n.config.toolName === 'string') tools.add(n.config.toolName);
    if (n.kind === 'Agent' && Array.isArray(n.config.tools)) for (const t of n.config.tools) if (typeof t === 'string') tools.add(t);
  }
  const ends = keysWhere((i) => graph.nodes[i]!.kind === 'End');

  return {
    schemaVersion: 1,
    kind: graph.kind,
    nodes: graph.nodes.map((n, i) => ({
      index: i,
      key: n.key,
      kind: n.kind,
      label: n.label,
      joinPolicy: typeof n.joinPolicy === 'object' ? { quorum: n.joinPolicy.quorum } : n.joinPolicy,
      maxAttempts: n.maxAttempts,
      timeoutSeconds: n.timeoutSeconds,
      onError: n.onError,
      human: HUMAN_KINDS.has(n.kind),
      inline: INLINE_KINDS.has(n.kind),
      child: CHILD_KINDS.has(n.kind),
      lane: LANE_OF_KIND[n.kind] ?? null,
      inbound: ins[i]!,
      outbound: outs[i]!,
      depth: depth[i] ?? null,
    })),
    edges: graph.edges.map((e, i) => ({
      index: i,
      key: e.key,
      from: e.from,
      to: e.to,
      label: e.label,
      kind: edgeKind(e),
      condition: e.condition === null ? null : { ...e.condition },
    })),
    analysis: {
      start: startIndex >= 0 ? graph.nodes[startIndex]!.key : null,
      ends,
      fanOut: keysWhere((i) => outs[i]!.length >= 2),
      joins: keysWhere((i) => ins[i]!.length >= 2),
      human: keysWhere((i) => HUMAN_KINDS.has(graph.nodes[i]!.kind)),
      children: keysWhere((i) => CHILD_KINDS.has(graph.nodes[i]!.kind)),
      routers: keysWhere((i) => graph.nodes[i]!.kind === 'Condition' || routerFrom.has(graph.nodes[i]!.key)),
      topologicalOrder: order.map((i) => graph.nodes[i]!.key),
      depth: Math.max(0, ...ends.map((k) => depth[index.get(k)!] ?? 0)),
      tools: [...tools].sort(),
      nodeCount: graph.nodes.length,
      edgeCount: graph.edges.length,
    },
  };
}
