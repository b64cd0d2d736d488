/**
 * The server's keyed errors and warnings (`POST /v1/definitions/validate`, CONTRACT §1.4)
 * placed on the canvas: an issue whose key names a node or an edge belongs to that
 * element; a null key, or a key that names nothing on the canvas, belongs to the graph.
 */
import type { Issue } from '@flowline/client';
import type { CanvasModel } from './canvas';

export type IssueLevel = 'error' | 'warning';

/** One issue, where it is drawn. */
export interface PlacedIssue extends Issue {
  level: IssueLevel;
  /** what the key names: a node, an edge, or the graph */
  target: 'node' | 'edge' | 'graph';
}

/** Issues by element key, and the graph's own. */
export interface IssueIndex {
  all: PlacedIssue[];
  byKey: ReadonlyMap<string, PlacedIssue[]>;
  graph: PlacedIssue[];
  errorCount: number;
  warningCount: number;
}

export const NO_ISSUES: IssueIndex = { all: [], byKey: new Map(), graph: [], errorCount: 0, warningCount: 0 };

/** Places a validation answer on the model's elements; errors first, each list in answer order. */
export function placeIssues(m: CanvasModel, v: { errors: Issue[]; warnings: Issue[] }): IssueIndex {
  const nodes = new Set(m.nodes.map((n) => n.id));
  const edges = new Set(m.edges.map((e) => e.id));
  const place = (i: Issue, level: IssueLevel): PlacedIssue => ({
    ...i,
    level,
    target: i.key !== null && nodes.has(i.key) ? 'node' : i.key !== null && edges.has(i.key) ? 'edge' : 'graph',
  });
  const all = [...v.errors.map((i) => place(i, 'error')), ...v.warnings.map((i) => place(i, 'warning'))];
  const byKey = new Map<string, PlacedIssue[]>();
  for (const i of all) if (i.target !== 'graph') byKey.set(i.key!, [...(byKey.get(i.key!) ?? []), i]);
  return { all, byKey, graph: all.filter((i) => i.target === 'graph'), errorCount: v.errors.length, warningCount: v.warnings.length };
}

/** The worst level among an element's issues (null when it has none). */
export function levelOf(index: IssueIndex, key: string): IssueLevel | null {
  const list = index.byKey.get(key);
  if (!list || list.length === 0) return null;
  return list.some((i) => i.level === 'error') ? 'error' : 'warning';
}
