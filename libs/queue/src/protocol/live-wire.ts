/**
 * What a live client needs of the live channel's vocabulary, without zod: the Socket.IO
 * path and event names, and guards for the two server messages a client must trust only
 * after checking (a change ping and a refused request's ack). The typed client (and so the
 * console's first page) imports this module alone; the server side validates its requests
 * with the zod schemas of `live.ts`, and `live-wire.test.ts` holds the guards to them.
 */

/** Socket.IO path on the API's HTTP server. */
export const LIVE_SOCKET_PATH = '/socket.io';

/** Socket.IO event names. */
export const LIVE_EVENTS = {
  /** client → server, with ack: `subscribeRunRequestSchema` → `RunSnapshot` | {@link LiveErrorAck} */
  subscribeRun: 'subscribeRun',
  /** client → server, optional ack: `{ runId }` */
  unsubscribeRun: 'unsubscribeRun',
  /** client → server, with ack: `{ runId, nodeKey }` → `{ invocationId }` | {@link LiveErrorAck} */
  streamNodeActivity: 'streamNodeActivity',
  /** server → client: {@link RunChangedPing} */
  runChanged: 'runChanged',
  /** server → client: `NodeActivity` */
  nodeActivity: 'nodeActivity',
} as const;

/** What a change ping says changed. */
export type ChangeKind = 'run' | 'node' | 'gate';
const CHANGE_KINDS: ReadonlySet<string> = new Set<ChangeKind>(['run', 'node', 'gate']);

/** `runChanged` and the change channel's message: `{ runId, seq, kind }`, nothing else. */
export interface RunChangedPing {
  runId: string;
  seq: number;
  kind: ChangeKind;
}

/** Stable codes of a refused live request. */
export type LiveErrorCode = 'NotFound' | 'Forbidden' | 'ValidationFailed' | 'NodeStateConflict' | 'TooManyRequests' | 'Internal';
const LIVE_ERROR_CODES: ReadonlySet<string> = new Set<LiveErrorCode>(['NotFound', 'Forbidden', 'ValidationFailed', 'NodeStateConflict', 'TooManyRequests', 'Internal']);

/** The ack of a refused live request: `{ error: { code, message, retryAfterMs? } }`. */
export interface LiveErrorAck {
  error: { code: LiveErrorCode; message: string; retryAfterMs?: number | undefined };
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** `raw` as a change ping when it is exactly one (`runChangedPingSchema`'s rules), else null. */
export function asRunChangedPing(raw: unknown): RunChangedPing | null {
  if (!isRecord(raw)) return null;
  const keys = Object.keys(raw);
  if (keys.length !== 3) return null;
  const { runId, seq, kind } = raw;
  if (typeof runId !== 'string' || runId.length < 1 || runId.length > 128) return null;
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) return null;
  if (typeof kind !== 'string' || !CHANGE_KINDS.has(kind)) return null;
  return { runId, seq, kind: kind as ChangeKind };
}

/** `answer` as a refused request's ack when it is one (`liveErrorAckSchema`'s rules), else null. */
export function asLiveErrorAck(answer: unknown): LiveErrorAck | null {
  if (!isRecord(answer) || !isRecord(answer.error)) return null;
  const { code, message, retryAfterMs } = answer.error;
  if (typeof code !== 'string' || !LIVE_ERROR_CODES.has(code) || typeof message !== 'string') return null;
  if (retryAfterMs !== undefined && (typeof retryAfterMs !== 'number' || !Number.isFinite(retryAfterMs))) return null;
  return { error: { code: code as LiveErrorCode, message, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) } };
}
