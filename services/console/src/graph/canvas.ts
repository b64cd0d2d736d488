/**
 * Graph document → canvas: the run view's (and later the editor's) drawing of a graph,
 * laid out by the one layered-DAG layout of `@flowline/graph`. Memoised on the graph
 * OBJECT (a WeakMap): the conversion is a pure function of the document, TanStack Query's
 * structural sharing hands back the same object while its JSON is unchanged, so a node
 * status changing re-reads the run but never re-parses or re-ranks its graph. The cached
 * canvas is frozen: callers copy what they annotate ({@link overlayRun}).
 */
import { layoutGraph } from '@flowline/graph';
import { readGraphDoc, type DocEdge, type DocNode, type GraphDoc } from '../definitions/graph-doc';

export const NODE_WIDTH = 168;
export const NODE_HEIGHT = 60;
/** A handle's side in px (`.react-flow__handle` in styles.css). */
export const HANDLE_SIZE = 6;
/**
 * Where a run-graph node's two handles sit in its box, as React Flow would measure them:
 * centred on the left (target) and right (source) borders (base.css translates each handle
 * by half its size). The run view gives React Flow these, so it measures nothing;
 * console.e2e.test.ts checks them against the drawn handles.
 */
export const NODE_HANDLE_OFFSETS = {
  target: { x: -HANDLE_SIZE / 2, y: NODE_HEIGHT / 2 - HANDLE_SIZE / 2 },
  source: { x: NODE_WIDTH - HANDLE_SIZE / 2, y: NODE_HEIGHT / 2 - HANDLE_SIZE / 2 },
} as const;

export interface CanvasNode {
  id: string;
  position: { x: number; y: number };
  node: DocNode;
}

export interface CanvasEdge {
  id: string;
  source: string;
  target: string;
  edge: DocEdge;
  /** what the edge shows: its label, else its condition, else "default" */
  text: string | null;
}

export interface Canvas {
  doc: GraphDoc;
  nodes: readonly CanvasNode[];
  edges: readonly CanvasEdge[];
  byKey: ReadonlyMap<string, DocNode>;
  width: number;
  height: number;
}

const cache = new WeakMap<object, Canvas>();
let conversions = 0;

/** How many conversions ran (the memo's test reads it). */
export function canvasConversions(): number {
  return conversions;
}

const OP_SYMBOL: Record<string, string> = { eq: '=', ne: '≠', gt: '>', gte: '≥', lt: '<', lte: '≤', exists: 'exists', notexists: 'missing' };

/** A condition in full: `output.decision Eq "Approve"`. */
export function conditionText(c: NonNullable<DocEdge['condition']>): string {
  const op = c.op ?? '?';
  return /^(not)?exists$/i.test(op) ? `${c.path ?? '(inherited path)'} ${op}` : `${c.path ?? '(inherited path)'} ${op} ${JSON.stringify(c.value)}`;
}

/** What an edge shows on the canvas: its label, else its condition in short (`decision = Approve`), else "default". */
export function edgeText(e: DocEdge): string | null {
  if (e.label) return e.label;
  const c = e.condition;
  if (c) {
    const last = c.path?.split('.').at(-1);
    const op = OP_SYMBOL[(c.op ?? '').toLowerCase()] ?? c.op ?? '?';
    const value = typeof c.value === 'string' ? c.value : JSON.stringify(c.value);
    return /^(not)?exists$/i.test(c.op ?? '') ? `${last ?? 'value'} ${op}` : `${last ? `${last} ` : ''}${op} ${value}`;
  }
  return e.isDefault ? 'default' : null;
}

function storedPosition(graph: unknown, key: string): { x: number; y: number } | null {
  const nodes = (graph as { nodes?: unknown[] }).nodes ?? [];
  const raw = nodes.find((n) => (n as { key?: unknown }).key === key) as { position?: { x?: unknown; y?: unknown } } | undefined;
  const p = raw?.position;
  return p && typeof p.x === 'number' && typeof p.y === 'number' ? { x: p.x, y: p.y } : null;
}

/**
 * The canvas of a graph document. Nodes keep the positions an author stored when every
 * node has one; otherwise the whole graph is laid out (a partial set of positions would
 * overlap the laid-out rest).
 */
export function graphToCanvas(graph: unknown): Canvas {
  const keyObj = graph !== null && typeof graph === 'object' ? graph : null;
  const hit = keyObj ? cache.get(keyObj) : undefined;
  if (hit) return hit;
  conversions++;
  const doc = readGraphDoc(graph);
  const stored = doc.nodes.map((n) => storedPosition(graph, n.key));
  const useStored = doc.nodes.length > 0 && stored.every((p) => p !== null);
  const layout = useStored ? null : layoutGraph(doc, { nodeWidth: NODE_WIDTH, nodeHeight: NODE_HEIGHT, rankGap: 64, nodeGap: 26 });
  const seen = new Set<string>();
  const nodes: CanvasNode[] = [];
  doc.nodes.forEach((n, i) => {
    if (seen.has(n.key)) return;
    seen.add(n.key);
    const at = useStored ? stored[i]! : layout!.byKey.get(n.key)!;
    nodes.push(Object.freeze({ id: n.key, position: Object.freeze({ x: at.x, y: at.y }), node: n }));
  });
  const edges = doc.edges
    .filter((e) => seen.has(e.from) && seen.has(e.to))
    .map((e) => Object.freeze({ id: e.key, source: e.from, target: e.to, edge: e, text: edgeText(e) }));
  const xs = nodes.map((n) => n.position.x);
  const ys = nodes.map((n) => n.position.y);
  const canvas: Canvas = Object.freeze({
    doc,
    nodes: Object.freeze(nodes),
    edges: Object.freeze(edges),
    byKey: new Map(doc.nodes.map((n) => [n.key, n])),
    width: nodes.length ? Math.max(...xs) - Math.min(...xs) + NODE_WIDTH : 0,
    height: nodes.length ? Math.max(...ys) - Math.min(...ys) + NODE_HEIGHT : 0,
  });
  if (keyObj) cache.set(keyObj, canvas);
  return canvas;
}
