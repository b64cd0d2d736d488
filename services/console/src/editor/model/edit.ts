/**
 * The editor's gestures as pure functions of the canvas model: add a node from the palette
 * (a fresh key, the kind's starter config from the member descriptions), connect two nodes
 * (refusing a second unconditional edge over one pair at the gesture, prefilling the
 * condition a Pause, DecisionModel or Condition source routes on, and adding the context
 * edge around a Pause or ChatInput), change a node's or an edge's document, rename a key,
 * remove elements.
 */
import { KEY_PATTERN, NODE_KIND_SPECS, pauseContextEdges, type ContextEdge, type NodeKind } from '@flowline/graph';
import { configOf, kindOf, withMember, withoutMember, type CanvasModel, type Doc, type FlowEdge, type FlowNode } from './canvas';

/** A key for a new element: `base`, else `base-2`, `base-3`, … — free among node and edge keys. */
export function freshKey(m: CanvasModel, base: string): string {
  const taken = new Set([...m.nodes.map((n) => n.id), ...m.edges.map((e) => e.id)]);
  const clean = base.replace(/[^A-Za-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 56) || 'node';
  if (!taken.has(clean)) return clean;
  for (let i = 2; ; i++) if (!taken.has(`${clean}-${i}`)) return `${clean}-${i}`;
}

/** `DecisionModel` → `decision-model`. */
export function kebab(kind: string): string {
  return kind.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase();
}

/** Adds a node of `kind` at `position`; its key is the kebab-cased kind, made unique. */
export function addNode(m: CanvasModel, kind: NodeKind, position: { x: number; y: number }): { model: CanvasModel; key: string } {
  const key = freshKey(m, kebab(kind));
  const starter = NODE_KIND_SPECS[kind].starter;
  const doc: Doc = { key, kind, ...(Object.keys(starter).length > 0 ? { config: structuredClone(starter) } : {}), position };
  const node: FlowNode = { id: key, type: 'flow', position, data: { doc } };
  return { model: { ...m, nodes: [...m.nodes, node] }, key };
}

/** True for an edge with neither a condition nor `default: true`. */
export function isUnconditional(e: FlowEdge): boolean {
  const d = e.data?.doc ?? {};
  return (d.condition === undefined || d.condition === null) && d.default !== true;
}

/** A connection made: the model, the keys of the edges added (the gesture's first), and the context edges among them. */
export type ConnectResult = { ok: true; model: CanvasModel; added: string[]; context: ContextEdge[] } | { ok: false; reason: string };

/** The condition a new out-edge of `source` starts with (what that kind routes on), or null. */
function prefill(m: CanvasModel, source: FlowNode): Doc | null {
  const kind = kindOf(source.data.doc);
  const outs = m.edges.filter((e) => e.source === source.id);
  const taken = new Set(outs.map((e) => (e.data?.doc.condition as Doc | undefined)?.value));
  const cfg = configOf(source.data.doc);
  const next = (values: unknown): unknown => (Array.isArray(values) ? values.find((v) => !taken.has(v)) : undefined);
  if (kind === 'Pause') {
    const v = next(cfg.allowedDecisions);
    return v === undefined ? null : { path: 'output.decision', op: 'Eq', value: v };
  }
  if (kind === 'DecisionModel') {
    const v = next(cfg.labels);
    return v === undefined ? null : { path: 'output.choice', op: 'Eq', value: v };
  }
  if (kind === 'Condition') return outs.length === 0 ? { op: 'Eq', value: true } : null;
  return null;
}

/**
 * Connects `source` → `target`. Refused: a self-loop, an unknown node, or a second
 * unconditional edge over the pair. A Condition's second out-edge is its default edge. Wiring
 * into or out of a Pause or ChatInput also adds the context edges the graph core's
 * `pauseContextEdges` owes (labelled `context`), so a successor receives the content before
 * the wait, not only the decision; the caller tells the author they appeared.
 */
export function connect(m: CanvasModel, source: string, target: string, sourceHandle?: string | null): ConnectResult {
  if (source === target) return { ok: false, reason: 'A node cannot connect to itself.' };
  const from = m.nodes.find((n) => n.id === source);
  const to = m.nodes.find((n) => n.id === target);
  if (!from || !to) return { ok: false, reason: 'Both ends must be nodes of this graph.' };
  const pair = m.edges.filter((e) => e.source === source && e.target === target);
  const condition = prefill(m, from);
  const kind = kindOf(from.data.doc);
  const isDefault = condition === null && kind === 'Condition' && !m.edges.some((e) => e.source === source && e.data?.doc.default === true);
  if (condition === null && !isDefault && pair.some(isUnconditional)) {
    return { ok: false, reason: `${source} → ${target} already has an unconditional edge; give it a condition, or add a condition to this one.` };
  }
  const key = freshKey(m, `${source}-${target}`);
  const doc: Doc = { key, from: source, to: target, ...(condition ? { condition } : {}), ...(isDefault ? { default: true } : {}) };
  if (typeof condition?.value === 'string') doc.label = condition.value;
  if (sourceHandle) doc.sourceHandle = sourceHandle;
  const edge: FlowEdge = { id: key, source, target, data: { doc }, ...(sourceHandle ? { sourceHandle } : {}) };
  let next: CanvasModel = { ...m, edges: [...m.edges, edge] };
  const added = [key];
  const context = pauseContextEdges(
    {
      nodes: next.nodes.map((n) => ({ key: n.id, kind: kindOf(n.data.doc) ?? '', joinPolicy: n.data.doc.joinPolicy })),
      edges: next.edges.map((e) => ({ from: e.source, to: e.target })),
    },
    { from: source, to: target },
  );
  for (const c of context) {
    const ctxKey = freshKey(next, `${c.from}-${c.to}-context`);
    next = { ...next, edges: [...next.edges, { id: ctxKey, source: c.from, target: c.to, data: { doc: { key: ctxKey, from: c.from, to: c.to, label: 'context' } } }] };
    added.push(ctxKey);
  }
  return { ok: true, model: next, added, context };
}

/** Replaces the document of node `key` (its key and position stay the canvas node's). */
export function setNodeDoc(m: CanvasModel, key: string, doc: Doc): CanvasModel {
  return { ...m, nodes: m.nodes.map((n) => (n.id === key ? { ...n, data: { doc } } : n)) };
}

/** Replaces the document of edge `key`. */
export function setEdgeDoc(m: CanvasModel, key: string, doc: Doc): CanvasModel {
  return {
    ...m,
    edges: m.edges.map((e) => {
      if (e.id !== key) return e;
      const handle = typeof doc.sourceHandle === 'string' ? doc.sourceHandle : undefined;
      const { sourceHandle: _drop, ...rest } = e;
      return { ...rest, ...(handle ? { sourceHandle: handle } : {}), data: { doc } };
    }),
  };
}

/** Sets (or, with `undefined`, removes) one config member of node `key`; an empty config is dropped. */
export function setConfigMember(m: CanvasModel, key: string, member: string, value: unknown): CanvasModel {
  const node = m.nodes.find((n) => n.id === key);
  if (!node) return m;
  const cfg = configOf(node.data.doc);
  const nextCfg = value === undefined ? withoutMember(cfg, member) : withMember(cfg, member, value);
  const doc = Object.keys(nextCfg).length === 0 ? withoutMember(node.data.doc, 'config') : withMember(node.data.doc, 'config', nextCfg);
  return setNodeDoc(m, key, doc);
}

/** Sets (or removes) a node-level member of node `key`. */
export function setNodeMember(m: CanvasModel, key: string, member: string, value: unknown): CanvasModel {
  const node = m.nodes.find((n) => n.id === key);
  if (!node) return m;
  return setNodeDoc(m, key, value === undefined ? withoutMember(node.data.doc, member) : withMember(node.data.doc, member, value));
}

/** Sets (or removes) a member of edge `key`. */
export function setEdgeMember(m: CanvasModel, key: string, member: string, value: unknown): CanvasModel {
  const edge = m.edges.find((e) => e.id === key);
  if (!edge) return m;
  const doc = edge.data?.doc ?? {};
  return setEdgeDoc(m, key, value === undefined ? withoutMember(doc, member) : withMember(doc, member, value));
}

/** Why `next` cannot be the new key of element `current` (null when it can). */
export function keyProblem(m: CanvasModel, current: string, next: string): string | null {
  if (!KEY_PATTERN.test(next)) return "1–64 letters, digits, '_' or '-'.";
  if (next !== current && (m.nodes.some((n) => n.id === next) || m.edges.some((e) => e.id === next))) return `'${next}' is taken (node and edge keys share one namespace).`;
  return null;
}

/** Renames node `from` to `to`, moving its edges' ends along. */
export function renameNode(m: CanvasModel, from: string, to: string): CanvasModel {
  return {
    ...m,
    nodes: m.nodes.map((n) => (n.id === from ? { ...n, id: to, data: { doc: withMember(n.data.doc, 'key', to) } } : n)),
    edges: m.edges.map((e) =>
      e.source !== from && e.target !== from
        ? e
        : {
            ...e,
            source: e.source === from ? to : e.source,
            target: e.target === from ? to : e.target,
            data: { doc: { ...(e.data?.doc ?? {}), ...(e.source === from ? { from: to } : {}), ...(e.target === from ? { to } : {}) } },
          },
    ),
    laidOut: m.laidOut.map((k) => (k === from ? to : k)),
  };
}

/** Renames edge `from` to `to`. */
export function renameEdge(m: CanvasModel, from: string, to: string): CanvasModel {
  return { ...m, edges: m.edges.map((e) => (e.id === from ? { ...e, id: to, data: { doc: withMember(e.data?.doc ?? {}, 'key', to) } } : e)) };
}

/** Removes nodes (with their edges) and edges. */
export function removeElements(m: CanvasModel, nodeKeys: readonly string[], edgeKeys: readonly string[]): CanvasModel {
  const nodes = new Set(nodeKeys);
  const edges = new Set(edgeKeys);
  return {
    ...m,
    nodes: m.nodes.filter((n) => !nodes.has(n.id)),
    edges: m.edges.filter((e) => !edges.has(e.id) && !nodes.has(e.source) && !nodes.has(e.target)),
  };
}

/** Sets (or removes) a graph-level member (kind, chat, inputSchema, …). */
export function setGraphMember(m: CanvasModel, member: string, value: unknown): CanvasModel {
  return { ...m, rest: value === undefined ? withoutMember(m.rest, member) : withMember(m.rest, member, value) };
}
