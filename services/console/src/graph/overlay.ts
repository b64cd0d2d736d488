/**
 * A run's live state drawn over its pinned graph's canvas: each node gets its node run's
 * status, attempt and breakpoint/selection flags; each edge reads taken (its source settled
 * and its target went on), dead (its target was skipped, or its source never ran) or
 * pending, and reads flowing (`edge-flowing`, a static style: an animated edge repaints the
 * whole edge layer every frame, which starves a busy view) while its source runs. Pure: the
 * same inputs give equal output, and the cached canvas is never mutated.
 */
import type { NodeRunSummary } from '@flowline/client';
import type { Canvas } from './canvas';

export interface NodeView {
  key: string;
  kind: string;
  label: string;
  status: string;
  attempt: number;
  pendingDecisionKind: string | null;
  selected: boolean;
}

export interface OverlaidNode {
  id: string;
  type: 'flow';
  position: { x: number; y: number };
  data: NodeView;
  selected: boolean;
}

export type EdgeState = 'taken' | 'dead' | 'pending';

export interface OverlaidEdge {
  id: string;
  source: string;
  target: string;
  label?: string;
  /** true while its source runs (drawn by the `edge-flowing` class, never animated) */
  flowing: boolean;
  selected: boolean;
  className: string;
  data: { state: EdgeState; conditional: boolean };
}

const SETTLED_FORWARD = new Set(['Queued', 'Running', 'Succeeded', 'Failed', 'WaitingForApproval']);
const NEVER_RAN = new Set(['Skipped', 'Cancelled', 'NotRun']);

function edgeState(source: string | undefined, target: string | undefined): EdgeState {
  if (target === 'Skipped' || (source !== undefined && NEVER_RAN.has(source))) return 'dead';
  if ((source === 'Succeeded' || source === 'Failed') && target !== undefined && SETTLED_FORWARD.has(target)) return 'taken';
  return 'pending';
}

/** The canvas with `nodeRuns` overlaid; `selection` marks the node or edge in the URL. */
export function overlayRun(
  canvas: Canvas,
  nodeRuns: readonly NodeRunSummary[],
  selection: { nodeKey?: string | undefined; edgeKey?: string | undefined } = {},
): { nodes: OverlaidNode[]; edges: OverlaidEdge[] } {
  const runs = new Map(nodeRuns.map((n) => [n.nodeKey, n]));
  const nodes = canvas.nodes.map((c): OverlaidNode => {
    const r = runs.get(c.id);
    const selected = selection.nodeKey === c.id;
    return {
      id: c.id,
      type: 'flow',
      position: { x: c.position.x, y: c.position.y },
      selected,
      data: {
        key: c.id,
        kind: c.node.kind,
        label: c.node.label,
        status: r?.status ?? 'Pending',
        attempt: r?.attempt ?? 0,
        pendingDecisionKind: r?.pendingDecisionKind ?? null,
        selected,
      },
    };
  });
  const edges = canvas.edges.map((c): OverlaidEdge => {
    const state = edgeState(runs.get(c.source)?.status, runs.get(c.target)?.status);
    const flowing = runs.get(c.source)?.status === 'Running';
    return {
      id: c.id,
      source: c.source,
      target: c.target,
      ...(c.text ? { label: c.text } : {}),
      flowing,
      selected: selection.edgeKey === c.id,
      className: flowing ? `edge-${state} edge-flowing` : `edge-${state}`,
      data: { state, conditional: c.edge.condition !== null || c.edge.isDefault },
    };
  });
  return { nodes, edges };
}
