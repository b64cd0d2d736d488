/**
 * The context edge around a wait. A node's input is its one satisfied predecessor's output, so
 * in X → Pause → Y the successor Y receives the person's decision and never X's content. Two
 * places act on that and must agree: the validator warns on such a "starved" Y, and the editor,
 * when an author wires into or out of a Pause or ChatInput, adds the unconditional edge X → Y
 * (labelled `context`) itself. Both use this one rule.
 *
 * Y keeps the All join policy, so the content edge never admits it ahead of the decision: with
 * both satisfied its input is the upstream map holding X's output and the decision. The rule adds
 * nothing where an edge would do harm:
 * - a successor something other than a wait already feeds is not starved;
 * - a successor whose join policy is not All (an `Any` one above all) would be admitted by the
 *   content edge alone, even when every decision was a rejection;
 * - when the nearest non-wait ancestor is not unique (exclusive branches feed the wait), an edge
 *   from each would hang the successor on the branch never taken;
 * - a Condition ancestor would gain a second unconditional out-edge, which validation refuses;
 * - a pair already wired, and a self-loop.
 */
import { HUMAN_KINDS, type NodeKind } from '../model';

/** What the rule reads of a graph: node kinds and join policies, edges by their ends. */
export interface ContextGraph {
  nodes: ReadonlyArray<{ key: string; kind: string; joinPolicy?: unknown }>;
  edges: ReadonlyArray<{ from: string; to: string }>;
}

/** An edge the rule owes: unconditional, `from` the content, `to` the starved successor. */
export interface ContextEdge {
  from: string;
  to: string;
}

/** What a starved successor is, as the validator reports it. */
export interface Starved {
  /** the waits (Pause/ChatInput) feeding it, in edge order */
  waits: string[];
  /** the unique nearest non-wait ancestor that may feed it, or null when none may */
  ancestor: string | null;
}

const isWait = (kind: string | undefined): boolean => kind !== undefined && HUMAN_KINDS.has(kind as NodeKind);

/** Join policy All, the default: the only one a content edge cannot admit early. */
const joinsAll = (policy: unknown): boolean => policy === undefined || policy === null || policy === 'All';

class Index {
  readonly kind = new Map<string, string>();
  readonly policy = new Map<string, unknown>();
  readonly ins = new Map<string, string[]>();
  readonly outs = new Map<string, string[]>();
  readonly pairs = new Set<string>();

  constructor(g: ContextGraph) {
    for (const n of g.nodes) {
      this.kind.set(n.key, n.kind);
      this.policy.set(n.key, n.joinPolicy);
      this.ins.set(n.key, []);
      this.outs.set(n.key, []);
    }
    for (const e of g.edges) {
      this.ins.get(e.to)?.push(e.from);
      this.outs.get(e.from)?.push(e.to);
      this.pairs.add(pairKey(e.from, e.to));
    }
  }

  isWait(key: string): boolean {
    return isWait(this.kind.get(key));
  }
}

const pairKey = (from: string, to: string) => JSON.stringify([from, to]);

/**
 * Whether `key` is starved (it has inbound edges, every one leaving a wait, and its join policy
 * is All), and if so which ancestor may feed it; null when it is not starved.
 */
function starvedIn(ix: Index, key: string): Starved | null {
  const ins = ix.ins.get(key) ?? [];
  if (ins.length === 0 || !joinsAll(ix.policy.get(key)) || !ins.every((f) => ix.isWait(f))) return null;
  const waits = [...new Set(ins)];
  // walk back through consecutive waits (self-loops and cycles visited once) to the first non-waits
  const ancestors = new Set<string>();
  const seen = new Set<string>(waits);
  const stack = [...waits];
  while (stack.length > 0) {
    const k = stack.pop()!;
    for (const f of ix.ins.get(k) ?? []) {
      if (ix.isWait(f)) {
        if (!seen.has(f)) {
          seen.add(f);
          stack.push(f);
        }
      } else ancestors.add(f);
    }
  }
  const [only] = [...ancestors];
  const usable = ancestors.size === 1 && only !== undefined && only !== key && ix.kind.get(only) !== 'Condition' && !ix.pairs.has(pairKey(only, key));
  return { waits, ancestor: usable ? only : null };
}

/** Every starved node of `graph` (see {@link starvedIn}), by key: what the validator warns on. */
export function starvedSuccessors(graph: ContextGraph): Map<string, Starved> {
  const ix = new Index(graph);
  const out = new Map<string, Starved>();
  for (const n of graph.nodes) {
    const s = starvedIn(ix, n.key);
    if (s) out.set(n.key, s);
  }
  return out;
}

/**
 * The context edges owed after the author connected `gesture` (already part of `graph`).
 * Wiring out of a wait judges only the node just connected, the one successor that gesture can
 * have starved; wiring into a wait judges every successor of each wait reachable forward through
 * consecutive waits. Each owed edge is returned once.
 */
export function pauseContextEdges(graph: ContextGraph, gesture: ContextEdge): ContextEdge[] {
  const ix = new Index(graph);
  const candidates: string[] = [];
  if (ix.isWait(gesture.from)) candidates.push(gesture.to);
  if (ix.isWait(gesture.to)) {
    const seen = new Set<string>([gesture.to]);
    const stack = [gesture.to];
    while (stack.length > 0) {
      const w = stack.pop()!;
      for (const next of ix.outs.get(w) ?? []) {
        candidates.push(next);
        if (ix.isWait(next) && !seen.has(next)) {
          seen.add(next);
          stack.push(next);
        }
      }
    }
  }
  const out: ContextEdge[] = [];
  const owed = new Set<string>();
  for (const y of candidates) {
    const s = starvedIn(ix, y);
    if (!s || s.ancestor === null) continue;
    const k = pairKey(s.ancestor, y);
    if (owed.has(k)) continue;
    owed.add(k);
    out.push({ from: s.ancestor, to: y });
  }
  return out;
}
