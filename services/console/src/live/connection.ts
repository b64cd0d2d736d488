/**
 * The session's live connection: opened once the page is first idle — after the view it
 * opened on is drawn, not on the way to it (creating the Socket.IO client and its socket is
 * main-thread work the first view does not need) — and its state, for the header's
 * indicator and the 3 s poll fallback.
 */
import { useEffect, useState } from 'react';
import type { FlowlineClient, LiveConnectionState } from '@flowline/client';

type Live = ReturnType<FlowlineClient['live']>;
type LiveSocket = Live['socket'];

/** The longest the connection waits for the page to be idle. */
export const LIVE_OPEN_DEFER_MAX_MS = 500;

/** Runs `fn` when the page is next idle (at most {@link LIVE_OPEN_DEFER_MAX_MS} later); answers a cancel. */
function whenIdle(fn: () => void): () => void {
  if (typeof requestIdleCallback === 'function') {
    const id = requestIdleCallback(fn, { timeout: LIVE_OPEN_DEFER_MAX_MS });
    return () => cancelIdleCallback(id);
  }
  const t = setTimeout(fn, 0);
  return () => clearTimeout(t);
}

/** The session's live client once it is open (created on first use, shared); null before. */
function useLiveClient(client: FlowlineClient): Live | null {
  const [live, setLive] = useState<{ client: FlowlineClient; live: Live } | null>(null);
  useEffect(() => whenIdle(() => setLive({ client, live: client.live() })), [client]);
  return live?.client === client ? live.live : null;
}

/** The session's live socket once it is open (created on first use, shared); null before. */
export function useLiveSocket(client: FlowlineClient): LiveSocket | null {
  return useLiveClient(client)?.socket ?? null;
}

/**
 * The live channel's state for the header: `connected`; `reconnecting` while the client will
 * try again (after any disconnect, a draining replica's included); `down` when it will not
 * (a refused key) or before the socket is opened. The views poll whenever it is not connected.
 */
export function useLiveState(client: FlowlineClient): LiveConnectionState {
  const live = useLiveClient(client);
  const [state, setState] = useState<LiveConnectionState>('down');
  useEffect(() => {
    if (!live) return;
    const { socket } = live;
    const sync = () => setState(live.state());
    sync();
    const events = ['connect', 'disconnect', 'connect_error'] as const;
    for (const e of events) socket.on(e, sync);
    // the manager's attempts: 'reconnecting' stays true while they go on, 'down' once they give up
    socket.io.on('reconnect_attempt', sync);
    socket.io.on('reconnect_failed', sync);
    return () => {
      for (const e of events) socket.off(e, sync);
      socket.io.off('reconnect_attempt', sync);
      socket.io.off('reconnect_failed', sync);
    };
  }, [live]);
  return live === null ? 'down' : state;
}

/** True while the session's Socket.IO connection is up. */
export function useLiveConnected(client: FlowlineClient): boolean {
  return useLiveState(client) === 'connected';
}
