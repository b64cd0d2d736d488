/**
 * Event triggers' fan-out (`POST /v1/events` → runs): which definitions subscribe to an event's
 * name (their `trigger_events`, kept in the clear), what each made of it (`event_matches`), and
 * the events whose fan-out is not finished (`inbound_events.fanout_due`).
 *
 * Exactly once per (event, definition) rests on run creation's unique request id
 * (`event:<eventId>:<definitionId>`), not on this bookkeeping: a fan-out repeated by a sweep or
 * a replay finds the run already there.
 */
import { openJsonText } from '../crypto';
import { decodeKeysetCursor, encodeKeysetCursor } from './keyset-cursor';
import { exactJson } from './definitions';
import { inboundEventDataAt } from './run-snapshots';
import type { Queryable } from './transaction';

/**
 * SQL: whether pattern column/expression `p` (`*` = any run of characters) matches the name
 * expression `name`. Patterns hold only `A-Z a-z 0-9 . _ - : / *` (libs/graph EVENT_PATTERN), so
 * `_` is the one LIKE wildcard to escape.
 */
const patternMatches = (name: string, p: string) => `${name} LIKE replace(replace(${p}, '_', '\\_'), '*', '%')`;

/** A subscribing definition. */
export interface EventSubscriber {
  id: string;
  name: string;
  enabled: boolean;
}

/*
 * Input: $1 tenant, $2 event name. Result: the tenant's definitions one of whose trigger
 * patterns matches the name, oldest first.
 */
const SUBSCRIBERS_SQL = `
SELECT d.id, d.name, d.enabled FROM definitions d
WHERE d.tenant_id = $1 AND cardinality(d.trigger_events) > 0
  AND EXISTS (SELECT 1 FROM unnest(d.trigger_events) AS p WHERE ${patternMatches('$2', 'p')})
ORDER BY d.created_at, d.id`;

/** The definitions of `tenantId` subscribed to events named `name`. */
export async function eventSubscribers(db: Queryable, tenantId: string, name: string): Promise<EventSubscriber[]> {
  const res = await db.query<EventSubscriber>(SUBSCRIBERS_SQL, [tenantId, name]);
  return res.rows;
}

/** The same test as {@link eventSubscribers}, for the intake's `fanout_due` (a SQL expression over `e.name`). */
export function hasSubscriberSql(tenantParam: string, nameExpr: string): string {
  return `EXISTS (SELECT 1 FROM definitions d, unnest(d.trigger_events) AS p
    WHERE d.tenant_id = ${tenantParam} AND cardinality(d.trigger_events) > 0 AND ${patternMatches(nameExpr, 'p')})`;
}

/** An event as the fan-out reads it (data opened). */
export interface StoredEvent {
  tenantId: string;
  id: string;
  name: string;
  data: unknown;
  ts: string | null;
  receivedAt: Date;
  fanoutDue: boolean;
}

interface RawEvent {
  tenant_id: string;
  id: string;
  name: string;
  data: string;
  ts: Date | null;
  received_at: Date;
  fanout_due: boolean;
}

const EVENT_COLUMNS = 'tenant_id, id, name, data::text AS data, ts, received_at, fanout_due';

function toEvent(r: RawEvent): StoredEvent {
  return {
    tenantId: r.tenant_id,
    id: r.id,
    name: r.name,
    data: exactJson(openJsonText(r.data, inboundEventDataAt(r.tenant_id, r.id))),
    ts: r.ts === null ? null : r.ts.toISOString(),
    receivedAt: r.received_at,
    fanoutDue: r.fanout_due,
  };
}

/** One event of the tenant, or null. */
export async function getInboundEvent(db: Queryable, tenantId: string, id: string): Promise<StoredEvent | null> {
  const res = await db.query<RawEvent>(`SELECT ${EVENT_COLUMNS} FROM inbound_events WHERE tenant_id = $1 AND id = $2`, [tenantId, id]);
  return res.rows[0] ? toEvent(res.rows[0]) : null;
}

/** An event as the list shows it: no data (the detail has it), and how its fan-out stands. */
export interface ListedEvent {
  id: string;
  name: string;
  ts: string | null;
  receivedAt: Date;
  fanoutDue: boolean;
  /** how many subscribers gave each verdict so far */
  outcomes: Partial<Record<EventMatch['outcome'], number>>;
}

export interface EventListQuery {
  tenantId: string;
  /** only events of this exact name */
  name?: string;
  /** received at or after */
  from?: Date;
  /** received before */
  to?: Date;
  limit: number;
  cursor: string | null;
}

const EVENT_CURSOR_TAG = 'e:';
// an event id is the sender's text: any text Postgres can store (no NUL)
const isEventCursorId = (id: string) => !id.includes('\0');

/** True when `cursor` is one {@link listInboundEvents} made. */
export function isEventCursor(cursor: string): boolean {
  return decodeKeysetCursor(cursor, EVENT_CURSOR_TAG, isEventCursorId) !== null;
}

/*
 * Inputs: $1 tenant, $2 name (null = any), $3 from, $4 to (received_at bounds, null = open),
 * $5/$6 the keyset position (received key, id) of the previous page's last row, $7 limit + 1.
 * Result: the tenant's events newest first (received_at desc, id desc) after the position, each
 * with its verdict counts; inbound_events_received_idx (or _name_idx with a name) reads only the page.
 */
const LIST_SQL = `
SELECT e.id, e.name, e.ts, e.received_at, e.fanout_due,
       to_char(e.received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') AS received_key,
       (SELECT coalesce(jsonb_object_agg(o.outcome, o.n), '{}') FROM
          (SELECT m.outcome, count(*) AS n FROM event_matches m WHERE m.tenant_id = e.tenant_id AND m.event_id = e.id GROUP BY m.outcome) o) AS outcomes
FROM inbound_events e
WHERE e.tenant_id = $1
  AND ($2::text IS NULL OR e.name = $2)
  AND ($3::timestamptz IS NULL OR e.received_at >= $3)
  AND ($4::timestamptz IS NULL OR e.received_at < $4)
  AND ($5::timestamp IS NULL OR (e.received_at, e.id) < ($5::timestamp AT TIME ZONE 'UTC', $6::text))
ORDER BY e.received_at DESC, e.id DESC
LIMIT $7`;

/** The tenant's events, newest first, keyset-paged on (received_at, id). */
export async function listInboundEvents(db: Queryable, q: EventListQuery): Promise<{ items: ListedEvent[]; nextCursor: string | null }> {
  const pos = q.cursor === null ? null : decodeKeysetCursor(q.cursor, EVENT_CURSOR_TAG, isEventCursorId);
  const res = await db.query<{ id: string; name: string; ts: Date | null; received_at: Date; fanout_due: boolean; received_key: string; outcomes: ListedEvent['outcomes'] }>(
    LIST_SQL,
    [q.tenantId, q.name ?? null, q.from ?? null, q.to ?? null, pos?.createdKey ?? null, pos?.id ?? null, q.limit + 1],
  );
  const rows = res.rows.slice(0, q.limit);
  const last = rows.at(-1);
  return {
    items: rows.map((r) => ({ id: r.id, name: r.name, ts: r.ts === null ? null : r.ts.toISOString(), receivedAt: r.received_at, fanoutDue: r.fanout_due, outcomes: r.outcomes })),
    nextCursor: res.rows.length > q.limit && last ? encodeKeysetCursor(EVENT_CURSOR_TAG, last.received_key, last.id) : null,
  };
}

/** Events of the given ids (any order), for the fan-out of a just-accepted batch. */
export async function inboundEventsByIds(db: Queryable, tenantId: string, ids: readonly string[]): Promise<StoredEvent[]> {
  if (ids.length === 0) return [];
  const res = await db.query<RawEvent>(`SELECT ${EVENT_COLUMNS} FROM inbound_events WHERE tenant_id = $1 AND id = ANY($2::text[])`, [tenantId, ids]);
  return res.rows.map(toEvent);
}

/**
 * Events whose fan-out is still due and older than `minAgeMs` (the intake fans out at once; a
 * younger one is probably in its hands), oldest first, at most `limit`.
 */
export async function eventsDueForFanout(db: Queryable, minAgeMs: number, limit: number): Promise<StoredEvent[]> {
  const res = await db.query<RawEvent>(
    `SELECT ${EVENT_COLUMNS} FROM inbound_events
     WHERE fanout_due AND received_at < now() - make_interval(secs => $1 / 1000.0)
     ORDER BY received_at LIMIT $2`,
    [minAgeMs, limit],
  );
  return res.rows.map(toEvent);
}

/** What one definition made of one event. */
export interface EventMatch {
  definitionId: string;
  outcome: 'matched' | 'notMatched' | 'filterError' | 'deferred' | 'refused';
  reason: string | null;
  runId: string | null;
}

/**
 * Records the verdicts of one fan-out (a later one replaces a definition's row) and, when
 * `finished`, clears the event's `fanout_due`; one statement.
 */
export async function recordEventFanout(db: Queryable, tenantId: string, eventId: string, matches: readonly EventMatch[], finished: boolean): Promise<void> {
  await db.query(
    `WITH rec AS (
       INSERT INTO event_matches (tenant_id, event_id, definition_id, outcome, reason, run_id, at)
       SELECT $1, $2, m.def, m.outcome, m.reason, m.run, now()
       FROM unnest($3::uuid[], $4::text[], $5::text[], $6::uuid[]) AS m(def, outcome, reason, run)
       ON CONFLICT (tenant_id, event_id, definition_id) DO UPDATE
         SET outcome = EXCLUDED.outcome, reason = EXCLUDED.reason, run_id = EXCLUDED.run_id, at = EXCLUDED.at
       RETURNING 1)
     UPDATE inbound_events SET fanout_due = false WHERE $7::boolean AND tenant_id = $1 AND id = $2 AND fanout_due`,
    [tenantId, eventId, matches.map((m) => m.definitionId), matches.map((m) => m.outcome), matches.map((m) => m.reason), matches.map((m) => m.runId), finished],
  );
}

/** A recorded verdict with its definition's name (null once the definition is deleted). */
export interface EventMatchRow extends EventMatch {
  definitionName: string | null;
  at: Date;
}

/** The verdicts recorded for an event, by definition creation order. */
export async function listEventMatches(db: Queryable, tenantId: string, eventId: string): Promise<EventMatchRow[]> {
  const res = await db.query<{ definition_id: string; outcome: EventMatch['outcome']; reason: string | null; run_id: string | null; name: string | null; at: Date }>(
    `SELECT m.definition_id, m.outcome, m.reason, m.run_id, d.name, m.at
     FROM event_matches m LEFT JOIN definitions d ON d.id = m.definition_id AND d.tenant_id = m.tenant_id
     WHERE m.tenant_id = $1 AND m.event_id = $2
     ORDER BY d.created_at NULLS LAST, m.definition_id`,
    [tenantId, eventId],
  );
  return res.rows.map((r) => ({ definitionId: r.definition_id, definitionName: r.name, outcome: r.outcome, reason: r.reason, runId: r.run_id, at: r.at }));
}
