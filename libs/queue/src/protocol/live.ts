/**
 * The live channel's wire vocabulary (CONTRACT §6, §8 "Live details"): Socket.IO event
 * names, the run room naming, the Redis change channel and activity stream keys, and
 * the zod schemas of every payload. Emitters (dispatchers), the API's live hub and the
 * typed client all import from here, so a name or shape lives in exactly one place.
 */
import { z } from 'zod';
import { DEFAULT_QUEUE_PREFIX } from './names';
import type * as wire from './live-wire';

// the path and event names live in the zod-free module a client imports alone
export { LIVE_EVENTS, LIVE_SOCKET_PATH } from './live-wire';

/** The Socket.IO room of one run's subscribers. */
export function runRoom(runId: string): string {
  return `run:${runId}`;
}

/**
 * The prefix of the change-ping channels: a run's pings go to `<prefix>:changes:<runId>`
 * ({@link runChangesChannel}).
 */
export function changesChannel(prefix: string = DEFAULT_QUEUE_PREFIX): string {
  return `${prefix}:changes`;
}

/**
 * The Redis pub/sub channel of one run's content-free change pings, published by whoever
 * commits the run's events (dispatchers) after the commit. An API replica subscribes while
 * it has a socket or SSE stream on the run (from the first one's join to the last one's
 * leave), so a replica nobody watches the run through spends nothing on its commits.
 */
export function runChangesChannel(runId: string, prefix: string = DEFAULT_QUEUE_PREFIX): string {
  return `${changesChannel(prefix)}:${runId}`;
}

/** The Redis stream of one LLM invocation's live deltas (XADD fields `type`, `text`). */
export function activityStreamKey(invocationId: string, prefix: string = DEFAULT_QUEUE_PREFIX): string {
  return `${prefix}:activity:${invocationId}`;
}

export const changeKindSchema = z.enum(['run', 'node', 'gate']);
export type ChangeKind = z.output<typeof changeKindSchema>;

/** Ping kind of an event kind: `gate.*` → gate, `node.*` → node, anything else (run.*) → run. */
export function changeKindOf(eventKind: string): ChangeKind {
  if (eventKind.startsWith('gate.')) return 'gate';
  if (eventKind.startsWith('node.')) return 'node';
  return 'run';
}

/** `runChanged` and the change channel's message: `{ runId, seq, kind }`, nothing else. */
export const runChangedPingSchema = z.strictObject({
  runId: z.string().min(1).max(128),
  seq: z.number().int().min(0),
  kind: changeKindSchema,
});
export type RunChangedPing = z.output<typeof runChangedPingSchema>;

/** `subscribeRun` payload. `afterSeq` is exclusive; absent means 0. */
export const subscribeRunRequestSchema = z.strictObject({
  runId: z.string().min(1).max(128),
  afterSeq: z.number().int().min(0).default(0),
});
export type SubscribeRunRequest = z.input<typeof subscribeRunRequestSchema>;

/** `unsubscribeRun` payload. */
export const unsubscribeRunRequestSchema = z.strictObject({ runId: z.string().min(1).max(128) });

/** `streamNodeActivity` payload. */
export const streamNodeActivityRequestSchema = z.strictObject({
  runId: z.string().min(1).max(128),
  nodeKey: z.string().min(1).max(200),
});

/** An event as the snapshot replays it (same shape as the events route). */
export const liveEventSchema = z.object({
  seq: z.number().int(),
  kind: z.string(),
  nodeKey: z.string().nullable(),
  at: z.string(),
  detail: z.unknown(),
});
export type LiveEvent = z.output<typeof liveEventSchema>;

const pendingRefSchema = z.object({ nodeKey: z.string(), runId: z.string() });

/** The `subscribeRun` ack. `watermark` is the highest seq the snapshot covers. */
export const runSnapshotSchema = z.object({
  status: z.string(),
  queued: z.number().int(),
  running: z.number().int(),
  pendingDecisions: z.array(pendingRefSchema),
  pendingInputs: z.array(pendingRefSchema),
  watermark: z.number().int(),
  events: z.array(liveEventSchema),
  replayTruncated: z.boolean(),
});
export type RunSnapshot = z.output<typeof runSnapshotSchema>;

/** Stable codes of a refused live request. */
export const liveErrorCodeSchema = z.enum(['NotFound', 'Forbidden', 'ValidationFailed', 'NodeStateConflict', 'TooManyRequests', 'Internal']);
export type LiveErrorCode = z.output<typeof liveErrorCodeSchema>;

/** The ack of a refused live request: `{ error: { code, message, retryAfterMs? } }`. */
export const liveErrorAckSchema = z.object({
  error: z.object({ code: liveErrorCodeSchema, message: z.string(), retryAfterMs: z.number().optional() }),
});
export type LiveErrorAck = z.output<typeof liveErrorAckSchema>;

/** Both ways assignable: one shape. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;
/** Compile-time: the zod-free guards of live-wire.ts answer exactly the shapes these schemas parse. */
export type LiveWireAgrees = [Assert<Same<RunChangedPing, wire.RunChangedPing>>, Assert<Same<LiveErrorAck, wire.LiveErrorAck>>];

export const activityTypeSchema = z.enum(['content', 'reasoning', 'toolCall', 'phase', 'terminal']);
export type ActivityType = z.output<typeof activityTypeSchema>;

/** One entry of an activity stream as the LLM lane XADDs it (fields `type`, `text`). */
export const activityEntrySchema = z.object({ type: activityTypeSchema, text: z.string().optional() });

/** `nodeActivity`: one delta; `offset` is the entry's 0-based position in the invocation's stream. */
export const nodeActivitySchema = z.strictObject({
  runId: z.string(),
  nodeKey: z.string(),
  invocationId: z.string(),
  type: activityTypeSchema,
  offset: z.number().int().min(0),
  text: z.string().optional(),
});
export type NodeActivity = z.output<typeof nodeActivitySchema>;
