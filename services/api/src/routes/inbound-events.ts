/**
 * `POST /v1/events`: events for definitions' triggers and Waits' event arms, `[{ name, data?, id?,
 * ts? }]` → 202. Kept per tenant (libs/db `inbound_events`), deduplicated by id (an id already
 * sent is answered as a duplicate, not kept again). Each new event starts one run of every
 * definition whose `triggers` match it (event-fanout.ts); the runs whose parked Waits wait on
 * one of the names are woken (a Wait takes only events received after it began waiting, the
 * oldest that passes its filter). `GET /v1/events/{id}` tells what each subscriber made of an
 * event; `POST /v1/events/{id}/replay` judges it again (a definition published after it);
 * `GET /v1/events` lists the tenant's events newest first.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { getInboundEvent, isEventCursor, listEventMatches, listInboundEvents } from '@flowline/db';
import type { AppDeps, AppEnv } from '../context';
import { NotFoundError, ValidationFailedError } from '../errors';
import { fanOutEvent, intakeEvents } from '../event-fanout';
import { isStorableId, isUuid, pageLimit, requireCursor, requireInstant } from '../present';
import { jsonText, sendJson } from '../body';
import {
  ErrorSchema,
  EventDetailSchema,
  EventIdParam,
  EventListQuery,
  EventListSchema,
  EventReplayBody,
  EventReplaySchema,
  EventsAcceptedSchema,
  InboundEventSchema,
  jsonBody,
  jsonContent,
} from '../schemas';
import { v1Route } from '../v1-route';

/** MAX_EVENTS_PER_REQUEST when the deployment passes none. */
const DEFAULT_MAX_EVENTS = 100;
/** MAX_SIGNAL_PAYLOAD_BYTES (also the bound of an event's data) when the deployment passes none. */
const DEFAULT_MAX_DATA_BYTES = 65_536;

const sendEventsRoute = v1Route.events('post', '/v1/events', {
  operationId: 'sendEvents',
  summary: "Send events (taken by Wait nodes' event arms)",
  description:
    'A list of 1–MAX_EVENTS_PER_REQUEST events. An id the tenant already sent is a duplicate (not kept again); without an id one is generated. ' +
    'Each Wait waiting on an event of that name (received after it began, passing its filter) fires on the oldest one.',
  request: { body: jsonBody(z.array(InboundEventSchema)) },
  responses: {
    202: jsonContent(EventsAcceptedSchema, 'kept (duplicates named)'),
    413: jsonContent(ErrorSchema, 'PayloadTooLarge'),
  },
});

const listEventsRoute = v1Route.events('get', '/v1/events', {
  operationId: 'listEvents',
  summary: "The tenant's events, newest first",
  description:
    'Keyset-paged on (receivedAt, id): pass the nextCursor of the previous page. `name` keeps one name; `from` (inclusive) and `to` (exclusive) ' +
    "bound receivedAt. Each item says how its fan-out stands and how many subscribers gave each verdict; its data and the verdicts' " +
    'reasons are on GET /v1/events/{id}.',
  request: { query: EventListQuery },
  responses: { 200: jsonContent(EventListSchema, 'a page of events') },
});

const getEventRoute = v1Route.events('get', '/v1/events/{id}', {
  operationId: 'getEvent',
  summary: 'An event and what each subscribed definition made of it',
  description:
    'Each definition whose triggers listen for the name: matched (the run it started), notMatched or filterError (why), deferred (its start ' +
    'is retried: the backlog was full) or refused (why). `fanout: due` while a verdict or a start is still to come.',
  request: { params: EventIdParam },
  responses: { 200: jsonContent(EventDetailSchema, 'the event') },
});

const replayEventRoute = v1Route.events('post', '/v1/events/{id}/replay', {
  operationId: 'replayEvent',
  summary: "Judge an event again by its subscribers (e.g. a definition published after it)",
  description:
    'Runs the fan-out again for the definitions named (or every one listening for the name now). A definition whose run the event ' +
    'already started answers that run (request id event:<eventId>:<definitionId>): a replay never starts a second run.',
  request: { params: EventIdParam, body: jsonBody(EventReplayBody, false) },
  responses: { 200: jsonContent(EventReplaySchema, 'the verdicts of this replay') },
});

/** Registers the event intake on `app`. */
export function registerInboundEventRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  const maxEvents = deps.limits.maxEventsPerRequest ?? DEFAULT_MAX_EVENTS;
  const maxBytes = deps.limits.maxSignalPayloadBytes ?? DEFAULT_MAX_DATA_BYTES;

  app.openapi(sendEventsRoute, async (c) => {
    const list = c.req.valid('json');
    // the raw body keeps big numbers exact; the validated copy only vouches for the shape
    const raw = c.get('body') as Array<{ data?: unknown }>;
    if (list.length === 0 || list.length > maxEvents) {
      throw new ValidationFailedError(`send 1–${maxEvents} events (MAX_EVENTS_PER_REQUEST)`, [{ key: null, message: `${list.length} events` }]);
    }
    const seen = new Set<string>();
    const events = list.map((e, i) => {
      const dataJson = jsonText(raw[i]?.data === undefined ? null : raw[i]!.data);
      const bytes = Buffer.byteLength(dataJson, 'utf8');
      if (bytes > maxBytes) throw new ValidationFailedError('event data too large', [{ key: `${i}.data`, message: `${bytes} UTF-8 bytes; at most ${maxBytes} (MAX_SIGNAL_PAYLOAD_BYTES)` }]);
      if (e.id !== undefined) {
        if (seen.has(e.id)) throw new ValidationFailedError('an event id is given twice', [{ key: `${i}.id`, message: `id '${e.id}' repeats` }]);
        seen.add(e.id);
      }
      return { name: e.name, dataJson, ...(e.id !== undefined ? { id: e.id } : {}), ...(e.ts !== undefined ? { ts: e.ts } : {}) };
    });
    const out = await intakeEvents(deps, c.get('tenant'), events);
    const kept = new Set(out.kept);
    return sendJson(202, { accepted: kept.size, ids: out.ids, duplicates: out.ids.filter((id) => !kept.has(id)) });
  });

  app.openapi(listEventsRoute, async (c) => {
    const q = c.req.valid('query');
    const cursor = requireCursor(q.cursor, (s) => (isEventCursor(s) ? s : null));
    // a name no event can have (a NUL, a lone surrogate) names none: Postgres would refuse the text
    if (q.name !== undefined && !isStorableId(q.name)) return sendJson(200, { items: [], nextCursor: null });
    const page = await listInboundEvents(deps.pool, {
      tenantId: c.get('tenant'),
      ...(q.name !== undefined ? { name: q.name } : {}),
      ...(q.from !== undefined ? { from: new Date(requireInstant(q.from, 'from')) } : {}),
      ...(q.to !== undefined ? { to: new Date(requireInstant(q.to, 'to')) } : {}),
      limit: pageLimit(q.limit),
      cursor,
    });
    return sendJson(200, {
      items: page.items.map((e) => ({ id: e.id, name: e.name, ts: e.ts, receivedAt: e.receivedAt.toISOString(), fanout: e.fanoutDue ? 'due' : 'done', outcomes: e.outcomes })),
      nextCursor: page.nextCursor,
    });
  });

  app.openapi(getEventRoute, async (c) => {
    const tenant = c.get('tenant');
    const id = c.req.valid('param').id;
    // an id no event can have (a NUL, a lone surrogate) names none
    const event = isStorableId(id) ? await getInboundEvent(deps.pool, tenant, id) : null;
    if (!event) throw new NotFoundError('event');
    const matches = await listEventMatches(deps.pool, tenant, event.id);
    return sendJson(200, {
      id: event.id,
      name: event.name,
      data: event.data,
      ts: event.ts,
      receivedAt: event.receivedAt.toISOString(),
      fanout: event.fanoutDue ? 'due' : 'done',
      matches: matches.map((m) => ({ ...m, at: m.at.toISOString() })),
    });
  });

  app.openapi(replayEventRoute, async (c) => {
    const tenant = c.get('tenant');
    const id = c.req.valid('param').id;
    // an id no event can have (a NUL, a lone surrogate) names none
    const event = isStorableId(id) ? await getInboundEvent(deps.pool, tenant, id) : null;
    if (!event) throw new NotFoundError('event');
    const ids = c.req.valid('json').definitionIds;
    const bad = ids?.findIndex((id) => !isUuid(id)) ?? -1;
    if (bad >= 0) throw new ValidationFailedError('definitionIds must be definition ids', [{ key: `definitionIds.${bad}`, message: `'${ids![bad]}' is not a uuid` }]);
    const res = await fanOutEvent(deps, event, ids === undefined ? undefined : new Set(ids.map((id) => id.toLowerCase())));
    return sendJson(200, { matches: res.matches });
  });
}
