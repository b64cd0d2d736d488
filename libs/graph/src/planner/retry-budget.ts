/**
 * The run's retry budget (MAX_TOTAL_ATTEMPTS). It counts retries only: every attempt of a
 * node beyond its first. A node's first attempt is always admitted, so a graph of any size
 * the server accepts can finish when nothing fails; the budget bounds what failures may
 * cost a run, not how much work the graph holds.
 *
 * The count is derived from the rows (each row's attempt counter past 1) rather than kept
 * separately, so everything that moves an attempt counter (a steer stepping one back, an
 * operator retry continuing it) moves the budget with it.
 */
import type { NodeRunState } from './types';

/** Retries spent by `rows`: the sum of each row's attempts beyond its first. */
export function retriesSpent(rows: Iterable<NodeRunState>): number {
  let spent = 0;
  for (const r of rows) if (r.attempt > 1) spent += r.attempt - 1;
  return spent;
}

/** True while the run may spend one more retry under a budget of `limit` retries. */
export function retryWithinBudget(rows: Iterable<NodeRunState>, limit: number): boolean {
  return retriesSpent(rows) < limit;
}
