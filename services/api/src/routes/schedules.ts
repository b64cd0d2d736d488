/**
 * Schedules, a tenant resource: `POST/GET /v1/schedules`, `GET/PUT/DELETE /v1/schedules/{id}`,
 * `pause`, `resume`, `trigger` (a run now), `backfill {from, to, dryRun}`, `preview?count=` (the
 * next slots with their UTC offsets) and `slots` (the ledger). A POST whose `key` the tenant
 * already uses updates that schedule (an upsert). The spec and policy are judged by libs/graph
 * (schedule/spec.ts); the dispatchers fire the slots (services/dispatcher schedule-fire.ts).
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import {
  definitionAliasMap,
  deleteSchedule,
  getDefinition,
  getDefinitionVersion,
  getSchedule,
  isScheduleCursor,
  listSchedules,
  listSlots,
  recordSlots,
  recordedSlots,
  replaceSchedule,
  setSchedulePaused,
  sealPlanGraph,
  startSlotRun,
  storedVersionGraph,
  upsertSchedule,
  type ScheduleRow,
  type ScheduleWrite,
  type SlotDecision,
  type SlotRow,
} from '@flowline/db';
import {
  ALIAS_NAME_PATTERN,
  CURRENT_ALIAS,
  checkRunMetadata,
  checkSchedulePolicy,
  checkScheduleSpec,
  compileScheduleSpec,
  DEFAULT_METADATA_LIMITS,
  nextSlot,
  previewSlots,
  slotsBetween,
  slotView,
  type Graph,
} from '@flowline/graph';
import type { AppDeps, AppEnv } from '../context';
import { bodyMember, jsonText, sendJson } from '../body';
import { ApiError, MetadataInvalidError, NotFoundError, ValidationFailedError } from '../errors';
import { checkRunInput, checkStoredGraph } from '../graph-rules';
import { pageLimit, requireCursor, requireInstant, requireUuid } from '../present';
import { ErrorSchema, IdParam, jsonBody, jsonContent, pageSchema, PageQuery } from '../schemas';
import { v1Route } from '../v1-route';
import { publishWake } from '../wake';

/** Longest schedule key, characters. */
export const MAX_SCHEDULE_KEY_CHARS = 128;
const KEY_RE = /^[A-Za-z0-9][A-Za-z0-9_.:-]*$/;
/** Most slots one preview lists. */
export const MAX_PREVIEW_COUNT = 100;
/** Slots one backfill may start when MAX_BACKFILL_SLOTS is not given. */
export const DEFAULT_MAX_BACKFILL_SLOTS = 1000;

/** Another schedule of the tenant holds the key (PUT renaming onto it). */
export class ScheduleKeyTakenError extends ApiError {
  constructor(key: string) {
    super(409, 'ScheduleKeyTaken', `another schedule already has the key ${key}`);
  }
}

/** A backfill over more slots than MAX_BACKFILL_SLOTS. */
export class BackfillTooLargeError extends ApiError {
  constructor(count: number, max: number) {
    super(400, 'BackfillTooLarge', `the span holds more than ${max} slots (MAX_BACKFILL_SLOTS); ${count === max + 1 ? 'narrow it' : `${count} found`}`, [{ key: 'to', message: `at most ${max} slots` }]);
  }
}

const ScheduleBody = z
  .object({
    key: z.string().min(1).max(MAX_SCHEDULE_KEY_CHARS).openapi({ description: "the tenant's own name for the schedule (letters, digits, _ . : -); a POST with a key in use updates that schedule" }),
    definitionId: z.string().openapi({ format: 'uuid' }),
    version: z.union([z.literal('current'), z.number().int().positive()]).optional().openapi({ description: "`current` (default: each run takes the version the alias picks at its slot) or a pinned version number" }),
    alias: z.string().regex(ALIAS_NAME_PATTERN).optional().openapi({
      description: "a version alias of the definition resolved at each slot (`canary`, …; default `current`). Not with a version number. Deleted later: its slots are recorded failed with the reason",
    }),
    input: z.unknown().optional().openapi({ description: 'the input of every run (checked against the graph input schema when written)' }),
    metadata: z.unknown().optional().openapi({ type: 'object', additionalProperties: { type: 'string' }, description: 'metadata of every run' }),
    spec: z.unknown().openapi({
      description:
        '{ cron?: 5- or 6-field pattern, every?: ISO-8601 duration (PT15M), timezone?: IANA (default UTC), startAt?, endAt?, jitter?: ISO-8601 duration }; cron or every (both: the union of their slots)',
      example: { cron: '30 2 * * *', timezone: 'America/New_York' },
    }),
    policy: z.unknown().optional().openapi({
      description: '{ overlap: skip | bufferOne | bufferAll | cancelPrevious | allowAll (default skip), catchup: { window (default PT1H), mode: latest | all | none (default latest) }, pauseOnFailure? }',
      example: { overlap: 'skip', catchup: { window: 'PT1H', mode: 'latest' } },
    }),
  })
  .strict()
  .openapi('ScheduleInput');

const SlotViewSchema = z.object({ at: z.string(), local: z.string().openapi({ description: "the zone's wall clock with its offset" }), utcOffset: z.string() }).openapi('ScheduleSlotView');

const ScheduleSchema = z
  .object({
    id: z.string().openapi({ format: 'uuid' }),
    key: z.string(),
    definitionId: z.string(),
    version: z.union([z.literal('current'), z.number().int()]),
    alias: z.string().nullable().openapi({ description: 'the alias resolved at each slot (null: `current`, or a pinned version)' }),
    input: z.unknown(),
    metadata: z.record(z.string(), z.string()),
    spec: z.record(z.string(), z.unknown()),
    policy: z.record(z.string(), z.unknown()),
    paused: z.boolean(),
    pausedReason: z.string().nullable(),
    nextSlot: SlotViewSchema.nullable().openapi({ description: 'the next slot the dispatchers will decide (null: paused, or none left)' }),
    lastSlotAt: z.string().nullable(),
    revision: z.number().int().openapi({ description: 'bumped by every write' }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('Schedule');

const SlotSchema = z
  .object({
    slotAt: z.string(),
    source: z.enum(['cron', 'trigger', 'backfill']),
    outcome: z.enum(['started', 'skippedOverlap', 'skippedCatchup', 'buffered', 'cancelledPrevious', 'failed']),
    runId: z.string().nullable(),
    reason: z.string().nullable(),
    decidedAt: z.string(),
  })
  .openapi('ScheduleSlot');

const PauseBody = z.object({ reason: z.string().max(500).optional() }).openapi('SchedulePauseRequest');
const BackfillBody = z
  .object({ from: z.string().openapi({ example: '2026-01-01T00:00:00Z' }), to: z.string().openapi({ example: '2026-01-02T00:00:00Z' }), dryRun: z.boolean().optional() })
  .openapi('ScheduleBackfillRequest');

const tag = v1Route.schedules;
const notFound = { 404: jsonContent(ErrorSchema, 'no such schedule (or another tenant’s)') };
const routes = {
  create: tag('post', '/v1/schedules', {
    operationId: 'upsertSchedule',
    summary: 'Create a schedule, or update the one holding its key',
    request: { body: jsonBody(ScheduleBody) },
    responses: { 201: jsonContent(ScheduleSchema, 'created'), 200: jsonContent(ScheduleSchema, 'the schedule of this key, updated') },
  }),
  list: tag('get', '/v1/schedules', {
    operationId: 'listSchedules',
    summary: "List the tenant's schedules, newest first",
    request: { query: PageQuery },
    responses: { 200: jsonContent(pageSchema(ScheduleSchema, 'ScheduleList'), 'a page') },
  }),
  get: tag('get', '/v1/schedules/{id}', { operationId: 'getSchedule', summary: 'Get a schedule', request: { params: IdParam }, responses: { 200: jsonContent(ScheduleSchema, 'the schedule'), ...notFound } }),
  replace: tag('put', '/v1/schedules/{id}', {
    operationId: 'replaceSchedule',
    summary: "Replace a schedule's members",
    request: { params: IdParam, body: jsonBody(ScheduleBody) },
    responses: { 200: jsonContent(ScheduleSchema, 'replaced'), 409: jsonContent(ErrorSchema, 'ScheduleKeyTaken'), ...notFound },
  }),
  remove: tag('delete', '/v1/schedules/{id}', {
    operationId: 'deleteSchedule',
    summary: 'Delete a schedule (and its slot ledger; its runs stay)',
    request: { params: IdParam },
    responses: { 204: { description: 'deleted' }, ...notFound },
  }),
  pause: tag('post', '/v1/schedules/{id}/pause', {
    operationId: 'pauseSchedule',
    summary: 'Pause a schedule: no slot is decided until it resumes',
    request: { params: IdParam, body: jsonBody(PauseBody, false) },
    responses: { 200: jsonContent(ScheduleSchema, 'paused'), ...notFound },
  }),
  resume: tag('post', '/v1/schedules/{id}/resume', {
    operationId: 'resumeSchedule',
    summary: 'Resume a schedule: its slots count from now (the paused ones are not caught up)',
    request: { params: IdParam },
    responses: { 200: jsonContent(ScheduleSchema, 'resumed'), ...notFound },
  }),
  trigger: tag('post', '/v1/schedules/{id}/trigger', {
    operationId: 'triggerSchedule',
    summary: 'Start a run of the schedule now (an operator act: the overlap policy does not hold it back)',
    request: { params: IdParam },
    responses: { 202: jsonContent(z.object({ runId: z.string(), slotAt: z.string() }).openapi('ScheduleTriggered'), 'started; the slot is in the ledger with source trigger'), 409: jsonContent(ErrorSchema, 'ScheduleStartRefused (definition disabled or deleted, or the Pending backlog full)'), ...notFound },
  }),
  backfill: tag('post', '/v1/schedules/{id}/backfill', {
    operationId: 'backfillSchedule',
    summary: 'Start one run per slot of a past span (slots already in the ledger are left alone)',
    request: { params: IdParam, body: jsonBody(BackfillBody) },
    responses: {
      200: jsonContent(z.object({ dryRun: z.boolean(), slots: z.array(z.object({ slotAt: z.string(), runId: z.string().nullable(), outcome: z.string() })) }).openapi('ScheduleBackfill'), 'the slots (and with dryRun false, their runs)'),
      ...notFound,
    },
  }),
  preview: tag('get', '/v1/schedules/{id}/preview', {
    operationId: 'previewSchedule',
    summary: 'The next slots, with their UTC offsets',
    request: { params: IdParam, query: z.object({ count: z.coerce.number().int().min(1).max(MAX_PREVIEW_COUNT).optional() }) },
    responses: { 200: jsonContent(z.object({ timezone: z.string(), slots: z.array(SlotViewSchema) }).openapi('SchedulePreview'), 'next slots'), ...notFound },
  }),
  slots: tag('get', '/v1/schedules/{id}/slots', {
    operationId: 'listScheduleSlots',
    summary: 'The slot ledger, newest slot first: every slot with its outcome and run or reason',
    request: { params: IdParam, query: z.object({ limit: z.coerce.number().int().min(1).max(1000).optional(), cursor: z.string().optional().openapi({ description: 'the nextCursor of the previous page' }) }) },
    responses: { 200: jsonContent(z.object({ items: z.array(SlotSchema), nextCursor: z.string().nullable() }).openapi('ScheduleSlotList'), 'a page of the ledger'), ...notFound },
  }),
};

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

function present(s: ScheduleRow) {
  const spec = s.spec as { timezone?: string };
  return {
    id: s.id,
    key: s.key,
    definitionId: s.definitionId,
    version: s.definitionVersion ?? ('current' as const),
    alias: s.alias,
    input: s.input,
    metadata: s.metadata,
    spec: s.spec as Record<string, unknown>,
    policy: s.policy as Record<string, unknown>,
    paused: s.paused,
    pausedReason: s.pausedReason,
    nextSlot: s.nextFireAt === null ? null : slotView(spec.timezone ?? 'UTC', s.nextFireAt.getTime()),
    lastSlotAt: iso(s.lastSlotAt),
    revision: s.version,
    createdAt: s.createdAt.toISOString(),
    updatedAt: s.updatedAt.toISOString(),
  };
}

const presentSlot = (r: SlotRow) => ({ slotAt: r.slotAt.toISOString(), source: r.source, outcome: r.outcome, runId: r.runId, reason: r.reason, decidedAt: r.decidedAt.toISOString() });

/** Checks a schedule body against the tenant's definition; answers what the store writes. */
async function scheduleWrite(deps: AppDeps, tenant: string, body: z.infer<typeof ScheduleBody>, raw: { input: unknown; metadata: unknown }): Promise<ScheduleWrite> {
  const issues = [];
  if (!KEY_RE.test(body.key)) issues.push({ key: 'key', message: 'key must start with a letter or digit and hold only letters, digits, _ . : -' });
  const spec = checkScheduleSpec(body.spec);
  if (!spec.ok) issues.push(...spec.issues);
  const policy = checkSchedulePolicy(body.policy);
  if (!policy.ok) issues.push(...policy.issues);
  if (issues.length > 0) throw new ValidationFailedError('invalid schedule', issues);
  const metadata = checkRunMetadata(raw.metadata, deps.limits.metadata ?? DEFAULT_METADATA_LIMITS);
  if (!metadata.ok) throw new MetadataInvalidError(metadata.issues);
  const definitionId = requireUuid(body.definitionId, 'definition');
  const def = await getDefinition(deps.pool, tenant, definitionId);
  if (!def) throw new NotFoundError('definition');
  const pinned = body.version === undefined || body.version === 'current' ? null : body.version;
  if (pinned !== null && body.alias !== undefined) throw new ValidationFailedError('name a version or an alias, not both', [{ key: 'alias', message: 'not with a version number' }]);
  // `current` always resolves (absent: the latest version); another alias must exist now — deleted later, its slots fail with the reason
  const alias = body.alias === undefined || body.alias === CURRENT_ALIAS ? null : body.alias;
  if (alias !== null && !(await definitionAliasMap(deps.pool, tenant, definitionId)).has(alias)) {
    throw new ValidationFailedError(`no alias '${alias}'`, [{ key: 'alias', message: 'not an alias of this definition' }]);
  }
  const doc = pinned === null ? def.graph : (await getDefinitionVersion(deps.pool, tenant, definitionId, pinned))?.graph;
  const stored = pinned === null ? null : await storedVersionGraph(deps.pool, tenant, definitionId, pinned);
  if (doc === undefined || (pinned !== null && stored === null)) {
    throw new ValidationFailedError('no such definition version', [{ key: 'version', message: `the definition has no version ${pinned}` }]);
  }
  const parsed = checkStoredGraph(doc, Infinity, deps.tools.parserCatalog());
  if (!parsed.ok) throw new ValidationFailedError('the definition graph no longer checks', parsed.errors);
  if (!spec.ok || !policy.ok) throw new Error('unreachable');
  const inputJson = checkRunInput(parsed.graph as Graph, raw.input, deps.limits.maxRunInputBytes);
  const next = nextSlot(spec.value.compiled, Date.now());
  return {
    tenantId: tenant,
    key: body.key,
    definitionId,
    definitionVersion: pinned,
    alias,
    // a pinned version's graphs travel with the schedule, sealed to that version, as a fork's do
    pinned:
      pinned === null || stored === null
        ? null
        : { version: pinned, graphText: stored.graphText, planGraphText: sealPlanGraph(jsonText(parsed.graph), definitionId, pinned), graphHash: stored.graphHash },
    inputJson,
    metadata: metadata.metadata,
    spec: spec.value.spec,
    policy: policy.value,
    nextFireAt: next === null ? null : new Date(next),
  };
}

async function requireSchedule(deps: AppDeps, tenant: string, id: string): Promise<ScheduleRow> {
  const s = await getSchedule(deps.pool, tenant, requireUuid(id, 'schedule'));
  if (!s) throw new NotFoundError('schedule');
  return s;
}

/** The body's input and metadata as sent (big numbers kept exact), not as the schema parsed them. */
const rawMembers = (c: { get(key: 'body'): unknown }) => ({ input: bodyMember(c, 'input'), metadata: bodyMember(c, 'metadata') });


/** Registers the schedule routes on `app`. */
export function registerScheduleRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  const { pool } = deps;
  const maxBackfill = deps.limits.maxBackfillSlots ?? DEFAULT_MAX_BACKFILL_SLOTS;
  const startOpts = (tenant: string) => ({ shardCount: deps.limits.shardCount, maxPendingRuns: deps.limits.maxPendingRuns?.(tenant) ?? 0 });

  app.openapi(routes.create, async (c) => {
    const w = await scheduleWrite(deps, c.get('tenant'), c.req.valid('json'), rawMembers(c));
    const { row, created } = await upsertSchedule(pool, w);
    deps.logger.info({ scheduleId: row.id, created }, created ? 'schedule created' : 'schedule updated');
    return sendJson(created ? 201 : 200, present(row), created ? { location: `/v1/schedules/${row.id}` } : undefined);
  });

  app.openapi(routes.list, async (c) => {
    const q = c.req.valid('query');
    const cursor = requireCursor(q.cursor, (s) => (isScheduleCursor(s) ? s : null));
    const page = await listSchedules(pool, c.get('tenant'), pageLimit(q.limit), cursor);
    return sendJson(200, { items: page.items.map(present), nextCursor: page.nextCursor });
  });

  app.openapi(routes.get, async (c) => sendJson(200, present(await requireSchedule(deps, c.get('tenant'), c.req.valid('param').id))));

  app.openapi(routes.replace, async (c) => {
    const id = requireUuid(c.req.valid('param').id, 'schedule');
    const w = await scheduleWrite(deps, c.get('tenant'), c.req.valid('json'), rawMembers(c));
    const row = await replaceSchedule(pool, id, w);
    if (row === null) throw new NotFoundError('schedule');
    if (row === 'keyTaken') throw new ScheduleKeyTakenError(w.key);
    return sendJson(200, present(row));
  });

  app.openapi(routes.remove, async (c) => {
    if (!(await deleteSchedule(pool, c.get('tenant'), requireUuid(c.req.valid('param').id, 'schedule')))) throw new NotFoundError('schedule');
    return c.body(null, 204);
  });

  app.openapi(routes.pause, async (c) => {
    const s = await requireSchedule(deps, c.get('tenant'), c.req.valid('param').id);
    const row = await setSchedulePaused(pool, c.get('tenant'), s.id, true, c.req.valid('json').reason ?? 'paused by an operator', null);
    return sendJson(200, present(row ?? s));
  });

  app.openapi(routes.resume, async (c) => {
    const s = await requireSchedule(deps, c.get('tenant'), c.req.valid('param').id);
    const next = nextSlot(compileScheduleSpec(s.spec), Date.now());
    const row = await setSchedulePaused(pool, c.get('tenant'), s.id, false, null, next === null ? null : new Date(next));
    return sendJson(200, present(row ?? s));
  });

  app.openapi(routes.trigger, async (c) => {
    const s = await requireSchedule(deps, c.get('tenant'), c.req.valid('param').id);
    const slotAt = Date.now();
    const started = await startSlotRun(pool, s, slotAt, startOpts(c.get('tenant')));
    if (!started.ok) throw new ApiError(409, 'ScheduleStartRefused', started.reason);
    await recordSlots(pool, s.tenantId, s.id, [{ slotAt: new Date(slotAt), source: 'trigger', outcome: 'started', runId: started.runId, reason: null }]);
    deps.metrics?.scheduleSlots('started', 1);
    await publishWake(deps, started.runId, s.tenantId);
    return sendJson(202, { runId: started.runId, slotAt: new Date(slotAt).toISOString() }, { location: `/v1/runs/${started.runId}` });
  });

  app.openapi(routes.backfill, async (c) => {
    const s = await requireSchedule(deps, c.get('tenant'), c.req.valid('param').id);
    const b = c.req.valid('json');
    const from = requireInstant(b.from, 'from');
    const to = requireInstant(b.to, 'to');
    if (to < from) throw new ValidationFailedError('invalid span', [{ key: 'to', message: 'to must not be before from' }]);
    if (to > Date.now()) throw new ValidationFailedError('invalid span', [{ key: 'to', message: 'a backfill covers the past: to must not be in the future' }]);
    const slots = slotsBetween(compileScheduleSpec(s.spec), from - 1, to, maxBackfill + 1);
    if (slots.length > maxBackfill) throw new BackfillTooLargeError(slots.length, maxBackfill);
    const done = await recordedSlots(pool, s.id, slots.map((t) => new Date(t)));
    if (b.dryRun === true) {
      return sendJson(200, { dryRun: true, slots: slots.map((t) => ({ slotAt: new Date(t).toISOString(), runId: null, outcome: done.has(t) ? 'recorded' : 'wouldStart' })) });
    }
    const decisions: SlotDecision[] = [];
    for (const t of slots) {
      if (done.has(t)) continue;
      const started = await startSlotRun(pool, s, t, startOpts(c.get('tenant')));
      decisions.push({ slotAt: new Date(t), source: 'backfill', outcome: started.ok ? 'started' : 'failed', runId: started.ok ? started.runId : null, reason: started.ok ? null : started.reason });
      if (started.ok) await publishWake(deps, started.runId, s.tenantId);
    }
    const fresh = await recordSlots(pool, s.tenantId, s.id, decisions);
    for (const d of fresh) deps.metrics?.scheduleSlots(d.outcome, 1);
    const byAt = new Map(decisions.map((d) => [d.slotAt.getTime(), d]));
    return sendJson(200, {
      dryRun: false,
      slots: slots.map((t) => ({ slotAt: new Date(t).toISOString(), runId: byAt.get(t)?.runId ?? null, outcome: byAt.get(t)?.outcome ?? 'recorded' })),
    });
  });

  app.openapi(routes.preview, async (c) => {
    const s = await requireSchedule(deps, c.get('tenant'), c.req.valid('param').id);
    const spec = compileScheduleSpec(s.spec);
    return sendJson(200, { timezone: spec.zone, slots: previewSlots(spec, Date.now(), c.req.valid('query').count ?? 10) });
  });

  app.openapi(routes.slots, async (c) => {
    const s = await requireSchedule(deps, c.get('tenant'), c.req.valid('param').id);
    const q = c.req.valid('query');
    const limit = q.limit ?? 100;
    const before = q.cursor === undefined ? null : new Date(requireInstant(q.cursor, 'cursor'));
    const rows = await listSlots(pool, s.tenantId, s.id, limit, before);
    return sendJson(200, { items: rows.map(presentSlot), nextCursor: rows.length === limit ? rows.at(-1)!.slotAt.toISOString() : null });
  });
}
