/**
 * The live half of the typed client (CONTRACT §6, §8 "Live details"): one Socket.IO
 * connection; `subscribeRun` keeps the highest seq it has seen (its watermark) and, on
 * every ping above it, re-reads the events route from the watermark — pings carry no
 * content, may be merged or reordered, and a lost one only delays the next read. On
 * reconnect every subscription re-subscribes from its watermark, so nothing is missed.
 *
 * The connection comes back after ANY disconnect but the client's own `close()`. Socket.IO
 * reconnects by itself after a lost transport, but not after the server closed the socket
 * ("io server disconnect": a replica draining for a deploy does that), so the client
 * reconnects itself then, after a random delay below {@link SERVER_DISCONNECT_JITTER_MS}
 * (a replica's consoles do not all come back in the same instant); failed attempts then back
 * off (Socket.IO's reconnection: {@link RECONNECT_DELAY_MS} doubling up to
 * {@link RECONNECT_DELAY_MAX_MS}, randomised).
 */
import { io, type Socket } from 'socket.io-client';
import type { LiveEvent, NodeActivity, RunSnapshot } from '@flowline/queue/protocol';
import { LIVE_EVENTS, LIVE_SOCKET_PATH, asLiveErrorAck, asRunChangedPing, type RunChangedPing } from '@flowline/queue/live-wire';
import type { RestClient } from './rest';

/** `subscribeRun(runId, LATEST_SEQ, …)`: from the run's current last seq, replaying nothing. */
export const LATEST_SEQ = 'latest' as const;

/** The highest seq the events store holds (a Postgres integer). */
const MAX_SEQ = 2_147_483_647;

/** What a subscriber is handed: new events past the previous watermark, in seq order. */
export interface RunChange {
  runId: string;
  /** events after the previous watermark (possibly none) */
  events: LiveEvent[];
  /** highest seq delivered so far */
  watermark: number;
  /** set on the (re)subscribe ack */
  snapshot?: RunSnapshot;
  /** set when a ping triggered this read */
  ping?: RunChangedPing;
}

/** A refused live request. */
export class LiveRequestError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'LiveRequestError';
  }
}

/** One run subscription. */
export interface RunSubscription {
  readonly runId: string;
  /** resolves with the first snapshot; rejects when the subscription is refused */
  readonly ready: Promise<RunSnapshot>;
  /** highest seq delivered */
  watermark(): number;
  /** highest seq any ping named */
  highestPing(): number;
  close(): Promise<void>;
}

/** Options of {@link createLiveClient}. */
export interface LiveClientOptions {
  baseUrl: string;
  apiKey?: string;
  rest: RestClient;
  /** `['websocket']` by default (no long-polling upgrade dance) */
  transports?: Array<'websocket' | 'polling'>;
  /** called when a background re-read fails (it is retried on the next ping or reconnect) */
  onError?: (err: unknown) => void;
}

const ACK_TIMEOUT_MS = 30_000;
/** The first reconnection attempt's delay after a lost connection. */
export const RECONNECT_DELAY_MS = 500;
/** The longest delay between two reconnection attempts. */
export const RECONNECT_DELAY_MAX_MS = 5_000;
/** After the server closed the socket, the client reconnects within this (random) delay. */
export const SERVER_DISCONNECT_JITTER_MS = 1_000;

/** The connection's state: `connected`; `reconnecting` while it will try again; `down` once it will not (refused key, closed). */
export type LiveConnectionState = 'connected' | 'reconnecting' | 'down';

/** Creates the live client; the socket connects at once. */
export function createLiveClient(o: LiveClientOptions) {
  const socket: Socket = io(o.baseUrl, {
    path: LIVE_SOCKET_PATH,
    auth: o.apiKey ? { token: o.apiKey } : {},
    transports: o.transports ?? ['websocket'],
    reconnectionDelay: RECONNECT_DELAY_MS,
    reconnectionDelayMax: RECONNECT_DELAY_MAX_MS,
  });
  const subs = new Map<string, Set<Sub>>();
  let closedByUs = false;
  let reconnectTimer: ReturnType<typeof setTimeout> | null = null;
  // registered before any other listener: a state read in another 'disconnect' listener sees the timer
  socket.on('disconnect', (reason) => {
    if (reason !== 'io server disconnect' || closedByUs) return;
    reconnectTimer = setTimeout(() => {
      reconnectTimer = null;
      if (!closedByUs) socket.connect();
    }, Math.random() * SERVER_DISCONNECT_JITTER_MS);
  });
  /** See {@link LiveConnectionState}; `socket.active` is true while Socket.IO itself reconnects. */
  const state = (): LiveConnectionState => (socket.connected ? 'connected' : reconnectTimer !== null || socket.active ? 'reconnecting' : 'down');
  const onError = o.onError ?? (() => undefined);

  interface Sub {
    resubscribe(): void;
    onPing(p: RunChangedPing): void;
    /** stops delivering (the run was unsubscribed as a whole) */
    drop(): void;
  }

  socket.on(LIVE_EVENTS.runChanged, (raw: unknown) => {
    const p = asRunChangedPing(raw);
    if (!p) return;
    for (const s of subs.get(p.runId) ?? []) s.onPing(p);
  });
  let connectedOnce = false;
  socket.on('connect', () => {
    if (connectedOnce) for (const set of subs.values()) for (const s of set) s.resubscribe();
    connectedOnce = true;
  });

  async function request(event: string, payload: unknown): Promise<unknown> {
    return socket.timeout(ACK_TIMEOUT_MS).emitWithAck(event, payload);
  }

  /**
   * Subscribes to a run; `onChange` gets the snapshot, then every batch of new events.
   * `afterSeq` {@link LATEST_SEQ} (`'latest'`) starts at the run's current last seq: the
   * snapshot replays nothing and only later changes are read (a view that reads the run's
   * state itself need not page through its whole history first).
   */
  function subscribeRun(runId: string, afterSeq: number | typeof LATEST_SEQ, onChange: (c: RunChange) => void): RunSubscription {
    // from the latest: asked as the highest seq there can be, the server answers no replay and its last seq as the watermark
    let fromLatest = afterSeq === LATEST_SEQ;
    let watermark = afterSeq === LATEST_SEQ ? 0 : afterSeq;
    let pinged = 0;
    let closed = false;
    let reading = false;
    let again = false;
    let settle: { resolve(s: RunSnapshot): void; reject(e: unknown): void } | null = null;
    const ready = new Promise<RunSnapshot>((resolve, reject) => (settle = { resolve, reject }));
    ready.catch(() => undefined);

    const catchUp = async (ping?: RunChangedPing) => {
      if (reading) {
        again = true;
        return;
      }
      reading = true;
      try {
        do {
          again = false;
          let page;
          do {
            page = await o.rest.runs.events(runId, { afterSeq: watermark });
            if (closed) return;
            // a snapshot ack may have delivered some of these while the read was in flight
            const fresh = page.events.filter((e) => e.seq > watermark);
            const last = fresh.at(-1);
            if (last) watermark = last.seq;
            if (fresh.length > 0 || ping) onChange({ runId, events: fresh, watermark, ...(ping ? { ping } : {}) });
            ping = undefined;
          } while (page.truncated);
        } while (again && !closed);
      } catch (err) {
        onError(err);
      } finally {
        reading = false;
      }
    };

    const subscribe = async (): Promise<void> => {
      let answer: unknown;
      try {
        answer = await request(LIVE_EVENTS.subscribeRun, { runId, afterSeq: fromLatest ? MAX_SEQ : watermark });
      } catch (err) {
        // ack timeout or disconnect: the reconnect handler subscribes again
        onError(err);
        return;
      }
      if (closed) return;
      const refused = asLiveErrorAck(answer);
      if (refused) {
        const { code, message, retryAfterMs } = refused.error;
        if (code === 'TooManyRequests') {
          setTimeout(() => void subscribe(), retryAfterMs ?? 1000);
          return;
        }
        remove();
        settle?.reject(new LiveRequestError(code, message, retryAfterMs));
        return;
      }
      const snapshot = answer as RunSnapshot;
      const fresh = snapshot.events.filter((e) => e.seq > watermark);
      watermark = Math.max(watermark, snapshot.watermark);
      // a re-subscribe (after a reconnect) catches up from this watermark
      fromLatest = false;
      onChange({ runId, events: fresh, watermark, snapshot });
      settle?.resolve(snapshot);
      if (snapshot.replayTruncated || pinged > watermark) await catchUp();
    };

    const sub: Sub = {
      resubscribe: () => void subscribe(),
      drop: () => {
        closed = true;
        settle?.reject(new LiveRequestError('Unsubscribed', 'the run was unsubscribed'));
      },
      onPing(p) {
        pinged = Math.max(pinged, p.seq);
        if (p.seq > watermark) void catchUp(p);
      },
    };
    const remove = () => {
      const set = subs.get(runId);
      set?.delete(sub);
      if (set?.size === 0) subs.delete(runId);
    };
    let set = subs.get(runId);
    if (!set) subs.set(runId, (set = new Set()));
    set.add(sub);
    if (socket.connected) void subscribe();
    else socket.once('connect', () => void subscribe());

    return {
      runId,
      ready,
      watermark: () => watermark,
      highestPing: () => pinged,
      async close() {
        if (closed) return;
        closed = true;
        remove();
        if (!subs.has(runId) && socket.connected) await request(LIVE_EVENTS.unsubscribeRun, { runId }).catch(() => undefined);
      },
    };
  }

  /** Starts a node's activity feed; resolves with the invocation id, rejects when refused. */
  async function streamNodeActivity(runId: string, nodeKey: string, onActivity: (a: NodeActivity) => void): Promise<{ invocationId: string; stop(): void }> {
    const listener = (a: NodeActivity) => {
      if (a.runId === runId && a.nodeKey === nodeKey) onActivity(a);
    };
    socket.on(LIVE_EVENTS.nodeActivity, listener);
    const answer = await request(LIVE_EVENTS.streamNodeActivity, { runId, nodeKey });
    const refused = asLiveErrorAck(answer);
    if (refused) {
      socket.off(LIVE_EVENTS.nodeActivity, listener);
      throw new LiveRequestError(refused.error.code, refused.error.message, refused.error.retryAfterMs);
    }
    return { invocationId: (answer as { invocationId: string }).invocationId, stop: () => socket.off(LIVE_EVENTS.nodeActivity, listener) };
  }

  /**
   * `unsubscribeRun`: leaves the run's room and stops the run's activity feeds on the
   * server; every local subscription of the run stops delivering. Rejects when refused.
   */
  async function unsubscribeRun(runId: string): Promise<void> {
    for (const s of subs.get(runId) ?? []) s.drop();
    subs.delete(runId);
    const refused = asLiveErrorAck(await request(LIVE_EVENTS.unsubscribeRun, { runId }));
    if (refused) throw new LiveRequestError(refused.error.code, refused.error.message, refused.error.retryAfterMs);
  }

  return {
    socket,
    state,
    subscribeRun,
    unsubscribeRun,
    streamNodeActivity,
    /** sends a raw event with ack (for clients of events this module does not wrap) */
    request,
    close() {
      closedByUs = true;
      if (reconnectTimer !== null) clearTimeout(reconnectTimer);
      reconnectTimer = null;
      subs.clear();
      socket.disconnect();
    },
  };
}

/** The live client's type. */
export type LiveClient = ReturnType<typeof createLiveClient>;
