/**
 * `POST /v1/events`: events for Waits' event arms, `[{ name, data?, id?, ts? }]` → 202. Kept per
 * tenant (libs/db `inbound_events`), deduplicated by id (an id already sent is answered as a
 * duplicate, not kept again); the runs whose parked Waits wait on one of the names are woken. A
 * Wait takes only events received after it began waiting, the oldest that passes its filter.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { sendInboundEvents } from '@flowline/db';
import type { AppDeps, AppEnv } from '../context';
import { ValidationFailedError } from '../errors';
import { jsonText, sendJson } from '../body';
import { publishWake } from '../wake';
import { ErrorSchema, EventsAcceptedSchema, InboundEventSchema, jsonBody, jsonContent } from '../schemas';
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
    const tenant = c.get('tenant');
    const out = await sendInboundEvents(deps.pool, tenant, events);
    const kept = new Set(out.kept);
    if (out.wokenRunIds.length > 0) deps.logger.info({ events: out.kept.length, runs: out.wokenRunIds.length }, 'events woke waiting runs');
    await Promise.all(out.wokenRunIds.map((runId) => publishWake(deps, runId, tenant)));
    return sendJson(202, { accepted: kept.size, ids: out.ids, duplicates: out.ids.filter((id) => !kept.has(id)) });
  });
}
