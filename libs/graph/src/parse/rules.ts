/**
 * Accumulated whole-graph rules (CONTRACT §1.4, §8 routing details), judged over the
 * nodes and edges that parsed. Every error is keyed to its node or edge.
 */
import { evaluateCondition } from '../conditions';
import type { GraphEdge, GraphKind, GraphNode, OutputEnvelope } from '../model';
import type { Issues } from './util';
import { q } from './util';

/** A parsed edge, and whether its document carried a condition (even a broken one). */
export interface RuleEdge {
  edge: GraphEdge;
  conditional: boolean;
}

/** Unconditional = no condition and not `default` (§8). */
export function isUnconditional(e: RuleEdge): boolean {
  return !e.conditional && !e.edge.default;
}

export interface Adjacency {
  outs: Map<string, RuleEdge[]>;
  ins: Map<string, RuleEdge[]>;
}

export function adjacency(nodes: readonly GraphNode[], edges: readonly RuleEdge[]): Adjacency {
  const outs = new Map<string, RuleEdge[]>();
  const ins = new Map<string, RuleEdge[]>();
  for (const n of nodes) {
    outs.set(n.key, []);
    ins.set(n.key, []);
  }
  for (const e of edges) {
    outs.get(e.edge.from)?.push(e);
    ins.get(e.edge.to)?.push(e);
  }
  return { outs, ins };
}

/** The document a Pause produces for `decision` (§2), as its out-edges read it (§3). */
export function pauseEnvelope(decision: string): OutputEnvelope {
  return { status: 'succeeded', attempt: 1, branch: null, output: { decision, comment: null, payload: null } };
}

export function checkGraphRules(nodes: readonly GraphNode[], edges: readonly RuleEdge[], graphKind: GraphKind, out: Issues): void {
  const { outs, ins } = adjacency(nodes, edges);

  // Edge rules: second unconditional edge over one pair, second default edge on one source.
  const unconditionalPairs = new Set<string>();
  const defaultSources = new Map<string, string>();
  for (const e of edges) {
    const { key, from, to } = e.edge;
    if (isUnconditional(e)) {
      const pair = `${from}\u0000${to}`;
      if (unconditionalPairs.has(pair)) out.error(key, `second unconditional edge from ${q(from)} to ${q(to)}; at most one is allowed per pair`);
      unconditionalPairs.add(pair);
    }
    if (e.edge.default) {
      const first = defaultSources.get(from);
      if (first !== undefined) out.error(key, `second default edge on ${q(from)} (the first is ${q(first)}); a node has at most one`);
      else defaultSources.set(from, key);
    }
  }

  for (const n of nodes) {
    const o = outs.get(n.key)!;
    const i = ins.get(n.key)!;
    if (n.kind !== 'End' && o.length === 0) out.error(n.key, `${n.kind} node ${q(n.key)} has no out-edge; only End nodes may end a path`);
    if (n.kind === 'End' && o.length > 0) out.error(n.key, `End node ${q(n.key)} has an out-edge (${q(o[0]!.edge.key)}); nothing may leave an End`);

    if (n.joinPolicy === 'Any' && i.length < 2) {
      out.error(n.key, `joinPolicy "Any" needs at least two inbound edges; ${q(n.key)} has ${i.length}`);
    }
    if (typeof n.joinPolicy === 'object' && n.joinPolicy.quorum > i.length) {
      out.error(n.key, `joinPolicy quorum ${n.joinPolicy.quorum} exceeds the ${i.length} inbound edge(s) of ${q(n.key)}`);
    }

    if (n.kind === 'Condition') {
      if (o.length < 2) out.error(n.key, `Condition node ${q(n.key)} needs at least two out-edges; it has ${o.length}`);
      const unconditional = o.filter(isUnconditional).length;
      if (unconditional > 1) out.error(n.key, `Condition node ${q(n.key)} has ${unconditional} unconditional out-edges; at most one is allowed`);
    }

    if (n.kind === 'Pause' && Array.isArray(n.config.allowedDecisions)) {
      for (const d of n.config.allowedDecisions as string[]) {
        const env = pauseEnvelope(d);
        // Checked with the runtime's own evaluator, so the pre-flight and routing agree.
        // A broken condition is given the benefit of the doubt: it is already an error.
        const fires = o.some((e) => !e.conditional || e.edge.default || e.edge.condition === null || evaluateCondition(e.edge.condition, env));
        if (!fires) out.error(n.key, `Pause node ${q(n.key)} offers '${d}' but no out-edge fires on it`);
      }
    }

    if (n.kind === 'ChatInput') {
      if (graphKind !== 'Chat') out.error(n.key, `ChatInput node ${q(n.key)} is allowed only in a Chat graph`);
      // A default edge also guarantees the run goes somewhere whatever the user types.
      if (!o.some((e) => isUnconditional(e) || e.edge.default)) {
        out.error(n.key, `ChatInput node ${q(n.key)} needs an unconditional out-edge`);
      }
    }
  }
}
