/**
 * Bulk actions by filter: `POST /v1/runs/bulk` answers the count of runs the
 * filter matches AND the action applies to — as a dry run, or by submitting a tracked job
 * (202 `{bulkId, count}`) that the dispatchers work through in the background — and
 * `GET /v1/bulk-jobs/{bulkId}` its progress. The request's rules are libs/graph
 * `checkBulkRequest`; the set of runs is fixed at submission by the store.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { countBulkCandidates, getBulkJob, submitBulkJob, type BulkJobRow } from '@flowline/db';
import { checkBulkRequest, DEFAULT_METADATA_LIMITS } from '@flowline/graph';
import type { AppDeps, AppEnv } from '../context';
import { bodyMember, sendJson } from '../body';
import { ApiError, BulkTooLargeError, NotFoundError, ValidationFailedError } from '../errors';
import { requireUuid } from '../present';
import { BulkAcceptedSchema, BulkBody, BulkDryRunSchema, BulkIdParam, BulkJobSchema, ErrorSchema, jsonContent, IdempotencyKeyHeaders, jsonBody } from '../schemas';
import { v1Route } from '../v1-route';

const DEFAULT_MAX_BULK_RUNS = 100_000;

/** 409: the requestId already submitted another bulk action. */
export class BulkRequestIdReusedError extends ApiError {
  constructor(bulkId: string) {
    super(409, 'RequestIdReused', 'requestId already submitted another bulk action', [{ bulkId }]);
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
    '(over MAX_BULK_RUNS). A bulk fork takes fromNodeKey and failedOnly, pins each run\'s own version and keeps its input.',
  request: {
    headers: IdempotencyKeyHeaders,
    body: jsonBody(BulkBody),
  },
  responses: {
    200: jsonContent(BulkDryRunSchema, 'dry run: the number of runs the action would apply to'),
    202: jsonContent(BulkAcceptedSchema, 'job submitted (or the same job again for a replayed requestId)'),
    409: jsonContent(ErrorSchema, 'RequestIdReused'),
  },
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
    total: job.total,
    done: job.done,
    failed: job.failed,
    createdAt: job.createdAt.toISOString(),
    updatedAt: job.updatedAt.toISOString(),
  };
}

/** Registers the bulk routes on `app` (before the run routes: `/v1/runs/bulk` is not a run id). The progress route lives outside `/v1/runs/`: `/v1/runs/bulk/{bulkId}` would be ambiguous with `/v1/runs/{id}/events` and the other run sub-routes. */
export function registerBulkRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  const maxRuns = deps.limits.maxBulkRuns ?? DEFAULT_MAX_BULK_RUNS;

  app.openapi(submitRoute, async (c) => {
    const body = c.req.valid('json');
    const checked = checkBulkRequest(
      { action: body.action, filter: bodyMember(c, 'filter'), fromNodeKey: body.fromNodeKey, failedOnly: body.failedOnly },
      deps.limits.metadata ?? DEFAULT_METADATA_LIMITS,
    );
    if (!checked.ok) throw new ValidationFailedError('invalid bulk action', checked.issues);
    const { action, search, fork } = checked.request;
    const tenant = c.get('tenant');
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
      options: fork ? { fromNodeKey: fork.fromNodeKey, failedOnly: fork.failedOnly } : {},
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
}
