/**
 * The stuck-run watchdog: every WATCHDOG_EVERY_SWEEPS sweeps, the live runs of this replica's
 * shards that are owed a tick their `wake_at` will not give (a Queued/Running node past its
 * deadline, a run due and not ticked; libs/graph `stuckFindings` decides) are made due now and
 * handed to the tick loop. Each finding is counted by invariant and logged at warn. A Queued
 * node whose job is missing from Redis is the in-flight check's (inflight-check.ts).
 */
import type { Pool } from 'pg';
import { loadSnapshots, setWake, stuckRunCandidates } from '@flowline/db';
import { STUCK_INVARIANTS, stuckFindings, type StuckInvariant } from '@flowline/graph';
import type { Logger } from '@flowline/runtime';

export interface WatchdogDeps {
  pool: Pool;
  /** WATCHDOG_GRACE_MS */
  graceMs: number;
  /** most runs judged per round */
  batch: number;
  maxConcurrentRuns: number;
  log: Logger;
}

export type StuckCounts = Record<StuckInvariant, number>;

export const emptyStuckCounts = (): StuckCounts =>
  Object.fromEntries(STUCK_INVARIANTS.map((k) => [k, 0])) as StuckCounts;

/** One round over `shards`: returns the runs it made due and the findings by invariant. */
export async function runWatchdog(d: WatchdogDeps, shards: number[]): Promise<{ runIds: string[]; counts: StuckCounts }> {
  const counts = emptyStuckCounts();
  const candidates = await stuckRunCandidates(d.pool, shards, d.graceMs, d.batch);
  if (candidates.length === 0) return { runIds: [], counts };
  const snaps = await loadSnapshots(d.pool, candidates, { maxConcurrentRuns: d.maxConcurrentRuns });
  const now = Date.now();
  const runIds = new Set<string>();
  for (const snap of snaps) {
    for (const f of stuckFindings(snap, snap.wakeAt, now, d.graceMs)) {
      counts[f.invariant]++;
      runIds.add(f.runId);
      d.log.warn({ runId: f.runId, nodeKey: f.nodeKey, invariant: f.invariant, dueAt: new Date(f.dueAt).toISOString() }, 'watchdog: stuck run made due');
    }
  }
  if (runIds.size > 0) await setWake(d.pool, [...runIds]);
  return { runIds: [...runIds], counts };
}
