/**
 * A lookup index over a parsed graph (nodes by key, in/out edges in document order),
 * built once per Graph object and cached, so a plan over a 200-node run stays linear.
 */
import type { Graph, GraphEdge, GraphNode } from '../model';

export interface GraphIndex {
  graph: Graph;
  nodeByKey: ReadonlyMap<string, GraphNode>;
  /** out-edges per node key, in document order */
  outEdges: ReadonlyMap<string, readonly GraphEdge[]>;
  /** in-edges per node key, in document order */
  inEdges: ReadonlyMap<string, readonly GraphEdge[]>;
  /** document position of each node */
  order: ReadonlyMap<string, number>;
}

const cache = new WeakMap<Graph, GraphIndex>();

/** The (cached) index of `graph`. Edges naming undeclared nodes are kept in their lists. */
export function indexGraph(graph: Graph): GraphIndex {
  const hit = cache.get(graph);
  if (hit) return hit;
  const nodeByKey = new Map<string, GraphNode>();
  const outEdges = new Map<string, GraphEdge[]>();
  const inEdges = new Map<string, GraphEdge[]>();
  const order = new Map<string, number>();
  graph.nodes.forEach((n, i) => {
    nodeByKey.set(n.key, n);
    order.set(n.key, i);
    outEdges.set(n.key, []);
    inEdges.set(n.key, []);
  });
  for (const e of graph.edges) {
    (outEdges.get(e.from) ?? outEdges.set(e.from, []).get(e.from)!).push(e);
    (inEdges.get(e.to) ?? inEdges.set(e.to, []).get(e.to)!).push(e);
  }
  const index: GraphIndex = { graph, nodeByKey, outEdges, inEdges, order };
  cache.set(graph, index);
  return index;
}
