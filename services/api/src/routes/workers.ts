/**
 * `GET /v1/workers`: each lane's queue and the workers serving it — how many jobs wait and for
 * how long, and per worker what runs on it now and when it last made progress (their
 * heartbeats: libs/queue worker-registry.ts). The lanes are shared by every tenant, so this
 * answers counts and worker facts only, never a job's content; Bull Board (`/admin/queues`,
 * the `admin` scope) shows the jobs.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { LANES, createLaneQueue, readLaneBacklog, readWorkerBeats } from '@flowline/queue';
import type { AppDeps, AppEnv } from '../context';
import { sendJson } from '../body';
import { jsonContent } from '../schemas';
import { v1Route } from '../v1-route';

const WorkerSchema = z
  .object({
    id: z.string().openapi({ description: '`<host>:<pid>:<random>`, new at each process start' }),
    host: z.string(),
    pid: z.number().int(),
    startedAt: z.string().openapi({ description: 'when it started taking jobs' }),
    lastBeatAt: z.string().openapi({ description: 'its last heartbeat (every WORKER_HEARTBEAT_MS; it is dropped after three missed)' }),
    lastProgressAt: z.string().openapi({ description: 'the last job it took or finished (its start before the first)' }),
    inFlight: z.number().int().openapi({ description: 'invocations running on it now' }),
    concurrency: z.number().int().openapi({ description: 'LANE_CONCURRENCY: most invocations it runs at once' }),
  })
  .openapi('Worker');

const LaneSchema = z
  .object({
    lane: z.enum(LANES as unknown as ['llm', 'tool']),
    depth: z.number().int().openapi({ description: 'jobs waiting for a worker (every tenant)' }),
    oldestWaitMs: z.number().int().openapi({ description: 'how long the oldest of them has waited, ms (0 when none waits)' }),
    workers: z.array(WorkerSchema),
  })
  .openapi('Lane');

const workers = v1Route.workers('get', '/v1/workers', {
  operationId: 'listWorkers',
  summary: "Each lane's waiting jobs and the workers serving it, with what each runs and its last progress",
  responses: { 200: jsonContent(z.object({ lanes: z.array(LaneSchema) }).openapi('Workers'), 'the lanes and their workers') },
});

/** Registers `GET /v1/workers`. */
export function registerWorkerRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  const queues = new Map(LANES.map((lane) => [lane, createLaneQueue(deps.redis, lane, deps.queuePrefix)] as const));
  const iso = (ms: number) => new Date(ms).toISOString();
  app.openapi(workers, async () => {
    const now = Date.now();
    const lanes = await Promise.all(
      LANES.map(async (lane) => {
        const [backlog, beats] = await Promise.all([readLaneBacklog(queues.get(lane)!, now), readWorkerBeats(deps.redis, deps.queuePrefix, lane, now)]);
        return {
          lane,
          depth: backlog.depth,
          oldestWaitMs: backlog.oldestWaitMs,
          workers: beats.map((b) => ({
            id: b.id,
            host: b.host,
            pid: b.pid,
            startedAt: iso(b.startedAt),
            lastBeatAt: iso(b.beatAt),
            lastProgressAt: iso(b.lastProgressAt),
            inFlight: b.inFlight,
            concurrency: b.concurrency,
          })),
        };
      }),
    );
    return sendJson(200, { lanes });
  });
}
