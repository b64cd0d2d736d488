/**
 * `Parallel.config.maxConcurrency`: how many of a Parallel's branches work at once.
 *
 * A branch is one direct successor of the Parallel (the target of one of its out-edges). It
 * counts as working while that first node is Queued, Running or WaitingForApproval (a lane
 * job, a child run, a gate waiting on a person). An eligible successor is admitted only while
 * fewer than `maxConcurrency` of its Parallel's successors work; the others stay Pending and
 * are admitted, in document order, as working ones settle (or go back to Pending to retry
 * after a backoff, which frees their place until they are admitted again). Only the first node
 * is counted: what follows it in the branch runs unbounded, and an inline first node (a
 * Condition, a Join) never holds a place. A node that succeeds several bounded Parallels
 * waits for a place under each.
 */
import { LIVE_NODE_STATUSES } from '../model';
import type { RoutingView } from './edge-verdict';

/** A bounded Parallel whose places are all taken. */
export interface BranchBound {
  parallel: string;
  maxConcurrency: number;
  working: number;
}

/** The first bounded Parallel `key` is a branch of that has no free place, or null: it may start. */
export function branchBoundOf(st: Pick<RoutingView, 'index' | 'rows'>, key: string): BranchBound | null {
  for (const inbound of st.index.inEdges.get(key) ?? []) {
    const fork = st.index.nodeByKey.get(inbound.from);
    if (fork?.kind !== 'Parallel') continue;
    const max = fork.config['maxConcurrency'];
    if (typeof max !== 'number') continue;
    const working = workingBranches(st, fork.key);
    if (working >= max) return { parallel: fork.key, maxConcurrency: max, working };
  }
  return null;
}

/** May `key` start now, as far as the Parallels it is a branch of are concerned? */
export function branchPlaceFree(st: Pick<RoutingView, 'index' | 'rows'>, key: string): boolean {
  return branchBoundOf(st, key) === null;
}

/** The Parallel's direct successors (each counted once) that are working now. */
function workingBranches(st: Pick<RoutingView, 'index' | 'rows'>, forkKey: string): number {
  const seen = new Set<string>();
  let working = 0;
  for (const e of st.index.outEdges.get(forkKey) ?? []) {
    if (seen.has(e.to)) continue;
    seen.add(e.to);
    const status = st.rows.get(e.to)?.status;
    if (status !== undefined && LIVE_NODE_STATUSES.has(status)) working++;
  }
  return working;
}
