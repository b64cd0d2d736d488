/**
 * The one layered-DAG layout of Flowline (left to right), shared by the console's run
 * view, the editor's auto-arrange and the describe/render code:
 *
 * 1. **Ranks**: longest path from the sources, computed in Kahn order — a node's rank is
 *    one more than the highest rank of its predecessors, sources are rank 0. Among ready
 *    nodes Kahn's queue takes the smallest key first, which fixes the initial order of
 *    each rank.
 * 2. **Order**: one barycenter pass, rank by rank from rank 1: a node moves to the mean
 *    order of its predecessors; ties (and equal means) are broken by node key.
 * 3. **Coordinates**: `x` by rank, `y` by order, each rank centred on the tallest one.
 *
 * The result is a function of the node SET and edge SET only (never of their array
 * order), so a document re-saved with its members shuffled lays out the same. The
 * function is total: edges naming unknown nodes and self-loops are ignored, a repeated
 * node key is placed once, and nodes on a cycle (an editor mid-edit; a stored graph is
 * acyclic) are ranked after the acyclic part in key order instead of being dropped.
 */

/** What the layout reads of a graph: node keys and edge endpoints. */
export interface LayoutGraph {
  nodes: ReadonlyArray<{ readonly key: string }>;
  edges: ReadonlyArray<{ readonly from: string; readonly to: string }>;
}

/** Box sizes and gaps, in canvas units. */
export interface LayoutOptions {
  /** @default 200 */
  nodeWidth?: number;
  /** @default 64 */
  nodeHeight?: number;
  /** horizontal gap between two ranks @default 80 */
  rankGap?: number;
  /** vertical gap between two nodes of one rank @default 32 */
  nodeGap?: number;
}

/** Where one node goes: its rank (column), its order within the rank (row) and its top-left corner. */
export interface NodePlacement {
  key: string;
  rank: number;
  order: number;
  x: number;
  y: number;
}

/** The layout of a graph. */
export interface GraphLayout {
  /** one placement per distinct node key, in rank then order */
  placements: NodePlacement[];
  /** node keys per rank, each in its final order */
  ranks: string[][];
  /** placement by node key */
  byKey: ReadonlyMap<string, NodePlacement>;
  /** extent of the drawing (0 × 0 for an empty graph) */
  width: number;
  height: number;
}

export const LAYOUT_DEFAULTS: Required<LayoutOptions> = { nodeWidth: 200, nodeHeight: 64, rankGap: 80, nodeGap: 32 };

const byKey = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** A binary min-heap of keys (Kahn's ready set, smallest key first). */
class KeyHeap {
  private readonly items: string[] = [];
  get size(): number {
    return this.items.length;
  }
  push(k: string): void {
    const a = this.items;
    a.push(k);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (byKey(a[p]!, a[i]!) <= 0) break;
      [a[p], a[i]] = [a[i]!, a[p]!];
      i = p;
    }
  }
  pop(): string {
    const a = this.items;
    const top = a[0]!;
    const last = a.pop()!;
    if (a.length > 0) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && byKey(a[l]!, a[m]!) < 0) m = l;
        if (r < a.length && byKey(a[r]!, a[m]!) < 0) m = r;
        if (m === i) break;
        [a[m], a[i]] = [a[i]!, a[m]!];
        i = m;
      }
    }
    return top;
  }
}

/** Predecessor lists (distinct, known, non-self) and out-degree-aware successor lists. */
function adjacency(g: LayoutGraph): { keys: string[]; preds: Map<string, string[]>; succs: Map<string, string[]> } {
  const keys = [...new Set(g.nodes.map((n) => n.key))].sort(byKey);
  const preds = new Map<string, string[]>(keys.map((k) => [k, []]));
  const succs = new Map<string, string[]>(keys.map((k) => [k, []]));
  const seen = new Set<string>();
  for (const e of g.edges) {
    if (e.from === e.to || !preds.has(e.from) || !preds.has(e.to)) continue;
    const pair = `${e.from.length}:${e.from}>${e.to}`;
    if (seen.has(pair)) continue;
    seen.add(pair);
    preds.get(e.to)!.push(e.from);
    succs.get(e.from)!.push(e.to);
  }
  return { keys, preds, succs };
}

/** Longest-path ranks in Kahn order; the order in which nodes were ranked. */
function rankNodes(keys: string[], preds: Map<string, string[]>, succs: Map<string, string[]>) {
  const rank = new Map<string, number>();
  const visited: string[] = [];
  const waiting = new Map(keys.map((k) => [k, preds.get(k)!.length]));
  const ready = new KeyHeap();
  for (const k of keys) if (waiting.get(k) === 0) ready.push(k);
  const place = (k: string) => {
    let r = 0;
    for (const p of preds.get(k)!) {
      const pr = rank.get(p);
      if (pr !== undefined && pr + 1 > r) r = pr + 1;
    }
    rank.set(k, r);
    visited.push(k);
  };
  for (;;) {
    while (ready.size > 0) {
      const k = ready.pop();
      place(k);
      for (const s of succs.get(k)!) {
        const left = waiting.get(s)! - 1;
        waiting.set(s, left);
        if (left === 0) ready.push(s);
      }
    }
    if (visited.length === keys.length) break;
    // a cycle: release its smallest unranked key as if its unranked predecessors were not there
    const stuck = keys.find((k) => !rank.has(k) && waiting.get(k)! > 0)!;
    // its unranked predecessors count it below zero later, so it is never pushed twice
    waiting.set(stuck, 0);
    ready.push(stuck);
  }
  return { rank, visited };
}

/** Lays `g` out left to right; see the module comment for the rules. */
export function layoutGraph(g: LayoutGraph, options: LayoutOptions = {}): GraphLayout {
  const o = { ...LAYOUT_DEFAULTS, ...options };
  const { keys, preds, succs } = adjacency(g);
  const { rank, visited } = rankNodes(keys, preds, succs);

  const ranks: string[][] = [];
  for (const k of visited) (ranks[rank.get(k)!] ??= []).push(k);
  const order = new Map<string, number>();
  ranks.forEach((row) => row.forEach((k, i) => order.set(k, i)));

  // one barycenter pass, top rank down; predecessors always sit in lower ranks (or, on a
  // cycle, not at all yet — such a predecessor does not count)
  for (let r = 1; r < ranks.length; r++) {
    const row = ranks[r]!;
    const center = new Map<string, number>();
    for (const k of row) {
      const ps = preds.get(k)!.filter((p) => rank.get(p)! < r);
      center.set(k, ps.length === 0 ? order.get(k)! : ps.reduce((s, p) => s + order.get(p)!, 0) / ps.length);
    }
    row.sort((a, b) => center.get(a)! - center.get(b)! || byKey(a, b));
    row.forEach((k, i) => order.set(k, i));
  }

  const tallest = ranks.reduce((m, row) => Math.max(m, row.length), 0);
  const rowPitch = o.nodeHeight + o.nodeGap;
  const placements: NodePlacement[] = [];
  ranks.forEach((row, r) => {
    const offset = ((tallest - row.length) * rowPitch) / 2;
    row.forEach((key, i) => placements.push({ key, rank: r, order: i, x: r * (o.nodeWidth + o.rankGap), y: offset + i * rowPitch }));
  });
  return {
    placements,
    ranks,
    byKey: new Map(placements.map((p) => [p.key, p])),
    width: ranks.length === 0 ? 0 : ranks.length * o.nodeWidth + (ranks.length - 1) * o.rankGap,
    height: tallest === 0 ? 0 : tallest * o.nodeHeight + (tallest - 1) * o.nodeGap,
  };
}
