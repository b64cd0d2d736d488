/**
 * Admission of a Pending node from its inbound edge verdicts (CONTRACT §1.3):
 * wait, eligible, or skip with one preferred cause. Pending (and Held) outrank Dead.
 */
import type { GraphEdge, JoinPolicy } from '../model';
import { inboundVerdicts, sourceIsLive, type EdgeVerdict, type RoutingView } from './edge-verdict';

export type Admission =
  | { kind: 'wait' }
  | { kind: 'eligible'; satisfied: GraphEdge[]; pending: GraphEdge[] }
  | { kind: 'skip'; reason: string; cause: { edgeKey: string; sourceKey: string } };

/** Judge `nodeKey` under `policy`. Zero inbound edges is vacuously eligible (Start). */
export function admission(view: RoutingView, nodeKey: string, policy: JoinPolicy): Admission {
  // Every source still live: every inbound edge is Pending, and under any policy a node with
  // no edge settled waits. Answered before any verdict is built because most Pending rows of a
  // long run are here on every tick (a chain's nodes after the one at work).
  const ins = view.index.inEdges.get(nodeKey);
  if (ins !== undefined && ins.length > 0 && ins.every((e) => sourceIsLive(view, e))) return { kind: 'wait' };
  const inbound = inboundVerdicts(view, nodeKey);
  if (inbound.length === 0) return { kind: 'eligible', satisfied: [], pending: [] };
  const satisfied = pick(inbound, 'Satisfied');
  const pending = inbound.filter((v) => v.verdict === 'Pending' || v.verdict === 'Held').map((v) => v.edge);
  const dead = pick(inbound, 'Dead');
  const eligible = (): Admission => ({ kind: 'eligible', satisfied, pending });
  const skip = (): Admission => skipWith(view, nodeKey, dead);

  if (policy === 'All') {
    if (satisfied.length === inbound.length) return eligible();
    return dead.length > 0 && pending.length === 0 ? skip() : { kind: 'wait' };
  }
  if (policy === 'Any') {
    if (satisfied.length > 0 && pending.length === 0) return eligible();
    return dead.length === inbound.length ? skip() : { kind: 'wait' };
  }
  if (policy === 'First') {
    if (satisfied.length > 0) return eligible();
    return dead.length === inbound.length ? skip() : { kind: 'wait' };
  }
  const quorum = Math.max(1, Math.min(policy.quorum, inbound.length));
  if (satisfied.length >= quorum) return eligible();
  return satisfied.length + pending.length < quorum ? skip() : { kind: 'wait' };
}

function pick(inbound: { edge: GraphEdge; verdict: EdgeVerdict }[], verdict: EdgeVerdict): GraphEdge[] {
  return inbound.filter((v) => v.verdict === verdict).map((v) => v.edge);
}

/**
 * One cause for a skip, preferring a branch that broke or was skipped (source not
 * succeeded) over one a condition merely routed past, then document order.
 */
function skipWith(view: RoutingView, nodeKey: string, dead: GraphEdge[]): Admission {
  const broken = dead.find((e) => {
    if (view.overrides[e.key] === false) return false;
    const st = view.rows.get(e.from)?.status;
    return st !== 'Succeeded' && !(st === 'Failed' && view.index.nodeByKey.get(e.from)?.onError === 'Continue');
  });
  const edge = broken ?? dead[0];
  if (!edge) return { kind: 'skip', reason: `node '${nodeKey}' cannot be reached`, cause: { edgeKey: '', sourceKey: '' } };
  const src = view.rows.get(edge.from);
  let why: string;
  if (view.overrides[edge.key] === false) why = 'was overridden to false';
  else if (broken && src) why = `is dead: source '${edge.from}' ${src.status.toLowerCase()}`;
  else why = `did not fire on '${edge.from}'`;
  return {
    kind: 'skip',
    reason: `inbound edge '${edge.key}' ${why}`,
    cause: { edgeKey: edge.key, sourceKey: edge.from },
  };
}
