/**
 * The run's pinned graph, left to right, with each node's live status. Read-only: a click
 * on a node or an edge selects it (the selection goes to the URL); the canvas pans and
 * zooms. Node objects are reused while their overlaid data is unchanged, so a status
 * change re-renders one node, not the graph.
 */
import { memo, useMemo, useRef } from 'react';
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
} from '@xyflow/react';
import '@xyflow/react/dist/base.css';
import type { NodeRunSummary } from '@flowline/client';
import { graphToCanvas } from './canvas';
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
    const edges: Edge[] = o.edges.map((e: OverlaidEdge) => ({ ...e, ariaLabel: `edge ${e.id} from ${e.source} to ${e.target}${e.label ? `: ${e.label}` : ''}` }));
    return { nodes, edges };
  }, [canvas, nodeRuns, nodeKey, edgeKey]);

  return (
    <div className="run-graph" data-testid="run-graph" style={{ height: Math.max(260, Math.min(540, canvas.height + 150)) }}>
      <ReactFlow
        nodes={nodes}
        edges={edges}
        nodeTypes={NODE_TYPES}
        fitView
        fitViewOptions={{ padding: 0.12, maxZoom: 1.15, minZoom: 0.5 }}
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
