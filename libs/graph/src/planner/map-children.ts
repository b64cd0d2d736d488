/**
 * The child runs a Map node keeps working (`map.ts`), cancelled with the node: by its own
 * failure, a run cancel's drain, a run failure or a stopRun. Kept apart from map.ts so the
 * settle module can cancel them without importing the Map's logic.
 */
import { TERMINAL_RUN_STATUSES } from '../model';
import type { PlanState } from './plan-state';

/**
 * Cancel the children a Map row keeps working (a failure, a run cancel or failure, a
 * stopRun); one started in this same plan is dropped instead. Returns whether any child
 * still has to end (the drain waits for it).
 */
export function cancelMapChildren(st: PlanState, key: string): boolean {
  const row = st.row(key);
  let waiting = false;
  for (const entry of row?.map?.live ?? []) {
    const startedNow = st.startChildren.findIndex((c) => c.childRunId === entry.childRunId);
    if (startedNow >= 0) {
      st.startChildren.splice(startedNow, 1);
      continue;
    }
    const child = st.snapshot.children.find((c) => c.childRunId === entry.childRunId);
    if (child && TERMINAL_RUN_STATUSES.has(child.status)) continue;
    waiting = true;
    if (!st.cancelChildren.includes(entry.childRunId)) st.cancelChildren.push(entry.childRunId);
  }
  return waiting;
}
