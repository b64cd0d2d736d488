/**
 * Bulk actions by filter: `POST /v1/runs/bulk` answers the count of runs the
 * filter matches AND the action applies to — as a dry run, or by submitting a tracked job
 * (202 `{bulkId, count}`) that the dispatchers work through in the background — and
 * `GET /v1/bulk-jobs/{bulkId}` its progress. The request's rules are libs/graph
 * `checkBulkRequest`; the set of runs is fixed at submission by the store.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { countBulkCandidates, getBulkJob, getDefinition, listBulkJobRuns, resumeBulkJob, submitBulkJob, type BulkJobRow } from '@flowline/db';
import { checkBulkRequest, DEFAULT_METADATA_LIMITS, type BulkMigrateOptions } from '@flowline/graph';
import type { AppDeps, AppEnv } from '../context';
import { bodyMember, sendJson } from '../body';
import { ApiError, BulkTooLargeError, NotFoundError, ValidationFailedError } from '../errors';
import { pageLimit, requireCursor, requireUuid, isUuid } from '../present';
import {
  BulkAcceptedSchema,
  BulkBody,
  BulkDryRunSchema,
  BulkIdParam,
  BulkJobRunListSchema,
  BulkJobRunsQuery,
  BulkJobSchema,
  ErrorSchema,
  jsonContent,
  IdempotencyKeyHeaders,
  jsonBody,
} from '../schemas';
import { v1Route } from '../v1-route';

const DEFAULT_MAX_BULK_RUNS = 100_000;

/** 409: the requestId already submitted another bulk action. */
export class BulkRequestIdReusedError extends ApiError {
  constructor(bulkId: string) {
    super(409, 'RequestIdReused', 'requestId already submitted another bulk action', [{ bulkId }]);
  }
}

/** 409: resuming a bulk job that is not Paused. */
export class BulkJobNotPausedError extends ApiError {
  constructor(status: string) {
    super(409, 'BulkJobNotPaused', `the bulk job is ${status}, not Paused`, [{ status }]);
  }
}

const submitRoute = v1Route.runs('post', '/v1/runs/bulk', {
  operationId: 'bulkRuns',
  summary: 'Apply an operator action to every run a filter matches (dry run, or a tracked background job)',
  description:
    'The runs are those of the tenant that match `filter` AND that the action applies to (cancel: live; retry-failed: Failed; resume: ' +
    'paused and live; fork: top-level). `dryRun: true` answers 200 `{count}` and writes nothing. Otherwise the set is fixed now (the ' +
    'answer\'s `count` is the job\'s final total whatever the runs do next) and 202 `{bulkId, count}` is answered; a dispatcher applies ' +
    'the action to each run through the same intent the single-run route writes (each run gets its verb\'s usual events), BULK_BATCH_SIZE ' +
    'at a time, resuming from its last batch when a dispatcher dies. Idempotent on requestId / Idempotency-Key (same body: the same job; ' +
    'another body: 409 RequestIdReused). Refusals: 400 ValidationFailed (keyed: action, filter.<member>, fromNodeKey), BulkTooLarge ' +
    '(over MAX_BULK_RUNS). A bulk fork takes fromNodeKey and failedOnly, pins each run\'s own version and keeps its input. A bulk ' +
    'migrate takes toVersion (the latest version of filter.definitionId, which it must name), nodeMap, canaryPercent and maxErrorRate: ' +
    'each run is planned as POST /v1/runs/{id}/migrate and moved in one transaction when compatible; any other verdict leaves it ' +
    'untouched and lists it as refused with the planner\'s reasons (GET /v1/bulk-jobs/{bulkId}/runs). The job reads Paused after its ' +
    'canary share or when its error rate is exceeded, until POST /v1/bulk-jobs/{bulkId}/resume.',
  request: {
    headers: IdempotencyKeyHeaders,
    body: jsonBody(BulkBody),
  },
  responses: {
    200: jsonContent(BulkDryRunSchema, 'dry run: the number of runs the action would apply to'),
    202: jsonContent(BulkAcceptedSchema, 'job submitted (or the same job again for a replayed requestId)'),
    404: jsonContent(ErrorSchema, "NotFound: a migrate's filter.definitionId"),
    409: jsonContent(ErrorSchema, 'RequestIdReused'),
  },
});

const resumeRoute = v1Route.runs('post', '/v1/bulk-jobs/{bulkId}/resume', {
  operationId: 'resumeBulkJob',
  summary: 'Resume a Paused bulk job (after its canary share, or its error rate)',
  description:
    'A Paused job becomes Running and a dispatcher takes it on from its cursor: the canary is released (the job no longer stops after ' +
    'it) and the error rate is measured afresh over the runs processed from now. 409 BulkJobNotPaused for a job in any other status.',
  request: { params: BulkIdParam },
  responses: {
    200: jsonContent(BulkJobSchema, 'the job, Running'),
    409: jsonContent(ErrorSchema, 'BulkJobNotPaused'),
  },
});

const runsRoute = v1Route.runs('get', '/v1/bulk-jobs/{bulkId}/runs', {
  operationId: 'listBulkJobRuns',
  summary: "A bulk job's processed runs, with each refusal's code and reasons",
  description: 'The runs processed so far in run id order, each with its outcome (applied | noop | refused); `outcome=refused` lists what was left untouched and why.',
  request: { params: BulkIdParam, query: BulkJobRunsQuery },
  responses: { 200: jsonContent(BulkJobRunListSchema, 'a page of processed runs') },
});

const progressRoute = v1Route.runs('get', '/v1/bulk-jobs/{bulkId}', {
  operationId: 'getBulkJob',
  summary: 'Progress of a bulk action job',
  request: { params: BulkIdParam },
  responses: { 200: jsonContent(BulkJobSchema, 'the job: status and counts') },
});

function present(job: BulkJobRow) {
  return {
    bulkId: job.id,
    action: job.action,
    status: job.status,
    pauseReason: job.pauseReason,
    migrate: job.action === 'migrate' ? (job.options as unknown as BulkMigrateOptions) : null,
    total: job.total,
    done: job.done,
    failed: job.failed,
    createdAt: job.createdAt.toISOString(),
    updatedAt: job.updatedAt.toISOString(),
  };
}

/**
 * A bulk migrate moves runs to the definition's latest version: the one whose parsed graph the
 * dispatchers hold without the API's tool catalog. Moving runs back is saving the old graph
 * again (a new latest version), then migrating.
 */
async function requireLatestVersion(deps: AppDeps, tenant: string, definitionId: string, toVersion: number): Promise<void> {
  const def = await getDefinition(deps.pool, tenant, definitionId);
  if (!def) throw new NotFoundError('definition');
  if (def.version !== toVersion) {
    throw new ValidationFailedError('invalid bulk action', [{ key: 'toVersion', message: `a bulk migrate moves runs to the definition's latest version (${def.version})` }]);
  }
}

/** Registers the bulk routes on `app` (before the run routes: `/v1/runs/bulk` is not a run id). The progress route lives outside `/v1/runs/`: `/v1/runs/bulk/{bulkId}` would be ambiguous with `/v1/runs/{id}/events` and the other run sub-routes. */
export function registerBulkRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  const maxRuns = deps.limits.maxBulkRuns ?? DEFAULT_MAX_BULK_RUNS;

  app.openapi(submitRoute, async (c) => {
    const body = c.req.valid('json');
    const checked = checkBulkRequest(
      {
        action: body.action,
        filter: bodyMember(c, 'filter'),
        fromNodeKey: body.fromNodeKey,
        failedOnly: body.failedOnly,
        toVersion: body.toVersion,
        nodeMap: bodyMember(c, 'nodeMap'),
        canaryPercent: body.canaryPercent,
        maxErrorRate: body.maxErrorRate,
      },
      deps.limits.metadata ?? DEFAULT_METADATA_LIMITS,
    );
    if (!checked.ok) throw new ValidationFailedError('invalid bulk action', checked.issues);
    const { action, search, fork, migrate } = checked.request;
    const tenant = c.get('tenant');
    if (migrate) await requireLatestVersion(deps, tenant, search.definitionId!, migrate.toVersion);
    if (body.dryRun === true) {
      const count = await countBulkCandidates(deps.pool, tenant, action, search, maxRuns);
      if (count > maxRuns) throw new BulkTooLargeError(maxRuns);
      return sendJson(200, { count });
    }
    const res = await submitBulkJob(deps.pool, {
      tenantId: tenant,
      requestId: body.requestId ?? c.req.valid('header')['idempotency-key'] ?? null,
      action,
      search,
      options: fork ? { fromNodeKey: fork.fromNodeKey, failedOnly: fork.failedOnly } : migrate ? { ...migrate } : {},
      maxRuns,
      createdBy: c.get('principal').id,
    });
    if (res.kind === 'tooMany') throw new BulkTooLargeError(maxRuns);
    if (res.kind === 'requestIdReused') throw new BulkRequestIdReusedError(res.job.id);
    if (res.kind === 'created') deps.logger.info({ bulkId: res.job.id, action, total: res.job.total }, 'bulk action submitted');
    return sendJson(202, { bulkId: res.job.id, count: res.job.total }, { location: `/v1/bulk-jobs/${res.job.id}` });
  });

  app.openapi(progressRoute, async (c) => {
    const id = requireUuid(c.req.valid('param').bulkId, 'bulk job');
    const job = await getBulkJob(deps.pool, c.get('tenant'), id);
    if (!job) throw new NotFoundError('bulk job');
    return sendJson(200, present(job));
  });

  app.openapi(resumeRoute, async (c) => {
    const id = requireUuid(c.req.valid('param').bulkId, 'bulk job');
    const res = await resumeBulkJob(deps.pool, c.get('tenant'), id);
    if (!res) throw new NotFoundError('bulk job');
    if (res.kind === 'notPaused') throw new BulkJobNotPausedError(res.job.status);
    deps.logger.info({ bulkId: id, done: res.job.done, failed: res.job.failed, total: res.job.total }, 'bulk job resumed');
    return sendJson(200, present(res.job));
  });

  app.openapi(runsRoute, async (c) => {
    const id = requireUuid(c.req.valid('param').bulkId, 'bulk job');
    const q = c.req.valid('query');
    const cursor = requireCursor(q.cursor, (s) => (isUuid(s) ? s : null));
    const page = await listBulkJobRuns(deps.pool, c.get('tenant'), id, { outcome: q.outcome ?? null, cursor, limit: pageLimit(q.limit) });
    if (!page) throw new NotFoundError('bulk job');
    return sendJson(200, page);
  });
}
