/**
 * The canvas (@xyflow/react): per-kind node cards (kind, label, the one fact that matters,
 * the server's issues), edges drawn by connecting handles with their label or condition
 * on the edge, default edges dashed, an edge or node with an error outlined red and with a
 * warning amber. Connecting goes through `connect` (a second unconditional edge over one
 * pair is refused at the gesture); a node dropped from the palette lands where it is dropped.
 * Read-only (an old version), nodes and edges can be selected but not moved, connected or
 * deleted. By keyboard, Tab reaches a card, Enter selects it, Delete or Backspace removes
 * the selection and the arrow keys move it.
 */
import { memo, useCallback, useMemo, useRef, type DragEvent } from 'react';
import {
  Background,
  Controls,
  Handle,
  MarkerType,
  MiniMap,
  Position,
  ReactFlow,
  applyEdgeChanges,
  applyNodeChanges,
  useReactFlow,
  type Connection,
  type EdgeChange,
  type NodeChange,
  type NodeProps,
} from '@xyflow/react';
import { NODE_KIND_SPECS, NODE_KINDS, type NodeKind } from '@flowline/graph';
import { configOf, kindOf, type CanvasModel, type FlowEdge, type FlowNode } from '../model/canvas';
import { addNode, connect, removeElements } from '../model/edit';
import { levelOf, type IssueIndex } from '../model/issues';
import type { Selection } from '../inspector/Inspector';
import type { DiffMark, SideMarks } from '../model/diff';
import { PALETTE_MIME } from '../Palette';

/** The fact a card shows for its kind (model, tool, decisions, join policy, …). */
export function factOf(doc: Record<string, unknown>): string | null {
  const kind = kindOf(doc);
  if (!kind || !(kind in NODE_KIND_SPECS)) return null;
  const fact = NODE_KIND_SPECS[kind].fact;
  if (fact === null) return null;
  if (fact === 'joinPolicy') {
    const j = doc.joinPolicy;
    return `join ${j && typeof j === 'object' ? `quorum ${(j as { quorum?: unknown }).quorum}` : typeof j === 'string' ? j : 'All'}`;
  }
  const v = configOf(doc)[fact];
  if (v === undefined || v === null) return fact === 'model' ? 'default model' : null;
  if (Array.isArray(v)) return v.join(' · ');
  return typeof v === 'string' ? v : JSON.stringify(v);
}

interface CardData extends Record<string, unknown> {
  doc: Record<string, unknown>;
  issue: 'error' | 'warning' | null;
  issueCount: number;
  /** what a diff says of this node (the diff view only) */
  mark: DiffMark | null;
}

const NodeCard = memo(function NodeCard({ id, data, selected }: NodeProps<FlowNode & { data: CardData }>) {
  const d = data as CardData;
  const kind = kindOf(d.doc);
  const spec = kind && kind in NODE_KIND_SPECS ? NODE_KIND_SPECS[kind] : null;
  const label = typeof d.doc.label === 'string' && d.doc.label !== '' ? d.doc.label : id;
  const fact = factOf(d.doc);
  return (
    <div
      className={`node-card group-${spec?.group ?? 'flow'}${selected ? ' is-selected' : ''}${d.issue ? ` has-${d.issue}` : ''}${d.mark ? ` diff-${d.mark}` : ''}`}
      data-node-key={id}
      data-issue={d.issue ?? undefined}
      data-diff={d.mark ?? undefined}
    >
      {d.mark ? <span className="visually-hidden">{d.mark} </span> : null}
      {kind !== 'Start' ? <Handle type="target" position={Position.Left} /> : null}
      <div className="node-card-top">
        <span className="node-kind">{kind ?? '?'}</span>
        {d.issue ? (
          <span className={`node-issue is-${d.issue}`} title={`${d.issueCount} ${d.issue === 'error' ? 'problem' : 'note'}${d.issueCount === 1 ? '' : 's'}`}>
            {d.issue === 'error' ? '!' : '?'} {d.issueCount}
          </span>
        ) : null}
      </div>
      <div className="node-label">{label}</div>
      {fact ? <div className="node-fact mono">{fact}</div> : label !== id ? <div className="node-fact mono muted">{id}</div> : null}
      {kind !== 'End' ? <Handle type="source" position={Position.Right} /> : null}
    </div>
  );
});

const nodeTypes = { flow: NodeCard };

/**
 * Fit-view shows every node: no lower bound that would leave a wide graph cut at the canvas's
 * edges (a narrow canvas zooms out rather than hiding nodes behind the palette or inspector).
 */
export const FIT_VIEW = { padding: 0.12, maxZoom: 1.1, minZoom: 0.1 } as const;

/** The minimap's frame; its drawing is sized to it and clipped by it. */
export const MINIMAP = { width: 168, height: 112 } as const;

/** The text an edge shows: its label, else its condition, else "default" for a default edge. */
export function edgeText(doc: Record<string, unknown>): string | undefined {
  if (typeof doc.label === 'string' && doc.label !== '') return doc.label;
  const c = doc.condition as { path?: unknown; op?: unknown; value?: unknown } | null | undefined;
  if (c && typeof c === 'object') {
    const op = typeof c.op === 'string' ? c.op : '?';
    const valueless = /exists$/i.test(op);
    return `${typeof c.path === 'string' ? `${c.path} ` : ''}${op}${valueless ? '' : ` ${JSON.stringify(c.value)}`}`;
  }
  return doc.default === true ? 'default' : undefined;
}

interface Props {
  model: CanvasModel;
  setModel(f: (m: CanvasModel) => CanvasModel): void;
  issues: IssueIndex;
  selection: Selection;
  select(s: Selection): void;
  onRefused(reason: string): void;
  /** says what the canvas did on its own (a context edge it added) */
  onNotice?(text: string): void;
  /** selection only: no move, connect, drop or delete */
  readOnly?: boolean;
  /** elements a version diff marks added, removed or changed (the diff view) */
  marks?: SideMarks;
  /** draw the minimap (default true; a half-width canvas has no room for it) */
  minimap?: boolean;
}

export function FlowCanvas({ model, setModel, issues, selection, select, onRefused, onNotice, readOnly = false, marks, minimap = true }: Props) {
  const rf = useReactFlow();
  // a drawn node keeps its identity while its source node, selection and issues are unchanged,
  // so a drag re-renders the dragged card only
  const drawn = useRef(new Map<string, { src: FlowNode; selected: boolean; issues: unknown; mark: DiffMark | null; out: FlowNode }>());
  const nodes = useMemo(() => {
    const cache = drawn.current;
    const next = new Map<string, { src: FlowNode; selected: boolean; issues: unknown; mark: DiffMark | null; out: FlowNode }>();
    const out = model.nodes.map((n) => {
      const selected = selection?.kind === 'node' && selection.key === n.id;
      const own = issues.byKey.get(n.id);
      const mark = marks?.nodes.get(n.id) ?? null;
      const hit = cache.get(n.id);
      if (hit && hit.src === n && hit.selected === selected && hit.issues === own && hit.mark === mark) {
        next.set(n.id, hit);
        return hit.out;
      }
      const data: CardData = { doc: n.data.doc, issue: levelOf(issues, n.id), issueCount: own?.length ?? 0, mark };
      const drawnNode = { ...n, selected, data } as FlowNode;
      next.set(n.id, { src: n, selected, issues: own, mark, out: drawnNode });
      return drawnNode;
    });
    drawn.current = next;
    return out;
  }, [model.nodes, issues, selection, marks]);
  const edges = useMemo(
    () =>
      model.edges.map((e): FlowEdge => {
        const doc = e.data?.doc ?? {};
        const level = levelOf(issues, e.id);
        const selected = selection?.kind === 'edge' && selection.key === e.id;
        const text = edgeText(doc);
        // inline SVG styles: the PNG export clones the drawing, and class styles do not reach SVG clones
        const stroke = level === 'error' ? '#dc2626' : level === 'warning' ? '#d97706' : selected ? '#4f46e5' : doc.condition ? '#6366f1' : '#94a3b8';
        return {
          ...e,
          selected,
          style: { stroke, strokeWidth: level === 'error' || selected ? 2.2 : 1.4, ...(doc.default === true ? { strokeDasharray: '6 4' } : {}) },
          labelStyle: { fill: level === 'error' ? '#dc2626' : '#3b4352', fontFamily: 'ui-monospace, monospace', fontSize: 11 },
          labelBgStyle: { fill: '#ffffff', stroke: '#e2e5eb' },
          ...(text !== undefined ? { label: text } : {}),
          className: [level ? `has-${level}` : '', doc.default === true ? 'is-default' : '', doc.condition ? 'is-conditional' : '', marks?.edges.has(e.id) ? `diff-${marks.edges.get(e.id)}` : '']
            .filter(Boolean)
            .join(' '),
          markerEnd: { type: MarkerType.ArrowClosed, width: 16, height: 16 },
          labelBgPadding: [6, 3],
          labelBgBorderRadius: 4,
          interactionWidth: 16,
        };
      }),
    [model.edges, issues, selection, marks],
  );

  const onNodesChange = useCallback(
    (changes: NodeChange<FlowNode>[]) => {
      const removed = readOnly ? [] : changes.flatMap((c) => (c.type === 'remove' ? [c.id] : []));
      const rest = changes.filter((c) => (c.type === 'position' && !readOnly) || c.type === 'dimensions');
      for (const c of changes) if (c.type === 'select' && c.selected) select({ kind: 'node', key: c.id });
      if (removed.length > 0) setModel((m) => removeElements(m, removed, []));
      if (rest.length > 0) setModel((m) => ({ ...m, nodes: applyNodeChanges(rest, m.nodes) }));
    },
    [setModel, select, readOnly],
  );
  const onEdgesChange = useCallback(
    (changes: EdgeChange<FlowEdge>[]) => {
      const removed = readOnly ? [] : changes.flatMap((c) => (c.type === 'remove' ? [c.id] : []));
      for (const c of changes) if (c.type === 'select' && c.selected) select({ kind: 'edge', key: c.id });
      if (removed.length > 0) setModel((m) => ({ ...m, edges: applyEdgeChanges(removed.map((id) => ({ type: 'remove', id })), m.edges) }));
    },
    [setModel, select, readOnly],
  );
  const onConnect = useCallback(
    (c: Connection) => {
      setModel((m) => {
        const r = connect(m, c.source, c.target, c.sourceHandle);
        if (!r.ok) {
          onRefused(r.reason);
          return m;
        }
        select({ kind: 'edge', key: r.added[0]! });
        if (r.context.length > 0) {
          const list = r.context.map((e) => `${e.from} → ${e.to}`).join(', ');
          onNotice?.(`Added the context edge ${list}: the node after the wait receives that content, not only the decision.`);
        }
        return r.model;
      });
    },
    [setModel, onRefused, onNotice, select],
  );
  const onDrop = useCallback(
    (e: DragEvent) => {
      const kind = e.dataTransfer.getData(PALETTE_MIME);
      if (readOnly || !(NODE_KINDS as readonly string[]).includes(kind)) return;
      e.preventDefault();
      const at = rf.screenToFlowPosition({ x: e.clientX, y: e.clientY });
      setModel((m) => {
        const r = addNode(m, kind as NodeKind, { x: Math.round(at.x - 110), y: Math.round(at.y - 30) });
        select({ kind: 'node', key: r.key });
        return r.model;
      });
    },
    [rf, setModel, select, readOnly],
  );

  return (
    <div className="canvas" onDragOver={(e) => e.preventDefault()} onDrop={onDrop}>
      <ReactFlow
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        onNodesChange={onNodesChange}
        onEdgesChange={onEdgesChange}
        onConnect={onConnect}
        onPaneClick={() => select(null)}
        deleteKeyCode={readOnly ? null : ['Delete', 'Backspace']}
        nodesDraggable={!readOnly}
        nodesConnectable={!readOnly}
        fitView
        fitViewOptions={FIT_VIEW}
        minZoom={0.1}
        proOptions={{ hideAttribution: true }}
        onlyRenderVisibleElements
      >
        <Background gap={20} size={1} />
        {minimap ? <MiniMap pannable zoomable ariaLabel="Overview" style={{ width: MINIMAP.width, height: MINIMAP.height }} /> : null}
        <Controls showInteractive={false} fitViewOptions={FIT_VIEW} />
      </ReactFlow>
    </div>
  );
}
