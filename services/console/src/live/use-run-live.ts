/**
 * A run kept current: `subscribeRun` on the live channel (the client re-reads the events
 * route from its watermark on every ping) hands the view each event past its watermark,
 * and the events move the run's nodes in the cached run detail at once
 * (`live/run-events.ts`). The run's queries (detail, node panel, events tab) re-read too,
 * for what events do not carry (documents, durations, controls): on the first change at
 * once, then at most every {@link RUN_REREAD_GAP_MS} while changes keep coming, always once
 * after the last — coalesced, never a queue of reads and never a cancelled one. While the
 * socket is down (or the subscription was refused) the view polls every
 * {@link RUN_POLL_MS}; the next successful subscribe (its snapshot) clears the poll.
 */
import { useEffect, useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { LATEST_SEQ, LIVE_EVENTS, type RunChangedPing, type RunDetail } from '@flowline/client';
import { useClient } from '../session/session';
import { keys } from '../api/queries';
import { useLiveConnected, useLiveSocket } from './connection';
import { applyRunEvents, runEventLog } from './run-events';
import { TERMINAL_RUN_STATUSES } from '../ui/status';

export const RUN_POLL_MS = 3_000;
/** While a run keeps changing, its queries re-read at most this often (its events show each change as it comes). */
export const RUN_REREAD_GAP_MS = 1_000;

export interface RunLive {
  /** `live` while subscribed over a connected socket, else `polling` */
  mode: 'live' | 'polling';
  /** why the subscription was refused, if it was */
  refusal: unknown;
  /** poll interval for the run's queries (false while live) */
  pollMs: number | false;
}

/**
 * Runs `fn` now, or once more right after the run in flight; never two at once. With
 * `minGapMs`, a run starts no sooner than that after the one before it (a burst of kicks
 * costs one run now and one at the end of the gap).
 */
export function coalesce(fn: () => Promise<unknown>, minGapMs = 0): { kick(): void; stop(): void } {
  let running = false;
  let again = false;
  let stopped = false;
  let lastStart = -Infinity;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const run = async () => {
    running = true;
    do {
      const wait = lastStart + minGapMs - Date.now();
      if (wait > 0) await new Promise<void>((resolve) => (timer = setTimeout(resolve, wait)));
      timer = null;
      if (stopped) break;
      again = false;
      lastStart = Date.now();
      await fn().catch(() => undefined);
    } while (again && !stopped);
    running = false;
  };
  return {
    kick() {
      if (stopped) return;
      if (running) {
        again = true;
        return;
      }
      void run();
    },
    stop() {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
    },
  };
}

/**
 * True when a change needs no re-read: the subscription's first snapshot, with no new event,
 * of a run already read as ended at (or past) the snapshot's last event — nothing of it can
 * change any more, so the detail, its nodes and its controls stay as read. A 150-node run's
 * view opened on a finished run otherwise reads and draws the whole run twice.
 */
export function settledAsRead(read: RunDetail | undefined, change: { events: readonly unknown[]; watermark: number; snapshot?: unknown }): boolean {
  return !!read && !!change.snapshot && change.events.length === 0 && TERMINAL_RUN_STATUSES.has(read.run.status) && read.run.lastSeq >= change.watermark;
}

/** Subscribes to `runId` while mounted; see the module comment. */
export function useRunLive(runId: string | undefined): RunLive {
  const client = useClient();
  const qc = useQueryClient();
  const socket = useLiveSocket(client);
  const connected = useLiveConnected(client);
  const [subscribedTo, setSubscribedTo] = useState<string | null>(null);
  const [refusal, setRefusal] = useState<{ runId: string; error: unknown } | null>(null);

  useEffect(() => {
    if (!runId || !socket) return;
    const refresh = coalesce(() => qc.refetchQueries({ queryKey: ['run', runId], type: 'active' }, { cancelRefetch: false }), RUN_REREAD_GAP_MS);
    const log = runEventLog(qc);
    // from the run's latest seq: the view reads the run itself, it need not page through its history first
    const sub = client.subscribeRun(runId, LATEST_SEQ, (change) => {
      if (change.snapshot) setSubscribedTo(runId);
      if (change.events.length > 0) {
        log.append(runId, change.events);
        qc.setQueryData<RunDetail>(keys.run(runId), (d) => (d ? applyRunEvents(d, change.events) : d));
      }
      if (!settledAsRead(qc.getQueryData<RunDetail>(keys.run(runId)), change)) refresh.kick();
    });
    sub.ready.catch((error: unknown) => setRefusal({ runId, error }));
    const down = () => setSubscribedTo(null);
    const pinged = (p: RunChangedPing | undefined) => {
      if (p?.runId === runId) refresh.kick();
    };
    socket.on('disconnect', down);
    socket.on(LIVE_EVENTS.runChanged, pinged);
    return () => {
      socket.off('disconnect', down);
      socket.off(LIVE_EVENTS.runChanged, pinged);
      refresh.stop();
      log.forget(runId);
      setSubscribedTo(null);
      void sub.close();
    };
  }, [client, qc, runId, socket]);

  const live = connected && subscribedTo === runId && runId !== undefined;
  return {
    mode: live ? 'live' : 'polling',
    refusal: refusal && refusal.runId === runId ? refusal.error : null,
    pollMs: live ? false : RUN_POLL_MS,
  };
}
