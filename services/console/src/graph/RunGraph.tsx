/**
 * The run's pinned graph, left to right, with each node's live status. Read-only: a click
 * on a node or an edge selects it (the selection goes to the URL); the canvas pans and
 * zooms. Node objects are reused while their overlaid data is unchanged, so a status
 * change re-renders one node, not the graph; only the nodes and edges in the viewport are
 * in the DOM (a 200-node run draws the part on screen, not 200 measured nodes). "Find node"
 * jumps to a node by key or label (the editor's search), for large graphs.
 */
import { memo, useCallback, useLayoutEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import {
  Background,
  BackgroundVariant,
  Controls,
  Handle,
  Panel,
  Position,
  ReactFlow,
  useReactFlow,
  type Edge,
  type Node,
  type NodeProps,
  type Viewport,
} from '@xyflow/react';
import '@xyflow/react/dist/base.css';
import type { NodeRunSummary } from '@flowline/client';
import { HANDLE_SIZE, NODE_HANDLE_OFFSETS, NODE_HEIGHT, NODE_WIDTH, graphToCanvas } from './canvas';
import { overlayRun, type NodeView, type OverlaidEdge, type OverlaidNode } from './overlay';
import { StatusBadge, statusLabel, toneOf } from '../ui/status';
import { KIND_GLYPH } from '../ui/kinds';
import { NodeSearchDialog } from '../editor/NodeSearchDialog';
import type { SearchableNode } from '../editor/model/node-search';

type FlowNodeType = Node<NodeView & Record<string, unknown>, 'flow'>;

const FlowNode = memo(function FlowNode({ data }: NodeProps<FlowNodeType>) {
  return (
    <div className={`graph-node tone-${toneOf(data.status)}${data.selected ? ' is-selected' : ''}`} data-node-key={data.key} data-status={data.status}>
      <Handle type="target" position={Position.Left} isConnectable={false} />
      <div className="graph-node-title" title={data.label === data.key ? data.key : `${data.label} (${data.key})`}>
        <span className="graph-node-glyph" aria-hidden="true">
          {KIND_GLYPH[data.kind] ?? '•'}
        </span>
        <span className="graph-node-label">{data.label}</span>
      </div>
      <div className="graph-node-foot">
        <StatusBadge status={data.status} size="sm" />
        <span className="graph-node-kind">{data.attempt > 1 ? `try ${data.attempt} · ${data.kind}` : data.kind}</span>
      </div>
      <Handle type="source" position={Position.Right} isConnectable={false} />
    </div>
  );
});

const NODE_TYPES = { flow: FlowNode };

/** FlowNode's two handles (see {@link NODE_HANDLE_OFFSETS}). */
const NODE_HANDLES: NonNullable<Node['handles']> = [
  { type: 'target', position: Position.Left, ...NODE_HANDLE_OFFSETS.target, width: HANDLE_SIZE, height: HANDLE_SIZE },
  { type: 'source', position: Position.Right, ...NODE_HANDLE_OFFSETS.source, width: HANDLE_SIZE, height: HANDLE_SIZE },
];

/** The least zoom a whole graph is shown at: below it labels are hard to read. */
export const MIN_FIT_ZOOM = 0.5;
/** A graph too wide for {@link MIN_FIT_ZOOM} is shown at this zoom, centred on what matters. */
export const LEGIBLE_ZOOM = 0.75;
/** The most a small graph is enlarged to fill the view. */
const MAX_FIT_ZOOM = 1.15;
const FIT_PADDING = 32;

/** The zoom a canvas is first shown at in a box `width` wide: the whole graph when that is legible, else {@link LEGIBLE_ZOOM}. */
export function initialZoom(canvasWidth: number, boxWidth: number): number {
  const fit = boxWidth / (canvasWidth + 2 * FIT_PADDING);
  return fit >= MIN_FIT_ZOOM ? Math.min(MAX_FIT_ZOOM, fit) : LEGIBLE_ZOOM;
}

/** The graph box's width assumed before it is measured. */
const GUESSED_BOX_WIDTH = 1000;

/**
 * The viewport a canvas is first shown at in a box `width` × `height`: the whole graph
 * centred when it is legible whole, else the legible zoom centred on the `focus` node (the
 * selected one or the run's frontier; the first node when there is none).
 */
export function initialViewport(
  canvas: { width: number; nodes: ReadonlyArray<{ id: string; position: { x: number; y: number } }> },
  width: number,
  height: number,
  focus: string | undefined,
): Viewport {
  const zoom = initialZoom(canvas.width, width);
  if (canvas.nodes.length === 0) return { x: 0, y: 0, zoom };
  const xs = canvas.nodes.map((n) => n.position.x);
  const ys = canvas.nodes.map((n) => n.position.y);
  const midY = (Math.min(...ys) + Math.max(...ys) + NODE_HEIGHT) / 2;
  const wholeFits = (canvas.width + 2 * FIT_PADDING) * zoom <= width;
  const focused = canvas.nodes.find((n) => n.id === focus) ?? canvas.nodes[0]!;
  const midX = wholeFits ? Math.min(...xs) + canvas.width / 2 : focused.position.x + NODE_WIDTH / 2;
  return { x: width / 2 - midX * zoom, y: height / 2 - midY * zoom, zoom };
}

/** The graph box's height for that zoom: the whole graph's height, no empty bands, within bounds. */
export function graphBoxHeight(canvasHeight: number, zoom: number): number {
  return Math.round(Math.max(180, Math.min(560, canvasHeight * zoom + 2 * FIT_PADDING)));
}

/** Where a run's attention is: a node waiting on a person, else one in flight, else the last to settle. */
function focusOf(nodeRuns: readonly NodeRunSummary[]): string | undefined {
  return (
    nodeRuns.find((n) => n.status === 'WaitingForApproval')?.nodeKey ??
    nodeRuns.find((n) => n.status === 'Running' || n.status === 'Queued')?.nodeKey ??
    nodeRuns.filter((n) => n.status === 'Succeeded' || n.status === 'Failed').at(-1)?.nodeKey
  );
}

function sameView(a: NodeView, b: NodeView): boolean {
  return a.status === b.status && a.attempt === b.attempt && a.selected === b.selected && a.label === b.label && a.pendingDecisionKind === b.pendingDecisionKind;
}

/** The zoom a node found by search is shown at. */
const FOUND_ZOOM = 1;

/** "Find node": search the graph by key or label, select the pick and centre the view on it. */
function FindNode({ nodes, onPick }: { nodes: readonly SearchableNode[]; onPick(key: string): void }) {
  const rf = useReactFlow();
  const [open, setOpen] = useState(false);
  return (
    <Panel position="top-right">
      <button type="button" className="btn btn-sm" onClick={() => setOpen(true)}>
        Find node
      </button>
      {open ? (
        <NodeSearchDialog
          nodes={nodes}
          onClose={() => setOpen(false)}
          onPick={(key) => {
            setOpen(false);
            onPick(key);
            const n = rf.getNode(key);
            if (n) void rf.setCenter(n.position.x + NODE_WIDTH / 2, n.position.y + NODE_HEIGHT / 2, { zoom: Math.max(rf.getZoom(), FOUND_ZOOM), duration: 250 });
          }}
        />
      ) : null}
    </Panel>
  );
}

export interface RunGraphProps {
  graph: unknown;
  nodeRuns: readonly NodeRunSummary[];
  nodeKey?: string | undefined;
  edgeKey?: string | undefined;
  onSelectNode(key: string | undefined): void;
  onSelectEdge(key: string | undefined): void;
}

/**
 * Memoised on its props (the page's selection callbacks are stable): the run page renders
 * again as each of its reads lands, and a 150-node canvas need not be walked for those.
 */
export const RunGraph = memo(function RunGraph({ graph, nodeRuns, nodeKey, edgeKey, onSelectNode, onSelectEdge }: RunGraphProps) {
  const canvas = graphToCanvas(graph);
  const previous = useRef(new Map<string, FlowNodeType>());
  const previousEdges = useRef(new Map<string, Edge>());
  const { nodes, edges } = useMemo(() => {
    const o = overlayRun(canvas, nodeRuns, { nodeKey, edgeKey });
    const next = new Map<string, FlowNodeType>();
    const nodes = o.nodes.map((n: OverlaidNode) => {
      const old = previous.current.get(n.id);
      const node: FlowNodeType =
        old && sameView(old.data, n.data)
          ? old
          : {
              ...n,
              data: { ...n.data },
              // size and handles known up front (styles.css draws exactly these): the edges are
              // routed in the first render, and React Flow has nothing to measure
              width: NODE_WIDTH,
              height: NODE_HEIGHT,
              measured: { width: NODE_WIDTH, height: NODE_HEIGHT },
              handles: NODE_HANDLES,
              ariaLabel: `${n.data.label} (${n.data.kind}): ${statusLabel(n.data.status)}`,
            };
      next.set(n.id, node);
      return node;
    });
    previous.current = next;
    const nextEdges = new Map<string, Edge>();
    const edges: Edge[] = o.edges.map(({ flowing: _flowing, ...e }: OverlaidEdge) => {
      const old = previousEdges.current.get(e.id);
      const edge =
        old && old.className === e.className && old.selected === e.selected
          ? old
          : { ...e, ariaLabel: `edge ${e.id} from ${e.source} to ${e.target}${e.label ? `: ${e.label}` : ''}` };
      nextEdges.set(e.id, edge);
      return edge;
    });
    previousEdges.current = nextEdges;
    return { nodes, edges };
  }, [canvas, nodeRuns, nodeKey, edgeKey]);
  const searchable = useMemo(() => canvas.nodes.map((n) => ({ key: n.id, label: n.node.label, kind: n.node.kind })), [canvas]);

  const box = useRef<HTMLDivElement>(null);
  // the canvas is drawn once the box is measured, already at its first viewport: drawn at
  // React Flow's default and then moved, a large graph would mount one set of nodes and then
  // another (only the nodes in the viewport are in the DOM)
  const [boxWidth, setBoxWidth] = useState<number | null>(null);
  useLayoutEffect(() => setBoxWidth(box.current?.clientWidth ?? GUESSED_BOX_WIDTH), []);
  const boxHeight = graphBoxHeight(canvas.height, initialZoom(canvas.width, boxWidth ?? GUESSED_BOX_WIDTH));
  // set once (lazily, the one write of a ref during render React allows): later selections and progress do not move the view
  const firstViewport = useRef<Viewport | null>(null);
  if (firstViewport.current === null && boxWidth !== null) firstViewport.current = initialViewport(canvas, boxWidth, boxHeight, nodeKey ?? focusOf(nodeRuns));
  const first = firstViewport.current;
  // Enter or Space on a focused node (Tab reaches each one) selects it, as a click does
  const onKeyDown = useCallback(
    (e: KeyboardEvent<HTMLDivElement>) => {
      if (e.key !== 'Enter' && e.key !== ' ') return;
      const el = (e.target as HTMLElement).closest('.react-flow__node, .react-flow__edge');
      const id = el?.getAttribute('data-id');
      if (!el || !id) return;
      e.preventDefault();
      if (el.classList.contains('react-flow__node')) onSelectNode(id === nodeKey ? undefined : id);
      else onSelectEdge(id === edgeKey ? undefined : id);
    },
    [nodeKey, edgeKey, onSelectNode, onSelectEdge],
  );

  return (
    <div className="run-graph" data-testid="run-graph" ref={box} onKeyDown={onKeyDown} style={{ height: boxHeight }}>
      {first === null ? null : (
      <ReactFlow
        nodes={nodes}
        edges={edges}
        nodeTypes={NODE_TYPES}
        defaultViewport={first}
        minZoom={0.15}
        onlyRenderVisibleElements
        nodesDraggable={false}
        nodesConnectable={false}
        edgesFocusable
        nodesFocusable
        elementsSelectable
        onNodeClick={(_, n) => onSelectNode(n.id === nodeKey ? undefined : n.id)}
        onEdgeClick={(_, e) => onSelectEdge(e.id === edgeKey ? undefined : e.id)}
        onPaneClick={() => {
          if (nodeKey) onSelectNode(undefined);
          if (edgeKey) onSelectEdge(undefined);
        }}
        proOptions={{ hideAttribution: false }}
      >
        <Background variant={BackgroundVariant.Dots} gap={18} size={1} color="#d5d9e0" />
        {/* top left, across: a wide graph fills the box from edge to edge, and its ends stay clear */}
        <Controls showInteractive={false} position="top-left" orientation="horizontal" />
        <FindNode nodes={searchable} onPick={onSelectNode} />
      </ReactFlow>
      )}
    </div>
  );
});
