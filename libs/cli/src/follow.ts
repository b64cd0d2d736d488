/**
 * Following a run over the live channel (`subscribeRun`) until it reaches a terminal
 * status, handing every new event to the caller as it arrives.
 */
import type { FlowlineClient, RunChange } from '@flowline/client';
import { FollowTimeoutError } from './errors';

export type RunEvent = RunChange['events'][number];

/** Run statuses nothing follows (CONTRACT §4). */
export const TERMINAL_STATUSES: ReadonlySet<string> = new Set(['Completed', 'Failed', 'Cancelled']);
const TERMINAL_EVENTS: ReadonlySet<string> = new Set(['run.completed', 'run.failed', 'run.cancelled']);

export interface FollowOptions {
  /** events after this seq are delivered (0: the whole history) */
  afterSeq?: number;
  /** give up after this many seconds; 0 waits for ever
   * @default 0 */
  timeoutSeconds?: number;
}

/**
 * Resolves once the run is terminal: a terminal event arrived, or the subscribe snapshot
 * reads a terminal status and holds every event (`replayTruncated` false — otherwise the
 * client reads the rest, terminal event included, before this resolves). Rejects with the
 * client's LiveRequestError when the subscription is refused, or on timeout.
 */
export function followRun(client: FlowlineClient, runId: string, onEvents: (events: RunEvent[]) => void, o: FollowOptions = {}): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (err?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void sub.close().finally(() => (err === undefined ? resolve() : reject(err)));
    };
    const sub = client.subscribeRun(runId, o.afterSeq ?? 0, (change) => {
      if (settled) return;
      if (change.events.length > 0) onEvents(change.events);
      if (change.events.some((e) => TERMINAL_EVENTS.has(e.kind))) finish();
      else if (change.snapshot && TERMINAL_STATUSES.has(change.snapshot.status) && !change.snapshot.replayTruncated) finish();
    });
    sub.ready.catch((err: unknown) => finish(err));
    const seconds = o.timeoutSeconds ?? 0;
    if (seconds > 0) timer = setTimeout(() => finish(new FollowTimeoutError(runId, seconds)), seconds * 1000);
  });
}
