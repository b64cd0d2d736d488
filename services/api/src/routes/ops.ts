/**
 * Operational routes (no key): liveness (`/livez`, and `/healthz` as before), readiness
 * (Postgres + Redis answer, some live dispatcher holds shard leases, and the process is not
 * draining), Prometheus metrics.
 * And `GET /v1/tools` (tenant-scoped like every /v1 route).
 */
import type { OpenAPIHono} from '@hono/zod-openapi';
import { createRoute, z } from '@hono/zod-openapi';
import type { Registry } from 'prom-client';
import type { AppDeps, AppEnv } from '../context';
import { heldShardCount } from '@flowline/db';
import { NotReadyError } from '../errors';
import { ErrorSchema, ToolListSchema, jsonContent } from '../schemas';
import { v1Route } from '../v1-route';

const StatusSchema = z.object({ status: z.string() }).openapi('Health');

const healthz = createRoute({
  method: 'get', path: '/healthz', tags: ['ops'], security: [],
  operationId: 'getHealth',
  summary: 'Liveness: the process answers',
  responses: { 200: jsonContent(StatusSchema, 'the process is alive') },
});
const livez = createRoute({
  method: 'get', path: '/livez', tags: ['ops'], security: [],
  operationId: 'getLiveness',
  summary: 'Liveness: the process answers (the same as /healthz)',
  responses: { 200: jsonContent(StatusSchema, 'the process is alive') },
});
const readyz = createRoute({
  method: 'get', path: '/readyz', tags: ['ops'], security: [],
  operationId: 'getReadiness',
  summary: 'Readiness: Postgres and Redis answer, a live dispatcher holds shard leases, and the process is not shutting down',
  responses: {
    200: jsonContent(StatusSchema, 'Postgres and Redis answer and a live dispatcher holds shards'),
    503: jsonContent(ErrorSchema, 'not ready (a store does not answer, no live dispatcher holds a shard, or the process drains)'),
  },
});
const metrics = createRoute({
  method: 'get', path: '/metrics', tags: ['ops'], security: [],
  operationId: 'getMetrics',
  summary: 'Prometheus metrics of this API process',
  responses: { 200: { content: { 'text/plain': { schema: z.string() } }, description: 'Prometheus text format' } },
});
const tools = v1Route.tools('get', '/v1/tools', {
  operationId: 'listTools',
  summary: 'List the tools a Tool node may name',
  responses: { 200: jsonContent(ToolListSchema, 'what a Tool node may name') },
});

const READY_TIMEOUT_MS = 2_000;
/**
 * How long one read of the shard leases answers /readyz: probes of every replica (and a load
 * balancer's every few seconds) cost at most one small Postgres read per second per replica.
 */
export const DISPATCHER_CHECK_CACHE_MS = 1_000;

function within<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer in ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** Registers the ops routes (livez, healthz, readyz, metrics) on `app`. */
export function registerOpsRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps, registry: Registry): void {
  // An API with no dispatcher accepts runs that never move (a half-started cluster): not ready.
  // One shard held is enough: while dispatchers rebalance (a rolling deploy of them) a shard may
  // be unowned for a moment, and taking every API replica out of the load balancer then would
  // turn a short stall of some runs into an outage of all.
  let held: { at: number; count: Promise<number> } | null = null;
  const heldShards = (): Promise<number> => {
    if (held === null || Date.now() - held.at >= DISPATCHER_CHECK_CACHE_MS) held = { at: Date.now(), count: heldShardCount(deps.pool) };
    return held.count;
  };

  app.openapi(healthz, (c) => c.json({ status: 'ok' }, 200));
  app.openapi(livez, (c) => c.json({ status: 'ok' }, 200));

  app.openapi(readyz, async (c) => {
    // draining: the load balancer stops sending work while in-flight requests finish
    if (deps.draining?.()) throw new NotReadyError('not ready: shutting down');
    const failures: string[] = [];
    await within(deps.pool.query('SELECT 1'), 'Postgres').catch(() => failures.push('postgres'));
    await within(deps.redis.ping(), 'Redis').catch(() => failures.push('redis'));
    if (failures.length > 0) throw new NotReadyError(`not ready: ${failures.join(', ')} unavailable`);
    const shards = await within(heldShards(), 'Postgres').catch(() => null);
    if (shards === null) throw new NotReadyError('not ready: postgres unavailable');
    if (shards === 0) throw new NotReadyError('not ready: no live dispatcher holds a shard lease (runs would not move)');
    return c.json({ status: 'ready' }, 200);
  });

  app.openapi(metrics, async (c) => {
    return c.text(await registry.metrics(), 200, { 'content-type': registry.contentType });
  });
}

/** Registers `GET /v1/tools`. */
export function registerToolRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  app.openapi(tools, (c) => c.json({ items: deps.tools.catalog(), nextCursor: null }, 200) as never);
}
