/**
 * Structural rules (CONTRACT §1.4), judged on the skeleton of the document — every node
 * whose `key` is a string (first declaration wins) and every edge whose `from`/`to` name
 * such nodes. When any of them fails, only these errors are returned. All walks are
 * iterative: a 100,000-node chain cannot overflow the stack.
 */
import type { Issue } from '../model';
import { hasOwn, isObject, q } from './util';

export interface Skeleton {
  /** distinct node keys, document order */
  keys: string[];
  kinds: Map<string, unknown>;
  /** index of the node key → adjacency (targets, edge document order) */
  edges: Array<{ key: unknown; from: string; to: string }>;
}

export function readSkeleton(nodes: readonly unknown[], edges: readonly unknown[]): Skeleton {
  const keys: string[] = [];
  const kinds = new Map<string, unknown>();
  for (const n of nodes) {
    if (!isObject(n) || !hasOwn(n, 'key') || typeof n.key !== 'string') continue;
    if (kinds.has(n.key)) continue;
    keys.push(n.key);
    kinds.set(n.key, hasOwn(n, 'kind') ? n.kind : undefined);
  }
  const out: Skeleton['edges'] = [];
  for (const e of edges) {
    if (!isObject(e)) continue;
    const from = hasOwn(e, 'from') ? e.from : undefined;
    const to = hasOwn(e, 'to') ? e.to : undefined;
    if (typeof from !== 'string' || typeof to !== 'string') continue;
    if (!kinds.has(from) || !kinds.has(to)) continue;
    out.push({ key: hasOwn(e, 'key') ? e.key : undefined, from, to });
  }
  return { keys, kinds, edges: out };
}

/** Structural errors of the skeleton: Start, End, cycles, reachability. */
export function structuralErrors(s: Skeleton): Issue[] {
  const errors: Issue[] = [];
  const index = new Map<string, number>();
  s.keys.forEach((k, i) => index.set(k, i));
  const succ: number[][] = s.keys.map(() => []);
  const inbound: Array<unknown[]> = s.keys.map(() => []);
  for (const e of s.edges) {
    const f = index.get(e.from)!;
    const t = index.get(e.to)!;
    succ[f]!.push(t);
    inbound[t]!.push(e.key);
  }

  const starts = s.keys.filter((k) => s.kinds.get(k) === 'Start');
  if (starts.length === 0) errors.push({ key: null, message: 'the graph has no Start node; exactly one is required' });
  for (const extra of starts.slice(1)) {
    errors.push({ key: extra, message: `second Start node ${q(extra)}: a graph has exactly one Start (the first is ${q(starts[0]!)})` });
  }
  for (const st of starts) {
    const ins = inbound[index.get(st)!]!;
    if (ins.length > 0) {
      const named = typeof ins[0] === 'string' ? ` (edge ${q(ins[0])})` : '';
      errors.push({ key: st, message: `Start node ${q(st)} has an inbound edge${named}; nothing may route into Start` });
    }
  }
  if (!s.keys.some((k) => s.kinds.get(k) === 'End')) {
    errors.push({ key: null, message: 'the graph has no End node; at least one is required' });
  }

  const cycle = findCycle(succ);
  if (cycle !== null) {
    const names = cycle.map((i) => s.keys[i]!);
    const distinct = new Set(names);
    errors.push({
      key: distinct.size === 1 ? names[0]! : null,
      message: `the graph has a cycle: ${names.join(' -> ')}`,
    });
  }

  if (starts.length > 0) {
    const seen = new Uint8Array(s.keys.length);
    const queue: number[] = [];
    for (const st of starts) {
      const i = index.get(st)!;
      seen[i] = 1;
      queue.push(i);
    }
    for (let h = 0; h < queue.length; h++) {
      for (const t of succ[queue[h]!]!) {
        if (seen[t] === 0) {
          seen[t] = 1;
          queue.push(t);
        }
      }
    }
    s.keys.forEach((k, i) => {
      if (seen[i] === 0) errors.push({ key: k, message: `node ${q(k)} is not reachable from Start` });
    });
  }
  return errors;
}

/**
 * The first cycle met by an iterative depth-first walk (roots and successors in
 * document order), as node indexes in walk order, starting and ending at the node the
 * walk came back to (`a -> b -> c -> a`); null when the graph is acyclic.
 */
export function findCycle(succ: readonly (readonly number[])[]): number[] | null {
  const n = succ.length;
  const color = new Uint8Array(n); // 0 white, 1 on stack, 2 done
  const nextChild = new Uint32Array(n);
  const stack: number[] = [];
  for (let root = 0; root < n; root++) {
    if (color[root] !== 0) continue;
    color[root] = 1;
    stack.push(root);
    while (stack.length > 0) {
      const u = stack[stack.length - 1]!;
      const children = succ[u]!;
      const ci = nextChild[u]!;
      if (ci >= children.length) {
        color[u] = 2;
        stack.pop();
        continue;
      }
      nextChild[u] = ci + 1;
      const v = children[ci]!;
      if (color[v] === 1) {
        const from = stack.lastIndexOf(v);
        return [...stack.slice(from), v];
      }
      if (color[v] === 0) {
        color[v] = 1;
        stack.push(v);
      }
    }
  }
  return null;
}
