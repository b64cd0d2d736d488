/**
 * Reading the raw graph document a definition or a run carries (CONTRACT §1) without the
 * server's parser: the few members the console shows, tolerant of anything malformed
 * (a run's pinned graph is whatever was valid when it started).
 */
export interface DocNode {
  key: string;
  kind: string;
  label: string;
  config: Record<string, unknown>;
}

export interface DocEdge {
  key: string;
  from: string;
  to: string;
  label: string | null;
  condition: { path?: string; op?: string; value?: unknown } | null;
  isDefault: boolean;
}

export interface GraphDoc {
  kind: 'Standard' | 'Chat';
  nodes: DocNode[];
  edges: DocEdge[];
}

const obj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** The document's nodes and edges (members that are not objects with string keys are left out). */
export function readGraphDoc(graph: unknown): GraphDoc {
  const g = obj(graph);
  const nodes = (Array.isArray(g.nodes) ? g.nodes : []).flatMap((raw): DocNode[] => {
    const n = obj(raw);
    const key = text(n.key);
    if (key === null) return [];
    return [{ key, kind: text(n.kind) ?? 'Unknown', label: text(n.label) ?? key, config: obj(n.config) }];
  });
  const edges = (Array.isArray(g.edges) ? g.edges : []).flatMap((raw): DocEdge[] => {
    const e = obj(raw);
    const key = text(e.key);
    const from = text(e.from);
    const to = text(e.to);
    if (key === null || from === null || to === null) return [];
    const c = e.condition && typeof e.condition === 'object' ? (e.condition as DocEdge['condition']) : null;
    return [{ key, from, to, label: text(e.label), condition: c, isDefault: e.default === true }];
  });
  return { kind: g.kind === 'Chat' ? 'Chat' : 'Standard', nodes, edges };
}

/** The Start node's `defaultInput` (undefined when it has none). */
export function defaultInputOf(graph: unknown): unknown {
  const start = readGraphDoc(graph).nodes.find((n) => n.kind === 'Start');
  const v = start?.config.defaultInput;
  return v === null ? undefined : v;
}
