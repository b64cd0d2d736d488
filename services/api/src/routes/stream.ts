/**
 * `GET /v1/runs/{id}/stream`: Server-Sent Events of a run. Each committed event becomes a
 * frame `id: <seq>` / `event: runChanged` / `data: {"runId","seq","kind"}`, exactly the live
 * channel's ping; a node or gate event is followed by an `event: node` frame (same id) naming the
 * node and the status the event leaves it in. While an LlmCall, Agent or
 * DecisionModel node runs, its live deltas (content, reasoning, tool calls, phases) come as
 * `event: activity` frames; once the run is terminal and every event was sent, one
 * `event: run.result` frame (status, failure, output) ends the stream. Every frame's `id:` is a
 * cursor (./sse-cursor.ts): `Last-Event-ID` resumes after it, events and activity alike.
 *
 * Events are replayed from the table page by page; then the stream sleeps until the replica's
 * change feed (the same pings the Socket.IO channel relays) names a newer seq of this run, and
 * re-reads the table from its last sent seq — so frames always come from the store, in order,
 * none skipped. A safety re-read every `SSE_FALLBACK_FACTOR × streamPollMs` bounds the delay of
 * a lost ping; while activity is relayed the stream looks at it every `ACTIVITY_POLL_MS`.
 */
import type { OpenAPIHono} from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { streamSSE } from 'hono/streaming';
import { getRunDetail, getRunHead, listRunEvents, runningActivityInvocations } from '@flowline/db';
import { nodeStatusAfterEvent, TERMINAL_RUN_STATUSES, type RunStatus } from '@flowline/graph';
import { activityEntrySchema, activityStreamKey, changeKindOf } from '@flowline/queue';
import { wakeableSleep } from '@flowline/runtime';
import { formatCursor, LAST_EVENT_ID_PATTERN, parseCursor, type SseCursor } from '../sse-cursor';
import { jsonText } from '../body';
import { sharedChangeFeed } from '../live/change-feed';
import type { AppDeps, AppEnv } from '../context';
import { NotFoundError } from '../errors';
import { requireUuid } from '../present';
import { INT4_MAX, IdParam } from '../schemas';
import { v1Route } from '../v1-route';

const streamRoute = v1Route.runs('get', '/v1/runs/{id}/stream', {
  operationId: 'streamRunChanges',
  summary: "Follow a run's change pings as Server-Sent Events",
  request: {
    params: IdParam,
    query: z.object({ afterSeq: z.coerce.number().int().min(0).max(INT4_MAX).optional() }),
    headers: z.object({
      'last-event-id': z
        .string()
        .regex(LAST_EVENT_ID_PATTERN, 'must be an `id:` this stream sent')
        .refine((v) => parseCursor(v) !== null, 'must be an `id:` this stream sent')
        .refine((v) => (parseCursor(v)?.seq ?? 0) <= INT4_MAX, `its seq must be at most ${INT4_MAX}`)
        .optional()
        .openapi({ description: 'resume after this frame (an `id:` this stream sent); an empty value is ignored' }),
    }),
  },
  responses: {
    200: { content: { 'text/event-stream': { schema: z.string() } }, description: 'runChanged, activity and run.result frames' },
  },
});

/** An idle stream writes an SSE comment this often. */
const KEEPALIVE_MS = 15_000;

/** Without a ping, the table is re-read after this many `streamPollMs` (lost-ping bound). */
export const SSE_FALLBACK_FACTOR = 8;

/** While activity is relayed, the stream looks for new entries this often, ms. */
export const ACTIVITY_POLL_MS = 100;

/** Ping kind of an event kind: `run.*` → run, `node.*` → node, `gate.*` → gate. */
export const pingKind = changeKindOf;

/** Registers the SSE route on `app`. */
export function registerStreamRoute(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  app.openapi(streamRoute, async (c) => {
    const runId = requireUuid(c.req.valid('param').id, 'run');
    const tenant = c.get('tenant');
    if (!(await getRunHead(deps.pool, tenant, runId))) throw new NotFoundError('run');
    const lastEventId = (c.req.valid('header')['last-event-id'] ?? '').trim();
    const cursor: SseCursor =
      lastEventId !== '' ? parseCursor(lastEventId)! : { seq: c.req.valid('query').afterSeq ?? 0, sent: new Map(), ended: false };
    if (cursor.ended) return c.body(null, 204);

    const feed = sharedChangeFeed(deps.redis, deps.queuePrefix, deps.logger);
    const fallbackMs = deps.limits.streamPollMs * SSE_FALLBACK_FACTOR;

    return streamSSE(c, async (stream) => {
      let open = true;
      let lastWrite = Date.now();
      let pingedSeq = 0;
      const napper = wakeableSleep();
      // the activity relayed: per invocation, its node and the last stream entry read in this process
      const relayed = new Map<string, { nodeKey: string; lastId: string | null }>();
      const unwatch = feed.watch(runId, (ping) => {
        pingedSeq = Math.max(pingedSeq, ping.seq);
        napper.wake();
      });

      stream.onAbort(() => {
        open = false;
        napper.wake();
      });

      // which invocations run is read from the store only when an event may have changed it
      // (a node queued, started or settled): the activity poll between events costs Redis reads only
      let still = new Set<string>();
      let recheck = true;
      /** Sends the new activity entries of the run's model and Tool invocations; true when it sent any. */
      const relayActivity = async (): Promise<boolean> => {
        if (recheck) {
          recheck = false;
          const running = await runningActivityInvocations(deps.pool, runId);
          for (const r of running) if (!relayed.has(r.invocationId)) relayed.set(r.invocationId, { nodeKey: r.nodeKey, lastId: null });
          still = new Set(running.map((r) => r.invocationId));
        }
        let sentAny = false;
        for (const [invocationId, at] of relayed) {
          const key = activityStreamKey(invocationId, deps.queuePrefix);
          // the first read of an invocation skips what a resumed client already has
          const rows = (await deps.redis.xrange(key, at.lastId === null ? '-' : `(${at.lastId}`, '+')) as Array<[string, string[]]>;
          let skip = at.lastId === null ? (cursor.sent.get(invocationId) ?? 0) : 0;
          let terminal = false;
          for (const [id, fields] of rows) {
            at.lastId = id;
            if (skip > 0) {
              skip--;
              continue;
            }
            const raw: Record<string, string> = {};
            for (let i = 0; i + 1 < fields.length; i += 2) raw[fields[i]!] = fields[i + 1]!;
            const entry = activityEntrySchema.safeParse(raw);
            const offset = cursor.sent.get(invocationId) ?? 0;
            cursor.sent.set(invocationId, offset + 1);
            if (!entry.success) continue;
            if (entry.data.type === 'terminal') terminal = true;
            await stream.writeSSE({
              id: formatCursor(cursor),
              event: 'activity',
              data: JSON.stringify({ runId, nodeKey: at.nodeKey, invocationId, offset, type: entry.data.type, ...(entry.data.text !== undefined ? { text: entry.data.text } : {}) }),
            });
            sentAny = true;
            lastWrite = Date.now();
          }
          // an invocation that ended (its terminal entry read, or its node no longer runs it) is done
          if (terminal || !still.has(invocationId)) {
            relayed.delete(invocationId);
            cursor.sent.delete(invocationId);
          }
        }
        return sentAny;
      };

      try {
        // the run's change channel subscribed before the first read: a change committed after it is pinged to this stream
        await unwatch.ready.catch(() => undefined);
        while (open) {
          const pingedBeforeRead = pingedSeq;
          const page = await listRunEvents(deps.pool, runId, cursor.seq, deps.limits.eventReplayLimit);
          for (const e of page.events) {
            cursor.seq = e.seq;
            if (e.nodeKey !== null) recheck = true;
            const kind = pingKind(e.kind);
            const status = kind === 'node' || kind === 'gate' ? nodeStatusAfterEvent(e.kind, e.detail) : null;
            const id = formatCursor(cursor);
            // the ping exactly as the live channel's; what it did to its node in a frame of its own
            await stream.writeSSE({ id, event: 'runChanged', data: JSON.stringify({ runId, seq: e.seq, kind }) });
            if (status && e.nodeKey !== null) {
              await stream.writeSSE({ id, event: 'node', data: JSON.stringify({ runId, seq: e.seq, nodeKey: e.nodeKey, status, event: e.kind }) });
            }
            lastWrite = Date.now();
          }
          if (page.truncated) continue;
          const relaying = (await relayActivity()) || relayed.size > 0;
          if (page.events.length > 0) continue;
          const head = await getRunHead(deps.pool, tenant, runId);
          if (!head) break;
          if (TERMINAL_RUN_STATUSES.has(head.status as RunStatus) && head.lastSeq <= cursor.seq && relayed.size === 0) {
            const run = await getRunDetail(deps.pool, tenant, runId);
            cursor.ended = true;
            await stream.writeSSE({
              id: formatCursor(cursor),
              event: 'run.result',
              data: jsonText({ runId, status: head.status, failureClass: run?.failureClass ?? null, reason: run?.reason ?? null, output: run?.output ?? null }),
            });
            break;
          }
          if (Date.now() - lastWrite >= KEEPALIVE_MS) {
            // a comment line keeps idle proxies from closing a quiet stream
            await stream.write(': keepalive\n\n');
            lastWrite = Date.now();
          }
          // a ping that landed during the read re-reads at once
          if (pingedSeq > pingedBeforeRead || !open) continue;
          const idle = Math.min(fallbackMs, Math.max(1, KEEPALIVE_MS - (Date.now() - lastWrite)));
          await napper.sleep(relaying ? Math.min(ACTIVITY_POLL_MS, idle) : idle);
        }
      } finally {
        unwatch();
      }
    }, async (err, stream) => {
      deps.logger.warn({ runId, err }, 'SSE stream failed');
      await stream.close();
    }) as never;
  });
}
