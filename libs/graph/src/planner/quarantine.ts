/**
 * `quarantine(snapshot, ctx, reason)`: the plan that ends a run whose ticks the store keeps
 * refusing (the dispatcher calls it after APPLY_FAILURE_LIMIT failed applies in a row), so
 * the run is never retried forever. The run reads Failed with class `Internal` and the
 * reason; its live work is cancelled (rows Cancelled, invocations and child runs cancelled)
 * and every unapplied intent and report is consumed — the poisoned one included, which is
 * never applied. It writes statuses and reasons only, no document, so what the store
 * refused is not in it. A run already terminal only has its inputs consumed.
 */
import { TERMINAL_RUN_STATUSES } from '../model';
import { storableText } from '../documents/storable';
import { PlanState } from './plan-state';
import { cancelLiveWork } from './settle';
import type { PlanContext, PlanResult, RunSnapshot } from './types';

/** Reason of the rows a quarantine cancelled (human text; their cause is `Quarantine`). */
export const QUARANTINE_CANCEL_PREFIX = 'run quarantined';

/**
 * The reason a quarantined run reads: the store refused its tick `limit` times in a row
 * (APPLY_FAILURE_LIMIT), naming the last `refusal` (its SQLSTATE or error name and message).
 */
export function quarantineReason(limit: number, refusal: string): string {
  return `run quarantined: the store refused its tick ${limit} times in a row (${refusal})`;
}

/** Longest reason kept (it names the refusal, never a document). */
const MAX_REASON_CHARS = 500;

export function quarantine(snapshot: RunSnapshot, ctx: PlanContext, reason: string): PlanResult {
  const st = new PlanState(snapshot, ctx);
  for (const i of snapshot.intents) st.consumedIntentIds.push(i.id);
  for (const r of [...snapshot.results, ...snapshot.started]) {
    if (!st.consumedInvocationIds.includes(r.invocationId)) st.consumedInvocationIds.push(r.invocationId);
  }
  if (!TERMINAL_RUN_STATUSES.has(st.run.status)) {
    const why = storableText(reason).slice(0, MAX_REASON_CHARS);
    st.updateRun({ status: 'Failed', failureClass: 'Internal', reason: why, finishedAt: ctx.now });
    st.emit('run.failed', null, { class: 'Internal', reason: why });
    cancelLiveWork(st, QUARANTINE_CANCEL_PREFIX, 'Quarantine');
  }
  return {
    run: st.runPatch(),
    nodes: st.nodePatches(),
    events: st.events,
    enqueue: [],
    cancel: st.cancel,
    startChildren: [],
    cancelChildren: st.cancelChildren,
    consumedIntentIds: st.consumedIntentIds,
    consumedInvocationIds: st.consumedInvocationIds,
    wakeAt: null,
  };
}
