/**
 * The admission fixpoint: judge every Pending row (skip, wait or admit) and repeat
 * until nothing changes, so inline kinds run in the same plan call and one call
 * advances as far as it can without IO.
 *
 * Gating: while the run is paused, or for a node listed in `breakpoints`, an eligible
 * row is not admitted — it stays Pending (the run keeps reading Running). A step
 * allowance lifts the gate once: `one` admits the first gated eligible row (document
 * order), `wave` every row gated-eligible when this call began, `node` the named row
 * when it is eligible. The allowance is cleared (consumed) in the RunPatch as soon as
 * it admitted something, or when it can no longer apply (the named row is no longer
 * Pending; or nothing is gated at all).
 */
import { admission } from './admission';
import { admitNode } from './admit';
import { branchPlaceFree } from './branch-bound';
import type { PlanState } from './plan-state';
import { skipNode } from './settle';

export function advance(st: PlanState): void {
  const allowance = st.run.stepAllowance;
  const breakpoints = new Set(st.run.breakpoints);
  const gated = (key: string) => st.run.paused || breakpoints.has(key);
  let wave: Set<string> | null = null;
  if (allowance?.mode === 'wave') wave = new Set(gatedEligible(st, gated));
  let used = false;
  const maxPasses = st.snapshot.graph.nodes.length * 2 + 2;
  for (let pass = 0; pass < maxPasses; pass++) {
    let changed = false;
    for (const node of st.snapshot.graph.nodes) {
      if (st.run.status !== 'Running' && st.run.status !== 'WaitingForApproval') return finish();
      const row = st.row(node.key);
      if (!row || row.status !== 'Pending') continue;
      const adm = admission(st, node.key, node.joinPolicy);
      if (adm.kind === 'skip') {
        skipNode(st, node.key, adm.reason, { edgeKey: adm.cause.edgeKey, sourceKey: adm.cause.sourceKey });
        changed = true;
        continue;
      }
      if (adm.kind !== 'eligible') continue;
      if (row.notBefore !== null && row.notBefore > st.now) continue;
      // a bounded Parallel's branch waits (Pending) for a place
      if (!branchPlaceFree(st, node.key)) continue;
      if (gated(node.key)) {
        if (!allowance) continue;
        if (allowance.mode === 'one' && used) continue;
        if (allowance.mode === 'node' && allowance.nodeKey !== node.key) continue;
        if (allowance.mode === 'wave' && !wave?.has(node.key)) continue;
        used = true;
      }
      admitNode(st, node, adm);
      changed = true;
    }
    if (!changed) break;
  }
  return finish();

  function finish(): void {
    if (!allowance) return;
    const nodeGone = allowance.mode === 'node' && st.row(allowance.nodeKey ?? '')?.status !== 'Pending';
    const nothingGated = !st.run.paused && breakpoints.size === 0;
    if (used || nodeGone || nothingGated || st.run.status !== 'Running' && st.run.status !== 'WaitingForApproval') {
      st.updateRun({ stepAllowance: null });
    }
  }
}

function gatedEligible(st: PlanState, gated: (key: string) => boolean): string[] {
  const keys: string[] = [];
  for (const node of st.snapshot.graph.nodes) {
    const row = st.row(node.key);
    if (!row || row.status !== 'Pending' || !gated(node.key)) continue;
    if (row.notBefore !== null && row.notBefore > st.now) continue;
    if (admission(st, node.key, node.joinPolicy).kind === 'eligible') keys.push(node.key);
  }
  return keys;
}
