/**
 * Per-socket handlers of the live channel: `subscribeRun` (scope → admission → validate →
 * tenant check → join → snapshot ack), `unsubscribeRun` and `streamNodeActivity`. A malformed
 * payload or a failed read is answered with an error ack; a handler never throws into
 * Socket.IO, and a call without an ack function is ignored (it cannot be answered).
 */
import type { Socket } from 'socket.io';
import type { Logger } from 'pino';
import {
  LIVE_EVENTS,
  type LiveErrorAck,
  type LiveErrorCode,
  runRoom,
  streamNodeActivityRequestSchema,
  subscribeRunRequestSchema,
  unsubscribeRunRequestSchema,
} from '@flowline/queue';
import { definitionOfSubject, getRunHead } from '@flowline/db';
import { forbiddenMessage, type Principal } from '../auth';
import { isUuid } from '../present';
import { LIVE_EVENT_SCOPES } from '../route-scopes';
import { startActivityReader, type ActivityReader } from './activity';
import type { LiveDeps } from './live-server';
import { readNodeActivityTarget, readRunSnapshot } from './snapshot';
import type { TokenBucket } from './token-bucket';

/** Shared per-replica state the handlers use. */
export interface HandlerDeps extends LiveDeps {
  bucket: TokenBucket;
  /** activity readers open on this replica */
  activity: { count: number };
  /** resolves once this replica receives the run's change pings (its room exists: a socket joined) */
  pingsFlowing(runId: string): Promise<void>;
  log: Logger;
}

type Ack = (answer: unknown) => void;

/** Builds an error ack `{ error: { code, message, retryAfterMs? } }`. */
export function errorAck(code: LiveErrorCode, message: string, retryAfterMs?: number): LiveErrorAck {
  return { error: retryAfterMs === undefined ? { code, message } : { code, message, retryAfterMs } };
}

const issuesOf = (e: { issues: Array<{ path: PropertyKey[]; message: string }> }) =>
  e.issues.map((i) => `${i.path.map(String).join('.') || 'payload'}: ${i.message}`).join('; ');

/** Wires the live events of one connected socket. */
export function registerLiveHandlers(socket: Socket, d: HandlerDeps): void {
  const { tenant, scopes, managed } = (socket.data as { principal: Principal }).principal;
  // a key limited to some definitions watches only their runs (as its HTTP reads: key-constraints.ts)
  const outsideDefinitions = async (runId: string): Promise<boolean> => {
    const allowed = managed?.definitionIds;
    if (!allowed) return false;
    const definitionId = await definitionOfSubject(d.pool, tenant, 'run', runId);
    return definitionId !== null && !allowed.has(definitionId);
  };
  const KEY_CONSTRAINT = 'KeyConstraint: this key is limited to some definitions, not this run\'s';
  const readers = new Map<string, ActivityReader>();
  const readerKey = (runId: string, nodeKey: string) => `${runId}\u0000${nodeKey}`;
  // The run rooms this socket holds a subscription slot for: joined, or being subscribed
  // (reserved before the first await, so concurrent calls cannot all pass the cap check
  // while each waits for admission), with the calls in flight per room. A room leaves the
  // set when no call for it is in flight and the socket is not in it.
  const slots = new Set<string>();
  const inFlight = new Map<string, number>();
  const release = (room: string) => {
    const n = (inFlight.get(room) ?? 1) - 1;
    if (n > 0) inFlight.set(room, n);
    else inFlight.delete(room);
    if (n <= 0 && !socket.rooms.has(room)) slots.delete(room);
  };
  const guard = (event: keyof typeof LIVE_EVENT_SCOPES, body: (payload: unknown, ack: Ack) => Promise<void>) => {
    const scope = LIVE_EVENT_SCOPES[event];
    socket.on(event, (payload: unknown, ack?: unknown) => {
      if (typeof ack !== 'function') return;
      const answer = ack as Ack;
      // the key's scope first, before validation or admission (as a route's 403 precedes its body)
      if (!scopes.has(scope)) return answer(errorAck('Forbidden', forbiddenMessage(scope)));
      body(payload, answer).catch((err: unknown) => {
        d.log.error({ err, event }, 'live handler failed');
        answer(errorAck('Internal', 'internal error'));
      });
    });
  };

  guard(LIVE_EVENTS.subscribeRun, async (payload, ack) => {
    const req = subscribeRunRequestSchema.safeParse(payload);
    if (!req.success) return ack(errorAck('ValidationFailed', issuesOf(req.error)));
    const { runId, afterSeq } = req.data;
    const room = runRoom(runId);
    if (!slots.has(room) && slots.size >= d.options.maxSubscriptionsPerSocket) {
      return ack(errorAck('TooManyRequests', `at most ${d.options.maxSubscriptionsPerSocket} subscriptions per connection`));
    }
    slots.add(room);
    inFlight.set(room, (inFlight.get(room) ?? 0) + 1);
    try {
      const admission = await d.bucket.take();
      if (!admission.admitted) return ack(errorAck('TooManyRequests', 'subscriptions are being admitted gradually', admission.retryAfterMs));
      if (!isUuid(runId) || !(await getRunHead(d.pool, tenant, runId))) return ack(errorAck('NotFound', 'no such run'));
      if (await outsideDefinitions(runId)) return ack(errorAck('Forbidden', KEY_CONSTRAINT));
      if (socket.disconnected) return;
      // join first (the room's first join subscribes the run's change channel) and wait for the
      // subscription: a change committed after this point is pinged to the room, one before it is in the replay
      await socket.join(room);
      await d.pingsFlowing(runId);
      const snapshot = await readRunSnapshot(d.pool, tenant, runId, afterSeq, d.eventReplayLimit);
      if (!snapshot) {
        await socket.leave(room);
        return ack(errorAck('NotFound', 'no such run'));
      }
      ack(snapshot);
    } finally {
      release(room);
    }
  });

  guard(LIVE_EVENTS.unsubscribeRun, async (payload, ack) => {
    const req = unsubscribeRunRequestSchema.safeParse(payload);
    if (!req.success) return ack(errorAck('ValidationFailed', issuesOf(req.error)));
    const room = runRoom(req.data.runId);
    await socket.leave(room);
    if (!inFlight.has(room)) slots.delete(room);
    for (const [k, r] of readers) if (k.startsWith(`${req.data.runId}\u0000`)) r.stop();
    ack({ ok: true });
  });

  guard(LIVE_EVENTS.streamNodeActivity, async (payload, ack) => {
    const req = streamNodeActivityRequestSchema.safeParse(payload);
    if (!req.success) return ack(errorAck('ValidationFailed', issuesOf(req.error)));
    const { runId, nodeKey } = req.data;
    if (!isUuid(runId)) return ack(errorAck('NotFound', 'no such run'));
    if (await outsideDefinitions(runId)) return ack(errorAck('Forbidden', KEY_CONSTRAINT));
    const target = await readNodeActivityTarget(d.pool, tenant, runId, nodeKey);
    if (!target) return ack(errorAck('NotFound', 'no such run or node'));
    if (target.status !== 'Running' || target.invocationId === null) {
      return ack(errorAck('NodeStateConflict', `node is ${target.status}, activity streams only while Running`));
    }
    const key = readerKey(runId, nodeKey);
    const existing = readers.get(key);
    if (existing) return ack({ invocationId: target.invocationId });
    if (d.activity.count >= d.options.maxActivityStreams) {
      return ack(errorAck('TooManyRequests', 'too many activity streams on this replica', 1000));
    }
    const invocationId = target.invocationId;
    d.activity.count++;
    const reader = startActivityReader(
      {
        redis: d.redis,
        prefix: d.queuePrefix,
        blockMs: d.options.activityBlockMs,
        logger: d.log,
        stillRunning: async () => {
          const now = await readNodeActivityTarget(d.pool, tenant, runId, nodeKey);
          return now?.status === 'Running' && now.invocationId === invocationId;
        },
        emit: (frame) => socket.emit(LIVE_EVENTS.nodeActivity, frame),
      },
      { runId, nodeKey, invocationId },
    );
    readers.set(key, reader);
    void reader.done.finally(() => {
      d.activity.count--;
      if (readers.get(key) === reader) readers.delete(key);
    });
    ack({ invocationId });
  });

  socket.on('disconnect', () => {
    for (const r of readers.values()) r.stop();
  });
}
