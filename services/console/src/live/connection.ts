/**
 * The session's live connection: opened once the page is first idle — after the view it
 * opened on is drawn, not on the way to it (creating the Socket.IO client and its socket is
 * main-thread work the first view does not need) — and its state, for the header's
 * indicator and the 3 s poll fallback.
 */
import { useEffect, useState } from 'react';
import type { FlowlineClient } from '@flowline/client';

type LiveSocket = ReturnType<FlowlineClient['live']>['socket'];

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

/** The session's live socket once it is open (created on first use, shared); null before. */
export function useLiveSocket(client: FlowlineClient): LiveSocket | null {
  const [socket, setSocket] = useState<{ client: FlowlineClient; socket: LiveSocket } | null>(null);
  useEffect(() => whenIdle(() => setSocket({ client, socket: client.live().socket })), [client]);
  return socket?.client === client ? socket.socket : null;
}

/** True while the session's Socket.IO connection is up. */
export function useLiveConnected(client: FlowlineClient): boolean {
  const socket = useLiveSocket(client);
  const [up, setUp] = useState(false);
  useEffect(() => {
    if (!socket) return;
    const sync = () => setUp(socket.connected);
    sync();
    socket.on('connect', sync);
    socket.on('disconnect', sync);
    socket.on('connect_error', sync);
    return () => {
      socket.off('connect', sync);
      socket.off('disconnect', sync);
      socket.off('connect_error', sync);
    };
  }, [socket]);
  return socket !== null && up;
}
