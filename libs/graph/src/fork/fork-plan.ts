/**
 * Fork from a node: which node runs of a source run a new run reuses, and
 * whether the source's node keys line up with the target graph (the source's pinned graph,
 * or another version of its definition). Pure: the store loads, this decides, the store writes.
 *
 * The rule. A node is reused (copied into the new run in its settled state, never run
 * again) when all of these hold:
 * - it is an ancestor of `fromNodeKey` in the TARGET graph (the forked node itself and
 *   everything not upstream of it run again) — with `failedOnly`, or the forked node itself
 *   or one of its descendants (only what failed below it runs again; a forked Loop that
 *   failed after its first iteration resumes at the failed one, see `resumeLoop`);
 * - the source settled it Succeeded (not a held DecisionModel, whose out-edges hold) or
 *   Skipped (a branch the source did not take stays untaken: the reused region is the
 *   source's history, routed as it was);
 * - it has the same kind in both graphs;
 * - every one of its predecessors in the target graph is reused too. The reused set is
 *   therefore closed upstream, so the planner meets a consistent prefix: no reused node
 *   has a predecessor that could still run. A predecessor the source did not settle that
 *   way (Failed, Cancelled — e.g. a `First` join's loser — or still live) runs again, and
 *   so does everything downstream of it.
 *
 * Refusals, keyed: the forked node must be a node of the source run (`ForkNodeUnknown`) and
 * of the target graph (`ForkNodeNotInVersion`); every upstream node the source completed
 * (Succeeded ancestor of the forked node in the source graph) must still exist in the
 * target graph with the same kind (`ForkUpstreamMismatch`, one detail per node; with
 * `failedOnly` every completed node the fork would keep); a child
 * run (Loop iteration, Subworkflow) is forked through its parent (`ForkOfChildRun`).
 * A run in any status may be forked, a live one included: the fork is a new run.
 */
import type { Graph, Issue, NodeKind, NodeStatus } from '../model';

/** A node run of the source run as the decision needs it. */
export interface ForkSourceNode {
  nodeKey: string;
  kind: NodeKind;
  status: NodeStatus;
  /** a DecisionModel that succeeded below minConfidence (its out-edges hold) */
  held: boolean;
  /** a Loop's iteration when it settled (`loop_state.iteration`), else null/absent */
  loopIteration?: number | null;
}

export interface ForkRequest {
  /** the source run's pinned graph */
  source: Graph;
  sourceNodes: readonly ForkSourceNode[];
  /** the source run's parent, when it is a child run */
  sourceParentRunId: string | null;
  /** the graph the new run pins (the source graph again, or another version) */
  target: Graph;
  fromNodeKey: string;
  /**
   * Also keep the forked node and its descendants where they succeeded (a Parallel fan-out's
   * succeeded branches), so only what failed — and what depends on it — runs again. A forked
   * Loop that failed (or was cancelled) at iteration k > 1 resumes at k: its succeeded
   * iterations are kept (`resumeLoop`).
   */
  failedOnly?: boolean;
}

export const FORK_REFUSAL_CODES = ['ForkNodeUnknown', 'ForkNodeNotInVersion', 'ForkUpstreamMismatch', 'ForkOfChildRun'] as const;
export type ForkRefusalCode = (typeof FORK_REFUSAL_CODES)[number];

/** Statuses a reused node is copied in. */
export type ReusedStatus = 'Succeeded' | 'Skipped';

export type ForkDecision =
  | {
      ok: true;
      /** reused nodes in target document order, each copied in its source status */
      reused: Array<{ nodeKey: string; status: ReusedStatus }>;
      /**
       * true when the forked node is a Loop whose succeeded iterations are kept (failedOnly, the
       * source Loop Failed or Cancelled after its first iteration): its row starts Pending with the
       * source's loop state marked `resume`, so the planner continues at the failed iteration
       */
      resumeLoop: boolean;
    }
  | { ok: false; code: ForkRefusalCode; message: string; details: Issue[] };

/** Every ancestor (transitive predecessor) of `key` in `graph`, not including `key`. */
export function ancestorsOf(graph: Graph, key: string): Set<string> {
  return closure(predecessorMap(graph), key);
}

/** Every descendant (transitive successor) of `key` in `graph`, not including `key`. */
export function descendantsOf(graph: Graph, key: string): Set<string> {
  return closure(linkMap(graph, 'from', 'to'), key);
}

function closure(links: ReadonlyMap<string, string[]>, key: string): Set<string> {
  const out = new Set<string>();
  const stack = [...(links.get(key) ?? [])];
  while (stack.length > 0) {
    const k = stack.pop()!;
    if (out.has(k)) continue;
    out.add(k);
    stack.push(...(links.get(k) ?? []));
  }
  return out;
}

function predecessorMap(graph: Graph): Map<string, string[]> {
  return linkMap(graph, 'to', 'from');
}

function linkMap(graph: Graph, by: 'from' | 'to', other: 'from' | 'to'): Map<string, string[]> {
  const links = new Map<string, string[]>();
  for (const e of graph.edges) {
    const list = links.get(e[by]);
    if (list) list.push(e[other]);
    else links.set(e[by], [e[other]]);
  }
  return links;
}

/**
 * The nodes a fork may reuse: the ancestors of the forked node; with `failedOnly`, also the
 * node itself and its descendants (a fan-out's succeeded branches are kept, its failed ones run).
 */
function candidatesOf(graph: Graph, key: string, failedOnly: boolean): Set<string> {
  const out = ancestorsOf(graph, key);
  if (failedOnly) {
    out.add(key);
    for (const k of descendantsOf(graph, key)) out.add(k);
  }
  return out;
}

function refuse(code: ForkRefusalCode, message: string, details: Issue[] = []): ForkDecision {
  return { ok: false, code, message, details };
}

/** Decides a fork: the reused node runs, or the first refusal that applies (in the order documented above). */
export function planFork(req: ForkRequest): ForkDecision {
  const { source, target, fromNodeKey } = req;
  if (req.sourceParentRunId !== null) {
    return refuse('ForkOfChildRun', 'this run is a child run (Loop iteration or Subworkflow): fork its parent run from the Loop or Subworkflow node', [
      { key: null, message: `parent run ${req.sourceParentRunId}` },
    ]);
  }
  if (!source.nodes.some((n) => n.key === fromNodeKey)) {
    return refuse('ForkNodeUnknown', `'${fromNodeKey}' is not a node of this run`, [{ key: fromNodeKey, message: 'not a node of this run' }]);
  }
  const targetKinds = new Map(target.nodes.map((n) => [n.key, n.kind]));
  if (!targetKinds.has(fromNodeKey)) {
    return refuse('ForkNodeNotInVersion', `'${fromNodeKey}' is not a node of the target definition version`, [
      { key: fromNodeKey, message: 'not a node of the target version' },
    ]);
  }
  const failedOnly = req.failedOnly === true;
  const rows = new Map(req.sourceNodes.map((r) => [r.nodeKey, r]));
  const mismatches: Issue[] = [];
  const sourceCandidates = candidatesOf(source, fromNodeKey, failedOnly);
  for (const n of source.nodes) {
    if (!sourceCandidates.has(n.key) || rows.get(n.key)?.status !== 'Succeeded') continue;
    const kind = targetKinds.get(n.key);
    if (kind === undefined) mismatches.push({ key: n.key, message: 'completed upstream node is missing in the target version' });
    else if (kind !== n.kind) mismatches.push({ key: n.key, message: `completed upstream node is a ${n.kind}, the target version makes it a ${kind}` });
  }
  if (mismatches.length > 0) {
    return refuse('ForkUpstreamMismatch', 'the upstream nodes of the forked node do not line up with the target version', mismatches);
  }
  const reused = reusedNodes(req, rows);
  const from = rows.get(fromNodeKey);
  const resumeLoop =
    failedOnly &&
    targetKinds.get(fromNodeKey) === 'Loop' &&
    from?.kind === 'Loop' &&
    (from.status === 'Failed' || from.status === 'Cancelled') &&
    (from.loopIteration ?? 0) > 1 &&
    (predecessorMap(target).get(fromNodeKey) ?? []).every((k) => reused.some((r) => r.nodeKey === k));
  return { ok: true, reused, resumeLoop };
}

/** The reused set: target ancestors copyable from the source, closed upstream (memoised over the acyclic graph). */
function reusedNodes(req: ForkRequest, rows: ReadonlyMap<string, ForkSourceNode>): Array<{ nodeKey: string; status: ReusedStatus }> {
  const { target } = req;
  const candidates = candidatesOf(target, req.fromNodeKey, req.failedOnly === true);
  const preds = predecessorMap(target);
  const kinds = new Map(target.nodes.map((n) => [n.key, n.kind]));
  const memo = new Map<string, boolean>();
  const reusable = (key: string): boolean => {
    const known = memo.get(key);
    if (known !== undefined) return known;
    const row = rows.get(key);
    const settled = row !== undefined && ((row.status === 'Succeeded' && !row.held) || row.status === 'Skipped');
    const ok = settled && candidates.has(key) && row.kind === kinds.get(key) && (preds.get(key) ?? []).every(reusable);
    memo.set(key, ok);
    return ok;
  };
  return target.nodes
    .filter((n) => reusable(n.key))
    .map((n) => ({ nodeKey: n.key, status: rows.get(n.key)!.status as ReusedStatus }));
}
