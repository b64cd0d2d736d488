/**
 * A run completing at one End: its output becomes the run output, checked against the
 * graph's outputSchema first (a mismatch fails the run ValidationFailed instead). Used when
 * nothing is live any more (recompute.ts) and when an End with `stopRun: true` succeeds
 * (stop-run.ts), which drains the live work first.
 */
import type { Json } from '../model';
import { validateJson } from '../schema';
import type { PlanState } from './plan-state';
import { cancelLiveWork } from './settle';

/** Why the End's output cannot be the run's (it misses the graph outputSchema), or null. */
function outputRefusal(st: PlanState, output: Json): string | null {
  const schema = st.snapshot.graph.outputSchema;
  if (!schema) return null;
  const v = validateJson(schema, output);
  return v.valid ? null : `run output does not match outputSchema: ${v.errors.join('; ')}`;
}

/**
 * Complete the run with End `endKey`'s output. With `stopRun`, rows still Queued, Running or
 * WaitingForApproval are cancelled first (cause RunCompleted; cause RunFailure when the output
 * fails the schema and the run fails instead); Pending rows stay Pending, never reached.
 */
export function completeRun(st: PlanState, endKey: string, opts: { stopRun?: boolean } = {}): void {
  const output: Json = st.row(endKey)?.output?.output ?? null;
  const refusal = outputRefusal(st, output);
  if (refusal !== null) {
    if (opts.stopRun) cancelLiveWork(st, `run failed: ${refusal}`, 'RunFailure');
    st.updateRun({ status: 'Failed', failureClass: 'ValidationFailed', reason: refusal, finishedAt: st.now });
    st.emit('run.failed', null, { nodeKey: endKey, class: 'ValidationFailed' });
    return;
  }
  if (opts.stopRun) cancelLiveWork(st, `run completed at End '${endKey}' (stopRun)`, 'RunCompleted');
  st.updateRun({ status: 'Completed', failureClass: 'None', reason: null, finishedAt: st.now });
  st.setRunOutput(output);
  st.emit('run.completed', null, opts.stopRun ? { endKey, stopRun: true } : { endKey });
}
