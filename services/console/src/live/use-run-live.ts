/**
 * A run kept current: `subscribeRun` on the live channel (the client re-reads the events
 * route from its watermark on every ping), and on every ping (as it arrives, not after the
 * client's events read) and every change the run's queries re-read —
 * coalesced, so a burst of pings costs one read in flight plus one after it, never a queue
 * of them and never a cancelled read. While the socket is down (or the subscription was
 * refused) the view polls every {@link RUN_POLL_MS}; the next successful subscribe (its
 * snapshot) clears the poll.
 */
import { useEffect, useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { LATEST_SEQ, LIVE_EVENTS, type RunChangedPing } from '@flowline/client';
import { useClient } from '../session/session';
import { useLiveConnected } from './connection';

export const RUN_POLL_MS = 3_000;

export interface RunLive {
  /** `live` while subscribed over a connected socket, else `polling` */
  mode: 'live' | 'polling';
  /** why the subscription was refused, if it was */
  refusal: unknown;
  /** poll interval for the run's queries (false while live) */
  pollMs: number | false;
}

/** Runs `fn` now, or once more right after the run in flight; never two at once. */
export function coalesce(fn: () => Promise<unknown>): { kick(): void; stop(): void } {
  let running = false;
  let again = false;
  let stopped = false;
  return {
    kick() {
      if (stopped) return;
      if (running) {
        again = true;
        return;
      }
      running = true;
      void (async () => {
        do {
          again = false;
          await fn().catch(() => undefined);
        } while (again && !stopped);
        running = false;
      })();
    },
    stop() {
      stopped = true;
    },
  };
}

/** Subscribes to `runId` while mounted; see the module comment. */
export function useRunLive(runId: string | undefined): RunLive {
  const client = useClient();
  const qc = useQueryClient();
  const connected = useLiveConnected(client);
  const [subscribedTo, setSubscribedTo] = useState<string | null>(null);
  const [refusal, setRefusal] = useState<{ runId: string; error: unknown } | null>(null);

  useEffect(() => {
    if (!runId) return;
    const refresh = coalesce(() => qc.refetchQueries({ queryKey: ['run', runId], type: 'active' }, { cancelRefetch: false }));
    // from the run's latest seq: the view reads the run itself, it need not page through its history first
    const sub = client.subscribeRun(runId, LATEST_SEQ, (change) => {
      if (change.snapshot) setSubscribedTo(runId);
      refresh.kick();
    });
    sub.ready.catch((error: unknown) => setRefusal({ runId, error }));
    const socket = client.live().socket;
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
      setSubscribedTo(null);
      void sub.close();
    };
  }, [client, qc, runId]);

  const live = connected && subscribedTo === runId && runId !== undefined;
  return {
    mode: live ? 'live' : 'polling',
    refusal: refusal && refusal.runId === runId ? refusal.error : null,
    pollMs: live ? false : RUN_POLL_MS,
  };
}
