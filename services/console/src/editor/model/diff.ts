/**
 * What the diff view draws from a definition diff (`GET /v1/definitions/{id}/diff`): a mark
 * per element of each side — on the older ("from") side the removed and changed ones, on the
 * newer ("to") side the added and changed ones — so both canvases, side by side, highlight
 * what moved between the two versions. A member change is shown as text, one line each.
 */
import type { DefinitionDiff, MemberChange } from '@flowline/client';

export type DiffMark = 'added' | 'removed' | 'changed';

export interface SideMarks {
  nodes: ReadonlyMap<string, DiffMark>;
  edges: ReadonlyMap<string, DiffMark>;
}

/** The marks of the older side (`from`) and of the newer side (`to`). */
export function diffMarks(d: DefinitionDiff): { from: SideMarks; to: SideMarks } {
  const changedNodes = d.nodes.changed.map((n) => [n.key, 'changed'] as const);
  const changedEdges = d.edges.changed.map((e) => [e.key, 'changed'] as const);
  return {
    from: {
      nodes: new Map<string, DiffMark>([...d.nodes.removed.map((n) => [n.key, 'removed'] as const), ...changedNodes]),
      edges: new Map<string, DiffMark>([...d.edges.removed.map((e) => [e.key, 'removed'] as const), ...changedEdges]),
    },
    to: {
      nodes: new Map<string, DiffMark>([...d.nodes.added.map((n) => [n.key, 'added'] as const), ...changedNodes]),
      edges: new Map<string, DiffMark>([...d.edges.added.map((e) => [e.key, 'added'] as const), ...changedEdges]),
    },
  };
}

/** A value as one short line: JSON, cut at `max` characters; absent reads "(absent)". */
export function valueText(v: unknown, max = 80): string {
  if (v === null || v === undefined) return '(absent)';
  const s = JSON.stringify(v);
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** One member change as "member: before → after". */
export function changeText(c: MemberChange): string {
  return `${c.member}: ${valueText(c.from)} → ${valueText(c.to)}`;
}

/** How many elements the diff touches (nodes and edges added, removed or changed, plus schema and graph members). */
export function changeCount(d: DefinitionDiff): number {
  return (
    d.nodes.added.length +
    d.nodes.removed.length +
    d.nodes.changed.length +
    d.edges.added.length +
    d.edges.removed.length +
    d.edges.changed.length +
    (d.inputSchema.changed ? 1 : 0) +
    (d.stateSchema.changed ? 1 : 0) +
    d.graph.length
  );
}
