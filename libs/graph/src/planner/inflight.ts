/**
 * What the dispatcher's in-flight check concludes (ARCHITECTURE principle 1: Postgres is the
 * truth, Redis is transport). For each committed Queued/Running lane row it reads the fate of
 * the row's job on its lane; this module decides what that fate means for the run, so the
 * check only reads and hands the verdicts on:
 * - completed → its return value is the outcome;
 * - failed (the worker threw, or died and BullMQ failed the stalled job) → Interrupted;
 * - orphaned (started, lock lapsed, not finished: the worker is gone) → Interrupted;
 * - running while the row reads Queued → a start (a row already Running needs nothing);
 * - waiting, or admitting (taken, still waiting for provider capacity) → nothing;
 * - missing → see {@link missingJobRemedy}: on a Cancelling run the cancel is confirmed (the
 *   job is gone, nothing runs it); otherwise the job is rebuilt from the committed row under
 *   the SAME invocation id — unless the row has moved on to another invocation.
 */
import { interruptedResult, withdrawnResult } from './work-results';
import { inflightWorkItem } from './work-item';
import type { NodeStatus } from '../model';
import type { RunSnapshot, WorkItem, WorkOutcome, WorkResult, WorkStarted } from './types';

/** A job's fate on its lane, as the transport reads it (times epoch ms). */
export type JobFate =
  | { state: 'missing' }
  | { state: 'waiting' }
  /** `startedAt`: the pickup, or on an admission-start lane the worker's admission */
  | { state: 'running'; startedAt: number }
  /** taken by a live worker that still waits for provider capacity: the node stays Queued */
  | { state: 'admitting' }
  /** started, lock lapsed, not finished: the worker is gone */
  | { state: 'orphaned'; processedOn: number }
  | { state: 'completed'; outcome: WorkOutcome; finishedOn: number }
  | { state: 'failed'; reason: string; finishedOn: number };

/** A committed in-flight lane row, as the check reads it. */
export interface InflightRow {
  invocationId: string;
  nodeKey: string;
  status: NodeStatus;
}

export type InflightVerdict =
  | { kind: 'result'; result: WorkResult }
  | { kind: 'started'; started: WorkStarted }
  /** the job is gone from every lane: {@link missingJobRemedy} decides, once the run is read */
  | { kind: 'missing' }
  | { kind: 'none' };

/** What `fate` means for `row` (see module doc); `now` dates an orphan's interruption. */
export function inflightVerdict(row: InflightRow, fate: JobFate, now: number): InflightVerdict {
  const { invocationId, nodeKey } = row;
  switch (fate.state) {
    case 'missing':
      return { kind: 'missing' };
    case 'completed':
      return { kind: 'result', result: { invocationId, nodeKey, outcome: fate.outcome } };
    case 'failed':
      return { kind: 'result', result: interruptedResult(invocationId, nodeKey, fate.reason, fate.finishedOn) };
    case 'orphaned':
      return { kind: 'result', result: interruptedResult(invocationId, nodeKey, 'the worker holding the job is gone', now) };
    case 'running':
      return row.status === 'Queued' ? { kind: 'started', started: { invocationId, nodeKey, at: fate.startedAt } } : { kind: 'none' };
    case 'waiting':
    case 'admitting':
      return { kind: 'none' };
  }
}

export type MissingJobRemedy =
  | { kind: 'result'; result: WorkResult }
  | { kind: 'enqueue'; tenantId: string; item: WorkItem; priority?: number }
  | { kind: 'none' };

/**
 * What to do about a row whose job is missing (and not held by the dispatch window), from the
 * run's committed snapshot (undefined: the run is gone). See module doc.
 * @param defaultTimeoutMs the deadline of a rebuilt job whose row holds none
 */
export function missingJobRemedy(snapshot: RunSnapshot | undefined, row: Omit<InflightRow, 'status'>, defaultTimeoutMs: number, now: number): MissingJobRemedy {
  if (!snapshot) return { kind: 'none' };
  if (snapshot.run.status === 'Cancelling') return { kind: 'result', result: withdrawnResult(row.invocationId, row.nodeKey, now) };
  const item = inflightWorkItem(snapshot, row.nodeKey, defaultTimeoutMs, now);
  return item && item.invocationId === row.invocationId ? { kind: 'enqueue', tenantId: snapshot.run.tenantId, priority: snapshot.run.priority, item } : { kind: 'none' };
}

/** The invocations a snapshot holds in flight (Queued/Running rows with an invocation): where worker reports belong. */
export function inflightInvocations(snapshot: RunSnapshot): { invocationId: string; nodeKey: string }[] {
  const out: { invocationId: string; nodeKey: string }[] = [];
  for (const n of snapshot.nodes) {
    if (n.invocationId && (n.status === 'Queued' || n.status === 'Running')) out.push({ invocationId: n.invocationId, nodeKey: n.nodeKey });
  }
  return out;
}
