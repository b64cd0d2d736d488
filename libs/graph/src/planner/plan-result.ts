/**
 * What a plan does to the store, read from the plan alone: whether it writes anything, and
 * the run row's counters after it commits. The apply (libs/db `flowline_apply`) sends nothing
 * for an empty plan but its wake, and otherwise bumps `runs.version` by one and `last_seq` by
 * the plan's events; the dispatcher's snapshot cache predicts the committed row from these.
 */
import type { PlanResult } from './types';

/** True when the plan changes nothing in the store (its wake aside). */
export function isEmptyPlan(plan: PlanResult): boolean {
  return (
    (plan.run === null || Object.values(plan.run.set).every((v) => v === undefined)) &&
    plan.nodes.length === 0 &&
    plan.events.length === 0 &&
    plan.startChildren.length === 0 &&
    plan.cancelChildren.length === 0 &&
    plan.consumedIntentIds.length === 0 &&
    plan.consumedInvocationIds.length === 0
  );
}

/**
 * The run row's `version` and `lastSeq` once `plan` was applied to a row holding `before`:
 * unchanged when nothing was written (`wrote` false: the apply skipped it) or the plan is
 * empty; otherwise version + 1 and lastSeq + the number of planned events.
 */
export function committedCounters(before: { version: number; lastSeq: number }, plan: PlanResult, wrote: boolean): { version: number; lastSeq: number } {
  if (!wrote || isEmptyPlan(plan)) return { version: before.version, lastSeq: before.lastSeq };
  return { version: before.version + 1, lastSeq: before.lastSeq + plan.events.length };
}
