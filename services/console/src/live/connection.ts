/** The live channel's connection state, for the header's indicator and the 3 s poll fallback. */
import { useSyncExternalStore } from 'react';
import type { FlowlineClient } from '@flowline/client';

/** True while the session's Socket.IO connection is up (it connects on first use). */
export function useLiveConnected(client: FlowlineClient): boolean {
  const socket = client.live().socket;
  return useSyncExternalStore(
    (onChange) => {
      socket.on('connect', onChange);
      socket.on('disconnect', onChange);
      socket.on('connect_error', onChange);
      return () => {
        socket.off('connect', onChange);
        socket.off('disconnect', onChange);
        socket.off('connect_error', onChange);
      };
    },
    () => socket.connected,
  );
}
