/**
 * The outcomes the dispatcher reports for work no worker reported itself, built here so the
 * planner's vocabulary decides what they mean: a job that failed or whose worker died is
 * Interrupted (retried within the node's attempts); cancelled work taken off its lane before
 * any worker took it is Cancelled (nothing runs it, which confirms the cancel).
 */
import type { WorkResult } from './types';

/** An Interrupted outcome for an invocation whose job failed or whose worker died, at `at` (epoch ms). */
export function interruptedResult(invocationId: string, nodeKey: string, reason: string, at: number): WorkResult {
  return {
    invocationId,
    nodeKey,
    outcome: { ok: false, failureClass: 'Interrupted', reason: `worker interrupted: ${reason}`, startedAt: null, finishedAt: at },
  };
}

/** A Cancelled outcome for cancelled work withdrawn from its lane (or gone) before a worker took it, at `at` (epoch ms). */
export function withdrawnResult(invocationId: string, nodeKey: string, at: number): WorkResult {
  return {
    invocationId,
    nodeKey,
    outcome: { ok: false, failureClass: 'Cancelled', reason: 'withdrawn from its queue before a worker took it', startedAt: null, finishedAt: at },
  };
}
