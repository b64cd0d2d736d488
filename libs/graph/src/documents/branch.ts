/**
 * Which out-edges of a settled node fire on its envelope (CONTRACT §1.2, §8 routing):
 * an unconditional edge always fires, a conditional one when its condition holds on
 * the SOURCE envelope, and a `default` edge only when no conditional sibling fired.
 */
import { evaluateCondition } from '../conditions';
import type { GraphEdge, OutputEnvelope } from '../model';

/** Keys of the edges among `outEdges` (one source's, document order) that fire on `envelope`. */
export function firedEdgeKeys(outEdges: readonly GraphEdge[], envelope: OutputEnvelope): Set<string> {
  const fired = new Set<string>();
  let conditionalFired = false;
  for (const e of outEdges) {
    if (e.default) continue;
    if (e.condition === null) {
      fired.add(e.key);
    } else if (safeEvaluate(e, envelope)) {
      fired.add(e.key);
      conditionalFired = true;
    }
  }
  if (!conditionalFired) for (const e of outEdges) if (e.default) fired.add(e.key);
  return fired;
}

/**
 * The envelope's `branch`: label (or key) of the first conditional out-edge in document
 * order that fired, else of the default edge when it fired, else null. An unconditional
 * edge never names a branch.
 */
export function deriveBranch(outEdges: readonly GraphEdge[], envelope: OutputEnvelope): string | null {
  for (const e of outEdges) {
    if (e.default || e.condition === null) continue;
    if (safeEvaluate(e, envelope)) return e.label ?? e.key;
  }
  const def = outEdges.find((e) => e.default);
  return def ? (def.label ?? def.key) : null;
}

function safeEvaluate(edge: GraphEdge, envelope: OutputEnvelope): boolean {
  if (edge.condition === null) return true;
  try {
    return evaluateCondition(edge.condition, envelope);
  } catch {
    // fail closed: a condition that cannot be judged never fires
    return false;
  }
}
