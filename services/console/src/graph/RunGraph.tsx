/**
 * The run's pinned graph, left to right, with each node's live status. Read-only: a click
 * on a node or an edge selects it (the selection goes to the URL); the canvas pans and
 * zooms. Node objects are reused while their overlaid data is unchanged, so a status
 * change re-renders one node, not the graph.
 */
import { memo, useCallback, useMemo, useRef } from 'react';
import {
  Background,
  BackgroundVariant,
  Controls,
  Handle,
  Position,
  ReactFlow,
  type Edge,
  type Node,
  type NodeProps,
  type ReactFlowInstance,
} from '@xyflow/react';
import '@xyflow/react/dist/base.css';
import type { NodeRunSummary } from '@flowline/client';
import { NODE_HEIGHT, NODE_WIDTH, graphToCanvas } from './canvas';
import { overlayRun, type NodeView, type OverlaidEdge, type OverlaidNode } from './overlay';
import { StatusBadge, statusLabel, toneOf } from '../ui/status';
import { KIND_GLYPH } from '../ui/kinds';

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

/** Below this zoom labels are hard to read: a larger graph is shown at it, centred on what matters. */
const MIN_LEGIBLE_ZOOM = 0.6;

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

export interface RunGraphProps {
  graph: unknown;
  nodeRuns: readonly NodeRunSummary[];
  nodeKey?: string | undefined;
  edgeKey?: string | undefined;
  onSelectNode(key: string | undefined): void;
  onSelectEdge(key: string | undefined): void;
}

export function RunGraph({ graph, nodeRuns, nodeKey, edgeKey, onSelectNode, onSelectEdge }: RunGraphProps) {
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
              ariaLabel: `${n.data.label} (${n.data.kind}): ${statusLabel(n.data.status)}`,
            };
      next.set(n.id, node);
      return node;
    });
    previous.current = next;
    const nextEdges = new Map<string, Edge>();
    const edges: Edge[] = o.edges.map((e: OverlaidEdge) => {
      const old = previousEdges.current.get(e.id);
      const edge =
        old && old.className === e.className && old.animated === e.animated && old.selected === e.selected
          ? old
          : { ...e, ariaLabel: `edge ${e.id} from ${e.source} to ${e.target}${e.label ? `: ${e.label}` : ''}` };
      nextEdges.set(e.id, edge);
      return edge;
    });
    previousEdges.current = nextEdges;
    return { nodes, edges };
  }, [canvas, nodeRuns, nodeKey, edgeKey]);

  const box = useRef<HTMLDivElement>(null);
  const frontier = useRef<string | undefined>(undefined);
  frontier.current = nodeKey ?? focusOf(nodeRuns);
  // the whole graph when it fits at a legible zoom; else legible, centred on the selected node or the run's frontier
  const onInit = useCallback(
    (rf: ReactFlowInstance<FlowNodeType, Edge>) => {
      const width = box.current?.clientWidth ?? 800;
      const height = box.current?.clientHeight ?? 400;
      const fits = Math.min(width / (canvas.width + 80), height / (canvas.height + 80));
      if (fits >= MIN_LEGIBLE_ZOOM) {
        void rf.fitView({ padding: 0.12, maxZoom: 1.15 });
        return;
      }
      const focus = canvas.nodes.find((n) => n.id === frontier.current) ?? canvas.nodes[0];
      if (focus) void rf.setCenter(focus.position.x + NODE_WIDTH / 2, focus.position.y + NODE_HEIGHT / 2, { zoom: MIN_LEGIBLE_ZOOM });
    },
    [canvas],
  );

  return (
    <div className="run-graph" data-testid="run-graph" ref={box} style={{ height: Math.max(260, Math.min(540, canvas.height + 150)) }}>
      <ReactFlow
        nodes={nodes}
        edges={edges}
        nodeTypes={NODE_TYPES}
        onInit={onInit}
        minZoom={0.15}
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
        <Controls showInteractive={false} position="bottom-right" />
      </ReactFlow>
    </div>
  );
}
