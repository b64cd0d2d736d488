/**
 * Run budgets in the planner: usage is rolled up as results are applied (each
 * LLM-lane attempt's `output.usage`, each child run when it ends), and the run's effective
 * budget (the stricter of the graph's and the start request's, per field) is judged after the
 * results of a call and before each attempt is spent. Going past one fails the run
 * `BudgetExceeded` through the run-failure path (live work cancelled, cause RunFailure); such
 * a run is final (an operator retry/complete does not reopen it).
 */
import {
  addUsage,
  attemptUsage,
  breachOf,
  budgetBreach,
  effectiveBudget,
  isUsageEmpty,
  storedUsage,
  usageJson,
  usageView,
  USAGE_NODE_KINDS,
  type BudgetBreach,
  type RunBudget,
  type RunUsage,
  type UsageView,
} from '../budget';
import type { Json } from '../model';
import type { PlanState } from './plan-state';
import { cancelLiveWork } from './settle';
import type { ChildRunState, PlannedEvent } from './types';

const live = (st: PlanState) => st.run.status === 'Running' || st.run.status === 'WaitingForApproval';

export function budgetOf(st: PlanState): RunBudget | null {
  return effectiveBudget(st.snapshot.graph.budget, st.run.budget);
}

function charge(st: PlanState, u: RunUsage): void {
  st.updateRun({ usage: addUsage(storedUsage(st.run.usage), u) });
}

/** Add the usage of one model attempt's output (LlmCall, Agent, DecisionModel rows only). */
export function chargeAttempt(st: PlanState, kind: string, output: Json): void {
  if (!USAGE_NODE_KINDS.has(kind)) return;
  const u = attemptUsage(output, st.ctx.prices);
  if (u) charge(st, u);
}

/** Roll an ended child run's usage and attempts into the parent's. */
export function chargeChild(st: PlanState, child: ChildRunState): void {
  const u = storedUsage(child.usage);
  charge(st, { ...u, childAttempts: u.childAttempts + (child.totalAttempts ?? 0) });
}

export function currentUsage(st: PlanState): UsageView {
  return usageView(storedUsage(st.run.usage), st.run.totalAttempts);
}

/** Fail a live run whose usage or wall-clock went past its budget; true when it did. */
export function checkBudget(st: PlanState): boolean {
  if (!live(st)) return false;
  const elapsed = st.run.startedAt === null ? null : st.now - st.run.startedAt;
  const breach = budgetBreach(budgetOf(st), currentUsage(st), elapsed);
  if (breach) failRunOverBudget(st, breach);
  return breach !== null;
}

/**
 * Before an attempt is spent: false (and the run failed) when one more attempt would go past
 * `maxAttempts` — the attempt is never queued, its row stays Pending.
 */
export function attemptWithinBudget(st: PlanState): boolean {
  const max = budgetOf(st)?.maxAttempts;
  if (max === undefined) return true;
  const needed = currentUsage(st).attempts + 1;
  if (needed <= max) return true;
  failRunOverBudget(st, breachOf('maxAttempts', max, needed, 'needed'));
  return false;
}

function failRunOverBudget(st: PlanState, breach: BudgetBreach): void {
  st.updateRun({ status: 'Failed', failureClass: 'BudgetExceeded', reason: breach.reason, finishedAt: st.now });
  st.emit('run.failed', null, { class: 'BudgetExceeded', budget: breach.budget, limit: breach.limit, used: breach.used, reason: breach.reason });
  cancelLiveWork(st, `run failed: ${breach.reason}`, 'RunFailure');
}

/** When a live run with `maxWallClockMs` goes past it (the first ms past the limit); else null. */
export function budgetWakeAt(st: PlanState): number | null {
  const max = budgetOf(st)?.maxWallClockMs;
  if (max === undefined || !live(st) || st.run.startedAt === null) return null;
  return st.run.startedAt + max + 1;
}

const RUN_END_EVENTS = new Set(['run.completed', 'run.failed', 'run.cancelled']);

/** A run's end event carries its usage (and budget) when it has a budget or any model usage. */
export function withUsage(st: PlanState, events: PlannedEvent[]): PlannedEvent[] {
  const budget = budgetOf(st);
  const usage = storedUsage(st.run.usage);
  if (!budget && isUsageEmpty(usage)) return events;
  return events.map((e) =>
    RUN_END_EVENTS.has(e.kind)
      ? { ...e, detail: { ...e.detail, usage: usageJson(usageView(usage, st.run.totalAttempts)), ...(budget ? { runBudget: { ...budget } } : {}) } }
      : e,
  );
}
