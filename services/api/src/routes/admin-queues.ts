/**
 * The queue UI (Bull Board) at `/admin/queues`, over every lane queue. Keyed like /v1
 * (`Authorization: Bearer <key>`; no or unknown key → 401) and only for keys holding the
 * `admin` scope (403 otherwise): the lanes are shared, so the UI shows every tenant's jobs.
 * Read-only (Bull Board's per-queue `readOnlyMode`: its write routes answer 405) unless
 * `BULL_BOARD_WRITE=1`. The browser's page navigation sends no bearer header: a browser
 * signs in once at `/admin/session` (routes/admin-session.ts) and carries its cookie.
 */
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { HonoAdapter } from '@bull-board/hono';
import { serveStatic } from '@hono/node-server/serve-static';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { LANES, createLaneQueue } from '@flowline/queue';
import { requireScope } from '../auth';
import type { AppDeps, AppEnv } from '../context';
import { registerAdminSession } from './admin-session';

/** Where the queue UI is mounted (outside /v1 and the OpenAPI document). */
export const ADMIN_QUEUES_PATH = '/admin/queues';

/**
 * Mounts Bull Board at {@link ADMIN_QUEUES_PATH} behind the bearer key or a session cookie
 * and the `admin` scope. The lane queues share the app's Redis connection (a BullMQ Queue opens none of
 * its own), so they need no closing beyond that connection's.
 */
export function registerAdminQueues(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  const queues = LANES.map((lane) => createLaneQueue(deps.redis, lane, deps.queuePrefix));
  const readOnlyMode = !(deps.bullBoardWrite ?? false);
  const serverAdapter = new HonoAdapter(serveStatic);
  serverAdapter.setBasePath(ADMIN_QUEUES_PATH);
  createBullBoard({
    queues: queues.map((q) => new BullMQAdapter(q, { readOnlyMode })),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'Flowline queues' } },
  });
  const authenticate = registerAdminSession(app, deps, ADMIN_QUEUES_PATH);
  const admin = requireScope('admin');
  for (const path of [ADMIN_QUEUES_PATH, `${ADMIN_QUEUES_PATH}/*`]) {
    app.use(path, authenticate);
    app.use(path, admin);
  }
  // Bull Board serves its page only without the trailing slash; a typed or bookmarked
  // `/admin/queues/` is led there (a relative redirect: right behind any proxy)
  app.get(`${ADMIN_QUEUES_PATH}/`, (c) => c.redirect(ADMIN_QUEUES_PATH, 301));
  app.route(ADMIN_QUEUES_PATH, serverAdapter.registerPlugin());
}
