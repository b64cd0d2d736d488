/**
 * Test-only builders for planner tests: graphs without the parser, Pending snapshots,
 * a deterministic context, and a driver that feeds scripted outcomes back to `plan`.
 * Not exported from the package surface.
 */
import { DEFAULT_CORE_OPTIONS, TERMINAL_RUN_STATUSES, type CoreOptions, type FailureClass, type Graph, type GraphEdge, type GraphNode, type Json, type NodeKind } from '../model';
import { applyPlanToSnapshot } from './apply';
import { plan } from './plan';
import type { NodeRunState, PlanContext, PlanResult, RunSnapshot, WorkItem, WorkOutcome } from './types';

const RETRYING = new Set<NodeKind>(['LlmCall', 'Agent', 'Tool', 'DecisionModel']);

export function node(key: string, kind: NodeKind, extra: Partial<GraphNode> = {}): GraphNode {
  return {
    key,
    kind,
    label: key,
    joinPolicy: 'All',
    maxAttempts: RETRYING.has(kind) ? 3 : 1,
    timeoutSeconds: null,
    retryBackoff: { initialMs: 500, multiplier: 2, maxMs: 30_000 },
    onError: 'FailRun',
    inputSchema: null,
    outputSchema: null,
    position: null,
    config: kind === 'End' ? { outcome: 'done' } : {},
    ...extra,
  };
}

export function edge(key: string, from: string, to: string, extra: Partial<GraphEdge> = {}): GraphEdge {
  return { key, from, to, label: null, condition: null, default: false, ...extra };
}

export function graphOf(nodes: GraphNode[], edges: GraphEdge[]): Graph {
  return { schemaVersion: 1, kind: 'Standard', chat: null, inputSchema: null, outputSchema: null, nodes, edges };
}

/**
 * A random-shaped DAG for property tests: Start `n0`, then `n1…nk` where node i links from its
 * `parents[i-1]` (each taken mod i, deduplicated: always an earlier node), then an End `end`
 * after every leaf (join `Any` over two or more leaves, else `All`). `edgeExtra` shapes each
 * edge (its j-th parent `p`), `nodeOf` builds node i given its parent count.
 */
export function dagOf(
  parents: number[][],
  edgeExtra: (i: number, p: number, j: number) => Partial<GraphEdge>,
  nodeOf: (i: number, parentCount: number) => GraphNode,
): Graph {
  const nodes: GraphNode[] = [node('n0', 'Start')];
  const edges: GraphEdge[] = [];
  parents.forEach((ps, idx) => {
    const i = idx + 1;
    const uniq = [...new Set(ps.map((p) => p % i))];
    uniq.forEach((p, j) => edges.push(edge(`e${p}_${i}`, `n${p}`, `n${i}`, edgeExtra(i, p, j))));
    nodes.push(nodeOf(i, uniq.length));
  });
  const leaves = nodes.filter((n) => !edges.some((e) => e.from === n.key));
  for (const l of leaves) edges.push(edge(`${l.key}_end`, l.key, 'end'));
  nodes.push(node('end', 'End', { joinPolicy: leaves.length >= 2 ? 'Any' : 'All', config: { outcome: 'end' } }));
  return graphOf(nodes, edges);
}

export function pendingRow(n: GraphNode): NodeRunState {
  return {
    nodeKey: n.key,
    kind: n.kind,
    status: 'Pending',
    attempt: 0,
    attemptLimit: n.maxAttempts,
    invocationId: null,
    failureClass: 'None',
    cause: 'None',
    reason: null,
    input: null,
    inputOverride: null,
    output: null,
    notBefore: null,
    deadlineAt: null,
    queuedAt: null,
    startedAt: null,
    finishedAt: null,
    steering: [],
    pendingDecisionKind: null,
    decision: null,
    held: false,
    childRunId: null,
    loop: null,
  };
}

export function snapshotOf(graph: Graph, input: Json = { q: 1 }, runExtra: Partial<RunSnapshot['run']> = {}): RunSnapshot {
  return {
    run: {
      id: 'run-1',
      tenantId: 't',
      status: 'Pending',
      failureClass: 'None',
      reason: null,
      paused: false,
      version: 1,
      lastSeq: 1,
      input,
      totalAttempts: 0,
      breakpoints: [],
      stepAllowance: null,
      edgeOverrides: {},
      cancelReason: null,
      createdAt: 0,
      startedAt: null,
      finishedAt: null,
      parentRunId: null,
      depth: 0,
      ...runExtra,
    },
    graph,
    nodes: graph.nodes.map(pendingRow),
    results: [],
    started: [],
    intents: [],
    children: [],
    runSlotAvailable: true,
  };
}

export function contextAt(now: number, options: Partial<CoreOptions> = {}, prefix = 'id'): PlanContext {
  let n = 0;
  return { now, options: { ...DEFAULT_CORE_OPTIONS, ...options }, newId: () => `${prefix}-${++n}` };
}

/** One plan call applied: the next snapshot and the decisions. */
export function step(snap: RunSnapshot, now: number, options: Partial<CoreOptions> = {}): { snap: RunSnapshot; result: PlanResult } {
  const result = plan(snap, contextAt(now, options, `i${now}`));
  return { snap: applyPlanToSnapshot(snap, result), result };
}

export function rowOf(snap: RunSnapshot, key: string): NodeRunState {
  const row = snap.nodes.find((r) => r.nodeKey === key);
  if (!row) throw new Error(`no row ${key}`);
  return row;
}

/** The snapshot with a result for the queued invocation of `key`. */
export function withResult(snap: RunSnapshot, key: string, outcome: WorkOutcome): RunSnapshot {
  const row = rowOf(snap, key);
  return { ...snap, results: [...snap.results, { invocationId: row.invocationId ?? 'none', nodeKey: key, outcome }] };
}

export const ok = (output: Json, at = 1): WorkOutcome => ({ ok: true, output, startedAt: at, finishedAt: at });
export const failed = (failureClass: FailureClass, reason = 'boom', at = 1): WorkOutcome => ({
  ok: false,
  failureClass,
  reason,
  startedAt: at,
  finishedAt: at,
});

/**
 * Drive a run to a terminal status: plan, apply, answer every enqueued item with
 * `answer(item)` on the next call, advancing the clock past backoffs. Returns the final
 * snapshot, every result, and whether it ended within `maxSteps`.
 */
export function drive(
  snap: RunSnapshot,
  answer: (item: WorkItem, snap: RunSnapshot) => WorkOutcome,
  options: Partial<CoreOptions> = {},
  maxSteps = 500,
): { snap: RunSnapshot; results: PlanResult[]; terminal: boolean } {
  const results: PlanResult[] = [];
  let now = 1_000;
  let outstanding: WorkItem[] = [];
  for (let i = 0; i < maxSteps; i++) {
    const results2 = outstanding.map((item) => ({ invocationId: item.invocationId, nodeKey: item.nodeKey, outcome: answer(item, snap) }));
    snap = { ...snap, results: [...snap.results, ...results2] };
    const r = step(snap, now, options);
    results.push(r.result);
    snap = r.snap;
    outstanding = r.result.enqueue;
    if (TERMINAL_RUN_STATUSES.has(snap.run.status) && outstanding.length === 0) {
      return { snap, results, terminal: true };
    }
    now = Math.max(now + 1, r.result.wakeAt ?? now + 1);
  }
  return { snap, results, terminal: false };
}
