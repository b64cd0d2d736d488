/**
 * A run detail kept current between reads by the run's own events: the live channel hands
 * the view every event after its watermark (`subscribeRun`), and each node event moves its
 * node where the planner left it ({@link nodeStatusAfterEvent}) at once, without waiting
 * for the next read of the whole run. A read of the run answers `run.lastSeq` — its node
 * runs reflect every event up to that seq (one snapshot) — so the events after it are
 * replayed over each read as it lands ({@link RunEventLog}), and a read never takes back
 * what the events already showed.
 */
import type { LiveEvent, NodeRunSummary, RunDetail, RunStatus } from '@flowline/client';
import type { QueryClient } from '@tanstack/react-query';
import { attemptOfEvent, nodeStatusAfterEvent } from '@flowline/graph';

/** The run status a run event ends in; null when it does not say (the next read tells). */
function runStatusAfterEvent(kind: string): RunStatus | null {
  switch (kind) {
    case 'run.completed':
      return 'Completed';
    case 'run.failed':
      return 'Failed';
    case 'run.cancelled':
      return 'Cancelled';
    default:
      return null;
  }
}

const FINISHED = new Set(['Succeeded', 'Failed', 'Skipped', 'Cancelled']);

/**
 * `detail` with the events after its `run.lastSeq` applied in seq order (node statuses,
 * attempts and times; the run's terminal status and `paused`), its `lastSeq` moved to the
 * last one. The same object when no event is newer.
 */
export function applyRunEvents(detail: RunDetail, events: readonly LiveEvent[]): RunDetail {
  const fresh = events.filter((e) => e.seq > detail.run.lastSeq).sort((a, b) => a.seq - b.seq);
  if (fresh.length === 0) return detail;
  const index = new Map(detail.nodeRuns.map((n, i) => [n.nodeKey, i]));
  const nodeRuns = [...detail.nodeRuns];
  let run = { ...detail.run, lastSeq: fresh.at(-1)!.seq };
  for (const e of fresh) {
    if (e.nodeKey === null) {
      const status = runStatusAfterEvent(e.kind);
      if (status) run = { ...run, status, finishedAt: run.finishedAt ?? e.at };
      if (e.kind === 'run.paused') run = { ...run, paused: true };
      if (e.kind === 'run.resumed') run = { ...run, paused: false };
      continue;
    }
    const i = index.get(e.nodeKey);
    const status = nodeStatusAfterEvent(e.kind, e.detail);
    if (i === undefined || status === null) continue;
    const was = nodeRuns[i]!;
    const attempt = attemptOfEvent(e.detail);
    const next: NodeRunSummary = {
      ...was,
      status,
      attempt: attempt ?? was.attempt,
      startedAt: status === 'Running' ? (was.startedAt ?? e.at) : was.startedAt,
      finishedAt: FINISHED.has(status) ? e.at : null,
      pendingDecisionKind: status === 'WaitingForApproval' ? was.pendingDecisionKind : null,
    };
    nodeRuns[i] = next;
  }
  return { ...detail, run, nodeRuns };
}

/**
 * The events of each watched run that the last read of it may not reflect: appended as the
 * live channel delivers them, dropped once a read's `lastSeq` covers them, replayed over
 * every read (see the module comment). Bounded: a run read at least once per
 * {@link RunEventLog.MAX} events never loses one; past it the oldest go (the read after
 * them shows their effect anyway).
 */
export class RunEventLog {
  static readonly MAX = 5_000;
  private readonly byRun = new Map<string, LiveEvent[]>();

  append(runId: string, events: readonly LiveEvent[]): void {
    if (events.length === 0) return;
    const log = this.byRun.get(runId) ?? [];
    log.push(...events);
    this.byRun.set(runId, log.length > RunEventLog.MAX ? log.slice(-RunEventLog.MAX) : log);
  }

  /** `read` with the logged events after its `lastSeq` replayed; the log keeps only those. */
  replayOver(runId: string, read: RunDetail): RunDetail {
    const log = this.byRun.get(runId);
    if (!log) return read;
    const newer = log.filter((e) => e.seq > read.run.lastSeq);
    this.byRun.set(runId, newer);
    return applyRunEvents(read, newer);
  }

  forget(runId: string): void {
    this.byRun.delete(runId);
  }
}

const logs = new WeakMap<QueryClient, RunEventLog>();

/** The event log of the views reading through `qc`. */
export function runEventLog(qc: QueryClient): RunEventLog {
  let log = logs.get(qc);
  if (!log) logs.set(qc, (log = new RunEventLog()));
  return log;
}
