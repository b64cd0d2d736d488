/**
 * `GET /v1/runs/{id}/stream`: Server-Sent Events of the run's change pings. Each committed
 * event becomes a frame `id: <seq>` / `event: runChanged` / `data: {"runId","seq","kind"}`.
 * `Last-Event-ID` (or `?afterSeq`) resumes after that seq: the events table is replayed
 * page by page; then the stream sleeps until the replica's change feed (the same pings the
 * Socket.IO channel relays) names a newer seq of this run, and re-reads the table from its
 * last sent seq — so frames always come from the store, in order, none skipped. A safety
 * re-read every `SSE_FALLBACK_FACTOR × streamPollMs` bounds the delay of a lost ping. The
 * stream ends once the run is terminal and fully sent.
 */
import type { OpenAPIHono} from '@hono/zod-openapi';
import { createRoute, z } from '@hono/zod-openapi';
import { streamSSE } from 'hono/streaming';
import { getRunHead, listRunEvents } from '@flowline/db';
import { TERMINAL_RUN_STATUSES, type RunStatus } from '@flowline/graph';
import { changeKindOf } from '@flowline/queue';
import { sharedChangeFeed } from '../live/change-feed';
import type { AppDeps, AppEnv } from '../context';
import { NotFoundError } from '../errors';
import { requireUuid } from '../present';
import { INT4_MAX, IdParam, errorResponses } from '../schemas';

const streamRoute = createRoute({
  method: 'get', path: '/v1/runs/{id}/stream', tags: ['runs'], security: [{ bearer: [] }],
  operationId: 'streamRunChanges', summary: "Follow a run's change pings as Server-Sent Events",
  request: {
    params: IdParam,
    query: z.object({ afterSeq: z.coerce.number().int().min(0).max(INT4_MAX).optional() }),
    headers: z.object({
      'last-event-id': z
        .string()
        .regex(/^\s*\d{0,10}\s*$/, 'must be an event seq (a non-negative integer)')
        .refine((v) => v.trim() === '' || Number(v) <= INT4_MAX, `must be at most ${INT4_MAX}`)
        .optional()
        .openapi({ description: 'resume after this seq (an `id:` this stream sent); an empty value is ignored' }),
    }),
  },
  responses: {
    200: { content: { 'text/event-stream': { schema: z.string() } }, description: 'runChanged frames' },
    ...errorResponses,
  },
});

/** An idle stream writes an SSE comment this often. */
const KEEPALIVE_MS = 15_000;

/** Without a ping, the table is re-read after this many `streamPollMs` (lost-ping bound). */
export const SSE_FALLBACK_FACTOR = 8;

/** Ping kind of an event kind: `run.*` → run, `node.*` → node, `gate.*` → gate. */
export const pingKind = changeKindOf;

/** Registers the SSE route on `app`. */
export function registerStreamRoute(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  app.openapi(streamRoute, async (c) => {
    const runId = requireUuid(c.req.valid('param').id, 'run');
    const tenant = c.get('tenant');
    if (!(await getRunHead(deps.pool, tenant, runId))) throw new NotFoundError('run');
    const lastEventId = (c.req.valid('header')['last-event-id'] ?? '').trim();
    let seq = lastEventId !== '' ? Number(lastEventId) : (c.req.valid('query').afterSeq ?? 0);

    const feed = sharedChangeFeed(deps.redis, deps.queuePrefix, deps.logger);
    const fallbackMs = deps.limits.streamPollMs * SSE_FALLBACK_FACTOR;

    return streamSSE(c, async (stream) => {
      let open = true;
      let lastWrite = Date.now();
      let pingedSeq = 0;
      let wake: (() => void) | null = null;
      const unwatch = feed.watch(runId, (ping) => {
        pingedSeq = Math.max(pingedSeq, ping.seq);
        wake?.();
      });

      stream.onAbort(() => {
        open = false;
        wake?.();
      });
      const nap = (ms: number) =>
        new Promise<void>((resolve) => {
          const t = setTimeout(done, ms);
          function done() {
            clearTimeout(t);
            wake = null;
            resolve();
          }
          wake = done;
        });
      try {
        // the run's change channel subscribed before the first read: a change committed after it is pinged to this stream
        await unwatch.ready.catch(() => undefined);
        while (open) {
          const pingedBeforeRead = pingedSeq;
          const page = await listRunEvents(deps.pool, runId, seq, deps.limits.eventReplayLimit);
          for (const e of page.events) {
            await stream.writeSSE({
              id: String(e.seq),
              event: 'runChanged',
              data: JSON.stringify({ runId, seq: e.seq, kind: pingKind(e.kind) }),
            });
            seq = e.seq;
            lastWrite = Date.now();
          }
          if (page.truncated || page.events.length > 0) continue;
          const head = await getRunHead(deps.pool, tenant, runId);
          if (!head || (TERMINAL_RUN_STATUSES.has(head.status as RunStatus) && head.lastSeq <= seq)) break;
          if (Date.now() - lastWrite >= KEEPALIVE_MS) {
            // a comment line keeps idle proxies from closing a quiet stream
            await stream.write(': keepalive\n\n');
            lastWrite = Date.now();
          }
          // a ping that landed during the read re-reads at once
          if (pingedSeq > pingedBeforeRead || !open) continue;
          await nap(Math.min(fallbackMs, Math.max(1, KEEPALIVE_MS - (Date.now() - lastWrite))));
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
