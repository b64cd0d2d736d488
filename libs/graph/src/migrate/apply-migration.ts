/**
 * The rows a compatible migration leaves: what the store writes in the migration's
 * transaction, and what tests feed back to the planner. Pure.
 *
 * - `carry` / `keep`: the row as it is under its new key (decision, invocation, child runs,
 *   wait, steering and documents kept). A row not yet settled gets the new node's attempt
 *   budget: its limit moves by the change of `maxAttempts` (never below the attempts it spent).
 * - `requeue`: back to Pending on the attempt it was running (`attempt − 1`, one attempt
 *   refunded to the run), its invocation dropped: a late result of the old invocation is
 *   ignored like any result of a superseded invocation, and the next tick queues it afresh.
 * - `add`: a fresh Pending row. `drop`: gone.
 * Breakpoints, a step allowance naming a node, and edge overrides follow the nodes and edges the
 * new graph keeps.
 */
import { indexGraph } from '../planner/graph-index';
import type { Graph } from '../model';
import type { NodeRunState, RunSnapshot, StepAllowance } from '../planner/types';
import { freshRow, keptOverrides, type MigrationPlan } from './migration-plan';

export interface MigratedRun {
  /** one row per node of the new graph, in its document order */
  rows: NodeRunState[];
  /** attempts given back to the run's `totalAttempts` (one per re-queued row) */
  attemptsRefunded: number;
  breakpoints: string[];
  edgeOverrides: Record<string, boolean>;
  /** the run's step allowance, naming its node's new key (null when that node is dropped) */
  stepAllowance: StepAllowance | null;
}

const SETTLED: ReadonlySet<NodeRunState['status']> = new Set(['Succeeded', 'Failed', 'Skipped', 'Cancelled']);

/** The run's rows after `plan` (which must be `compatible`) moves them to `to`. */
export function applyMigration(
  from: Graph,
  to: Graph,
  nodes: readonly NodeRunState[],
  plan: MigrationPlan,
  run: { breakpoints: readonly string[]; edgeOverrides: Readonly<Record<string, boolean>>; stepAllowance?: StepAllowance | null },
): MigratedRun {
  if (plan.verdict !== 'compatible') throw new Error(`a ${plan.verdict} migration is not applied`);
  const fromIndex = indexGraph(from);
  const toIndex = indexGraph(to);
  const byKey = new Map(nodes.map((r) => [r.nodeKey, r]));
  const rowsByKey = new Map<string, NodeRunState>();
  let attemptsRefunded = 0;
  for (const m of plan.mapping) {
    if (m.to === null) continue;
    const target = toIndex.nodeByKey.get(m.to)!;
    const old = m.from === null ? undefined : byKey.get(m.from);
    if (!old || m.action === 'add') {
      rowsByKey.set(m.to, freshRow(target));
      continue;
    }
    let row: NodeRunState = { ...old, nodeKey: m.to };
    if (!SETTLED.has(row.status)) {
      const oldMax = fromIndex.nodeByKey.get(old.nodeKey)?.maxAttempts ?? target.maxAttempts;
      row.attemptLimit = Math.max(row.attempt, 1, row.attemptLimit + target.maxAttempts - oldMax);
    }
    if (m.action === 'requeue') {
      attemptsRefunded += 1;
      row = {
        ...row, status: 'Pending', attempt: Math.max(0, row.attempt - 1), invocationId: null, input: null, notBefore: null,
        deadlineAt: null, queuedAt: null, startedAt: null, failureClass: 'None', cause: 'None', reason: null,
      };
    }
    rowsByKey.set(m.to, row);
  }
  const rows = to.nodes.map((n) => rowsByKey.get(n.key) ?? freshRow(n));
  // a breakpoint follows its node (to its new key, or away with it when the node is dropped)
  const targetOfOld = new Map(plan.mapping.filter((m) => m.from !== null).map((m) => [m.from!, m.to]));
  const breakpoints = [...new Set(run.breakpoints.map((k) => (targetOfOld.has(k) ? targetOfOld.get(k) : k)))].filter(
    (k): k is string => k != null && toIndex.nodeByKey.has(k),
  );
  const step = run.stepAllowance ?? null;
  const stepTarget = step?.nodeKey == null ? null : targetOfOld.has(step.nodeKey) ? targetOfOld.get(step.nodeKey) : step.nodeKey;
  const stepAllowance = step === null || step.nodeKey === null ? step : stepTarget == null || !toIndex.nodeByKey.has(stepTarget) ? null : { ...step, nodeKey: stepTarget };
  return { rows, attemptsRefunded, breakpoints, edgeOverrides: keptOverrides(to, run.edgeOverrides), stepAllowance };
}

/** A planner snapshot moved to `to` by a compatible plan (tests and tools; the store writes the same rows). */
export function migrateSnapshot(snap: RunSnapshot, to: Graph, plan: MigrationPlan): RunSnapshot {
  const m = applyMigration(snap.graph, to, snap.nodes, plan, snap.run);
  return {
    ...snap,
    graph: to,
    nodes: m.rows,
    run: {
      ...snap.run,
      totalAttempts: Math.max(0, snap.run.totalAttempts - m.attemptsRefunded),
      breakpoints: m.breakpoints,
      edgeOverrides: m.edgeOverrides,
      stepAllowance: m.stepAllowance,
    },
  };
}
