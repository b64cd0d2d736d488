/**
 * `GET /v1/runs/{id}/stream`: Server-Sent Events of the run's change pings. Each committed
 * event becomes a frame `id: <seq>` / `event: runChanged` / `data: {"runId","seq","kind"}`.
 * `Last-Event-ID` (or `?afterSeq`) resumes after that seq: the events table is replayed
 * page by page, then polled; the stream ends once the run is terminal and fully sent.
 */
import type { OpenAPIHono} from '@hono/zod-openapi';
import { createRoute, z } from '@hono/zod-openapi';
import { streamSSE } from 'hono/streaming';
import { getRunHead, listRunEvents } from '@flowline/db';
import { TERMINAL_RUN_STATUSES, type RunStatus } from '@flowline/graph';
import type { AppDeps, AppEnv } from '../context';
import { NotFoundError } from '../errors';
import { requireUuid } from '../present';
import { IdParam, errorResponses } from '../schemas';

const streamRoute = createRoute({
  method: 'get', path: '/v1/runs/{id}/stream', tags: ['runs'], security: [{ bearer: [] }],
  request: {
    params: IdParam,
    query: z.object({ afterSeq: z.coerce.number().int().min(0).optional() }),
    headers: z.object({ 'last-event-id': z.string().optional() }),
  },
  responses: {
    200: { content: { 'text/event-stream': { schema: z.string() } }, description: 'runChanged frames' },
    ...errorResponses,
  },
});

/** An idle stream writes an SSE comment this often. */
const KEEPALIVE_MS = 15_000;

/** Ping kind of an event kind: `run.*` → run, `node.*` → node, `gate.*` → gate. */
export function pingKind(eventKind: string): 'run' | 'node' | 'gate' {
  if (eventKind.startsWith('gate.')) return 'gate';
  if (eventKind.startsWith('node.')) return 'node';
  return 'run';
}

/** Registers the SSE route on `app`. */
export function registerStreamRoute(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  app.openapi(streamRoute, async (c) => {
    const runId = requireUuid(c.req.valid('param').id, 'run');
    const tenant = c.get('tenant');
    if (!(await getRunHead(deps.pool, tenant, runId))) throw new NotFoundError('run');
    const lastEventId = Number.parseInt(c.req.valid('header')['last-event-id'] ?? '', 10);
    let seq = Number.isSafeInteger(lastEventId) && lastEventId >= 0 ? lastEventId : (c.req.valid('query').afterSeq ?? 0);

    return streamSSE(c, async (stream) => {
      let open = true;
      let lastWrite = Date.now();
      stream.onAbort(() => {
        open = false;
      });
      while (open) {
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
        await stream.sleep(deps.limits.streamPollMs);
      }
    }, async (err, stream) => {
      deps.logger.warn({ runId, err }, 'SSE stream failed');
      await stream.close();
    }) as never;
  });
}
