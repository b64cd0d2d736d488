/**
 * What a plan does to the store, read from the plan alone: whether it writes anything, and
 * the run row's counters after it commits. The apply (libs/db `flowline_apply`) sends nothing
 * for an empty plan but its wake, and otherwise bumps `runs.version` by one and `last_seq` by
 * the plan's events; the dispatcher's snapshot cache predicts the committed row from these.
 */
import type { PlannedEvent, PlanResult, RunSnapshot } from './types';

/** A plan that changes nothing in the store and asks for a tick at `wakeAt` (null: none). */
export function emptyPlan(wakeAt: number | null): PlanResult {
  return { run: null, nodes: [], events: [], enqueue: [], cancel: [], startChildren: [], cancelChildren: [], consumedIntentIds: [], consumedInvocationIds: [], wakeAt };
}

/** True when the plan changes nothing in the store (its wake aside). */
export function isEmptyPlan(plan: PlanResult): boolean {
  return (
    (plan.run === null || Object.values(plan.run.set).every((v) => v === undefined)) &&
    plan.nodes.length === 0 &&
    plan.events.length === 0 &&
    plan.startChildren.length === 0 &&
    plan.cancelChildren.length === 0 &&
    plan.consumedIntentIds.length === 0 &&
    plan.consumedInvocationIds.length === 0 &&
    (plan.consumedSignals?.length ?? 0) === 0 &&
    (plan.createdWaitpoints?.length ?? 0) === 0 &&
    (plan.resolvedWaitpoints?.length ?? 0) === 0
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

/** What a committed plan asks of the world beyond its own run (the dispatcher's side effects perform it). */
export interface CommitFollowUps {
  /** runs to tick because this commit changed them: children started or cancelled, the parent when the run's status changed */
  wake: string[];
  /** the plan's wake time has already come: the run ticks again at once */
  dueNow: boolean;
  /** the run's last event after the commit, for the content-free change ping; null when the plan wrote none */
  lastEvent: { seq: number; kind: PlannedEvent['kind'] } | null;
}

/** The follow-ups of `plan`, applied to the row `snapshot` was read at, judged at `now` (epoch ms). */
export function commitFollowUps(snapshot: RunSnapshot, plan: PlanResult, now: number): CommitFollowUps {
  const wake = [...plan.startChildren.map((c) => c.childRunId), ...plan.cancelChildren];
  const newStatus = plan.run?.set.status;
  if (snapshot.run.parentRunId && newStatus && newStatus !== snapshot.run.status) wake.push(snapshot.run.parentRunId);
  const last = plan.events.at(-1);
  return {
    wake,
    dueNow: plan.wakeAt !== null && plan.wakeAt <= now,
    lastEvent: last ? { seq: snapshot.run.lastSeq + plan.events.length, kind: last.kind } : null,
  };
}
