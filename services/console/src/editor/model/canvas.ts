/**
 * The editor's canvas model: a graph document (CONTRACT §1) as React Flow nodes and edges
 * and back, losslessly. Each canvas node carries its node document verbatim (every member,
 * unknown ones included, in their order) and draws it at `position`; each canvas edge
 * carries its edge document. Everything of the graph besides `nodes` and `edges` is kept
 * as it was. So `canvasToGraph(graphToCanvas(doc))` is `doc` whenever every node has a
 * position; a node without one is placed by the shared layered layout (`layoutGraph` of
 * `@flowline/graph`) and the model says it was laid out (the editor does not count that as
 * an edit: the layout's positions are saved with the author's first real change).
 */
import type { Edge, Node } from '@xyflow/react';
import { layoutGraph, type NodeKind } from '@flowline/graph';

/** A JSON object member list, as documents arrive from the API. */
export type Doc = Record<string, unknown>;

export interface FlowNodeData extends Record<string, unknown> {
  /** the node document, verbatim (its `key` and `position` are the canvas node's) */
  doc: Doc;
}

export interface FlowEdgeData extends Record<string, unknown> {
  /** the edge document, verbatim (its `key`, `from`, `to` are the canvas edge's) */
  doc: Doc;
}

export type FlowNode = Node<FlowNodeData, 'flow'>;
export type FlowEdge = Edge<FlowEdgeData>;

/** The editor's whole graph: canvas nodes and edges, plus the rest of the document. */
export interface CanvasModel {
  nodes: FlowNode[];
  edges: FlowEdge[];
  /** the graph document's other members, in order (`nodes` / `edges` mark where those go) */
  rest: Doc;
  /** keys of nodes that had no position and were placed by the layout */
  laidOut: string[];
}

/** Size of a node card, for the layout (the card's CSS width; a typical height). */
export const CARD_WIDTH = 220;
export const CARD_HEIGHT = 76;
export const LAYOUT_OPTIONS = { nodeWidth: CARD_WIDTH, nodeHeight: CARD_HEIGHT, rankGap: 90, nodeGap: 36 } as const;

const isObject = (v: unknown): v is Doc => v !== null && typeof v === 'object' && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

function positionOf(doc: Doc): { x: number; y: number } | null {
  const p = doc.position;
  return isObject(p) && typeof p.x === 'number' && typeof p.y === 'number' ? { x: p.x, y: p.y } : null;
}

/** A copy of `doc` with member `name` set to `value` where it stood (appended when absent). */
export function withMember(doc: Doc, name: string, value: unknown): Doc {
  if (Object.prototype.hasOwnProperty.call(doc, name)) return Object.fromEntries(Object.entries(doc).map(([k, v]) => [k, k === name ? value : v]));
  return { ...doc, [name]: value };
}

/** A copy of `doc` without member `name`. */
export function withoutMember(doc: Doc, name: string): Doc {
  return Object.fromEntries(Object.entries(doc).filter(([k]) => k !== name));
}

/** The canvas node id of a node document (its key; a node without a string key gets a stable stand-in). */
function nodeId(doc: Doc, index: number): string {
  return str(doc.key) ?? `#node-${index}`;
}

/** Document → canvas. Nodes without a position are laid out with the shared layout. */
export function graphToCanvas(graph: unknown): CanvasModel {
  const g = isObject(graph) ? graph : {};
  const rawNodes = Array.isArray(g.nodes) ? g.nodes : [];
  const rawEdges = Array.isArray(g.edges) ? g.edges : [];
  const nodeDocs = rawNodes.map((n) => (isObject(n) ? n : {}));
  const edgeDocs = rawEdges.map((e) => (isObject(e) ? e : {}));
  const ids = nodeDocs.map(nodeId);
  const unplaced = nodeDocs.map((d, i) => (positionOf(d) === null ? ids[i]! : null)).filter((k): k is string => k !== null);
  const layout =
    unplaced.length === 0
      ? null
      : layoutGraph(
          {
            nodes: ids.map((key) => ({ key })),
            edges: edgeDocs.flatMap((e) => (typeof e.from === 'string' && typeof e.to === 'string' ? [{ from: e.from, to: e.to }] : [])),
          },
          LAYOUT_OPTIONS,
        );
  const nodes: FlowNode[] = nodeDocs.map((doc, i) => {
    const id = ids[i]!;
    const at = positionOf(doc) ?? layout?.byKey.get(id) ?? { x: 0, y: 0 };
    return { id, type: 'flow', position: { x: at.x, y: at.y }, data: { doc } };
  });
  const edges: FlowEdge[] = edgeDocs.map((doc, i) => {
    const e: FlowEdge = { id: str(doc.key) ?? `#edge-${i}`, source: str(doc.from) ?? '', target: str(doc.to) ?? '', data: { doc } };
    const handle = str(doc.sourceHandle);
    if (handle !== null) e.sourceHandle = handle;
    return e;
  });
  const rest: Doc = isObject(graph) ? { ...g } : { nodes: [], edges: [] };
  return { nodes, edges, rest, laidOut: unplaced };
}

/** One canvas node → its node document: the carried document with the canvas key and position. */
export function nodeDocOf(n: FlowNode): Doc {
  let doc = n.data.doc;
  if (!n.id.startsWith('#node-') && doc.key !== n.id) doc = withMember(doc, 'key', n.id);
  const at = positionOf(doc);
  if (at === null || at.x !== n.position.x || at.y !== n.position.y) doc = withMember(doc, 'position', { x: n.position.x, y: n.position.y });
  return doc;
}

/** One canvas edge → its edge document. */
export function edgeDocOf(e: FlowEdge): Doc {
  let doc = e.data?.doc ?? {};
  if (!e.id.startsWith('#edge-') && doc.key !== e.id) doc = withMember(doc, 'key', e.id);
  if (doc.from !== e.source) doc = withMember(doc, 'from', e.source);
  if (doc.to !== e.target) doc = withMember(doc, 'to', e.target);
  return doc;
}

/** Canvas → document: the other members where they were, then nodes and edges. */
export function canvasToGraph(m: CanvasModel): Doc {
  const out: Doc = {};
  const nodes = m.nodes.map(nodeDocOf);
  const edges = m.edges.map(edgeDocOf);
  for (const [k, v] of Object.entries(m.rest)) out[k] = k === 'nodes' ? nodes : k === 'edges' ? edges : v;
  if (!('nodes' in out)) out.nodes = nodes;
  if (!('edges' in out)) out.edges = edges;
  return out;
}

/** The kind a node document names (null when it is not a string). */
export function kindOf(doc: Doc): NodeKind | null {
  return typeof doc.kind === 'string' ? (doc.kind as NodeKind) : null;
}

/** The node's `config` object ({} when absent or malformed). */
export function configOf(doc: Doc): Doc {
  return isObject(doc.config) ? doc.config : {};
}

/** A new model laid out again with the shared layout (Auto-arrange): every node moves. */
export function arrange(m: CanvasModel): CanvasModel {
  const layout = layoutGraph({ nodes: m.nodes.map((n) => ({ key: n.id })), edges: m.edges.map((e) => ({ from: e.source, to: e.target })) }, LAYOUT_OPTIONS);
  return {
    ...m,
    nodes: m.nodes.map((n) => {
      const p = layout.byKey.get(n.id);
      return p ? { ...n, position: { x: p.x, y: p.y } } : n;
    }),
  };
}
