/**
 * What the run view's State tab reads out of a run: whether its graph keeps state at all,
 * the `state.updated` events among its events (one per node commit that wrote state), and
 * the change one of them made — its keys before and after, compared here in the browser
 * from two reads of the state route (as of the event, and as of the event before it).
 */
import { keepsState, type Graph, type GraphNode } from '@flowline/graph';
import type { LiveEvent } from '@flowline/client';

/** One `state.updated` event: who wrote, which keys (never values; the state route holds those). */
export interface StateUpdate {
  seq: number;
  nodeKey: string | null;
  keys: string[];
  at: string;
}

/** Whether the pinned graph keeps run state (the same rule the engine applies: a `state` member, a node's writes, a `state.…` condition). */
export function graphKeepsState(graph: unknown): boolean {
  const g = (graph ?? {}) as { state?: unknown; nodes?: unknown[]; edges?: unknown[] };
  // the pinned document is plain JSON: a node without `config` reads as one with none
  const nodes = (g.nodes ?? []).map((n) => ({ config: {}, ...(n as object) })) as GraphNode[];
  return keepsState(g.state !== undefined, nodes, (g.edges ?? []) as Graph['edges']);
}

/** The `state.updated` events among `events`, oldest first. */
export function stateUpdates(events: readonly LiveEvent[]): StateUpdate[] {
  return events
    .filter((e) => e.kind === 'state.updated')
    .map((e) => {
      const keys = (e.detail as { keys?: unknown } | null)?.keys;
      return { seq: e.seq, nodeKey: e.nodeKey, at: e.at, keys: Array.isArray(keys) ? keys.filter((k): k is string => typeof k === 'string') : [] };
    })
    .sort((a, b) => a.seq - b.seq);
}

/** One key's change between two states. */
export interface KeyChange {
  key: string;
  change: 'added' | 'changed' | 'removed';
  before: unknown;
  after: unknown;
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The keys whose value differs between `before` and `after`, in key order. JSON text
 * compares them: both come from the same fold, so equal values serialise alike.
 */
export function stateDiff(before: Record<string, unknown>, after: Record<string, unknown>): KeyChange[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  const out: KeyChange[] = [];
  for (const key of keys) {
    const had = Object.hasOwn(before, key);
    const has = Object.hasOwn(after, key);
    if (had && has && same(before[key], after[key])) continue;
    out.push({ key, change: !had ? 'added' : !has ? 'removed' : 'changed', before: before[key], after: after[key] });
  }
  return out;
}
