/**
 * `POST /v1/runs/{id}/migrate`: moves a live run to another saved version of its definition.
 * The route turns the request into the pure decision (libs/graph `planMigration`) on the run
 * as locked by the store (libs/db `migrateRun`), which writes a compatible, non-dry-run plan
 * in one transaction. The answer is the plan either way (200); a dry run, or a plan that is
 * not `compatible`, changes nothing.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { migrateRun } from '@flowline/db';
import { MIGRATION_REASON_CODES, NODE_KINDS, NODE_STATUSES, planRunMigration } from '@flowline/graph';
import type { AppDeps, AppEnv } from '../context';
import { sendJson } from '../body';
import { ApiError, NotFoundError } from '../errors';
import { targetPlanGraph } from '../graph-rules';
import { requireUuid } from '../present';
import { publishWake } from '../wake';
import { ErrorSchema, IdParam, jsonBody, jsonContent } from '../schemas';
import { v1Route } from '../v1-route';

const NodeKeyString = z.string().min(1).max(64).regex(/^[A-Za-z0-9_-]+$/);

export const MigrateRunBody = z
  .object({
    toVersion: z.number().int().positive().max(2_147_483_647).openapi({ description: "the saved version of the run's definition to move the run to" }),
    nodeMap: z
      .record(NodeKeyString, NodeKeyString)
      .optional()
      .openapi({ description: 'old node key → new node key, for nodes the new version renamed or replaced (default: every node maps to its own key)' }),
    dryRun: z.boolean().openapi({ description: 'true: answer the plan and change nothing; false: execute it when it is compatible' }),
  })
  .openapi('MigrateRunBody');

export const MigrationPlanSchema = z
  .object({
    verdict: z.enum(['compatible', 'needsMapping', 'incompatible']),
    reasons: z.array(z.object({ code: z.enum(MIGRATION_REASON_CODES), nodeKey: z.string().nullable(), message: z.string() })),
    mapping: z.array(
      z.object({
        from: z.string().nullable().openapi({ description: "the node of the run's pinned version (null: a node only the new version has)" }),
        to: z.string().nullable().openapi({ description: 'the node of the new version (null: dropped, or not mappable)' }),
        kind: z.enum(NODE_KINDS),
        status: z.enum(NODE_STATUSES),
        action: z.enum(['carry', 'keep', 'requeue', 'add', 'drop']).openapi({
          description:
            'carry: copied as it is; keep: a live node keeping its invocation, child runs, wait or open decision; requeue: a running node whose work changed, queued again on the same attempt; add: a new Pending node; drop: a node that never started, absent from the new version',
        }),
      }),
    ),
    executed: z.boolean().openapi({ description: 'true when this request moved the run (not a dry run, and compatible)' }),
    fromVersion: z.number().int(),
    toVersion: z.number().int(),
  })
  .openapi('MigrationPlan');

/** 404 for a version the run's definition never had. */
export class MigrationVersionUnknownError extends ApiError {
  constructor(version: number) {
    super(404, 'NotFound', `definition version ${version} not found`, [{ key: 'toVersion', message: "no saved version of the run's definition" }]);
  }
}

const migrateRoute = v1Route.runs('post', '/v1/runs/{id}/migrate', {
  operationId: 'migrateRun',
  summary: 'Move a live run to another version of its definition (or plan it: dryRun)',
  description:
    "Decides whether the run can move from its pinned graph to `toVersion`: every node that started maps (by key or `nodeMap`) to a node " +
    'of the same kind; live nodes keep valid work (a running node whose config changed is re-queued on the same attempt, the plan ' +
    "says which); replaying the run's outcomes on the new graph gives the same admissions, skips and routing; the run's state fits " +
    'the new state schema. The answer is `{verdict: compatible | needsMapping | incompatible, reasons, mapping}` with keyed reasons. ' +
    'With `dryRun: false` a compatible plan is executed: the new pinned graph and version, the mapped node rows and the event ' +
    '`run.migrated {from, to, nodeMap}` are committed in one transaction (open decisions and waits carry over). Anything else changes nothing.',
  request: { params: IdParam, body: jsonBody(MigrateRunBody) },
  responses: {
    200: jsonContent(MigrationPlanSchema, 'the plan, executed or not'),
    404: jsonContent(ErrorSchema, 'NotFound: the run, or the version (details name toVersion)'),
  },
});

/** Registers the migrate route on `app`. */
export function registerMigrateRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  app.openapi(migrateRoute, async (c) => {
    const runId = requireUuid(c.req.valid('param').id, 'run');
    const body = c.req.valid('json');
    const nodeMap = body.nodeMap ?? {};
    const tenant = c.get('tenant');
    const res = await migrateRun(deps.pool, {
      tenantId: tenant,
      runId,
      toVersion: body.toVersion,
      nodeMap,
      dryRun: body.dryRun,
      decide: (snap, target) => {
        const { planGraph, planGraphJson } = targetPlanGraph(target, deps.limits.maxNodesPerDefinition, deps.tools.parserCatalog());
        return { plan: planRunMigration(snap, planGraph, nodeMap), planGraph, planGraphJson };
      },
    });
    if (res.kind === 'runNotFound') throw new NotFoundError('run');
    if (res.kind === 'versionNotFound') throw new MigrationVersionUnknownError(body.toVersion);
    if (res.executed) {
      deps.logger.info({ runId, from: res.fromVersion, to: body.toVersion, requeued: res.plan.mapping.filter((m) => m.action === 'requeue').length }, 'run migrated');
      await publishWake(deps, runId, tenant);
    }
    return sendJson(200, { ...res.plan, executed: res.executed, fromVersion: res.fromVersion, toVersion: body.toVersion });
  });
}
