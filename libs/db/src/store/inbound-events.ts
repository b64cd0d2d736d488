/**
 * The event intake (`POST /v1/events`): events kept per tenant (`schema/inbound-events.ts`),
 * deduplicated by id, and the runs whose Waits wait on their names woken.
 */
import { randomUUID } from 'node:crypto';
import { sealJsonText } from '../crypto';
import { inboundEventDataAt } from './run-snapshots';
import type { Pool } from 'pg';
import { withTransaction } from './transaction';
import { hasSubscriberSql } from './event-fanout';

export interface InboundEventInput {
  /** the sender's id (dedupe key per tenant); a fresh uuid when absent */
  id?: string;
  name: string;
  /** the event's data as JSON text */
  dataJson: string;
  /** the sender's timestamp (ISO), kept as given */
  ts?: string;
}

/*
 * Inputs: $1 tenant, $2 ids, $3 names, $4 data (JSON text each), $5 sender timestamps.
 * Guard: an id the tenant already sent is left as it was (ON CONFLICT DO NOTHING).
 * Effect: the new events (fan-out due when a definition's trigger listens for the name); every run with an unsettled event waitpoint on one of their names due
 * now with its version bumped (a cached snapshot of it lacks the event).
 * Result: the ids kept anew, and the runs woken.
 */
const SEND_SQL = `
WITH ins AS (
  INSERT INTO inbound_events (tenant_id, id, name, data, ts, fanout_due)
  SELECT $1, e.id, e.name, e.data::jsonb, e.ts::timestamptz, ${hasSubscriberSql('$1', 'e.name')}
  FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS e(id, name, data, ts)
  ON CONFLICT (tenant_id, id) DO NOTHING
  RETURNING id, name),
woke AS (
  UPDATE runs SET wake_at = now(), version = version + 1
  WHERE id IN (SELECT w.run_id FROM waitpoints w WHERE w.tenant_id = $1 AND w.kind = 'event' AND w.consumed_at IS NULL
                 AND w.event_name IN (SELECT name FROM ins))
  RETURNING id)
SELECT (SELECT coalesce(array_agg(id), '{}') FROM ins) AS kept, (SELECT coalesce(array_agg(id::text), '{}') FROM woke) AS woke`;

/*
 * Inputs: $1 tenant, $2 event names. Effect: the exclusive lock of each name
 * (flowline_event_lock_key), taken in key order — the order flowline_apply takes them shared —
 * and held to commit: a dispatcher commit parking a Wait on one of these names either committed
 * before (SEND_SQL, a later statement, sees its waitpoint) or waits for this commit (and its own
 * check then sees the event).
 */
const LOCK_NAMES_SQL = `
SELECT pg_advisory_xact_lock(k) FROM (SELECT DISTINCT flowline_event_lock_key($1, n) AS k FROM unnest($2::text[]) AS n ORDER BY k) s`;

/** Keeps `events` for `tenantId`; answers their ids (in order), which were new, and the runs woken. */
export async function sendInboundEvents(
  db: Pool,
  tenantId: string,
  events: InboundEventInput[],
): Promise<{ ids: string[]; kept: string[]; wokenRunIds: string[] }> {
  const ids = events.map((e) => e.id ?? randomUUID());
  const data = events.map((e, i) => sealJsonText(e.dataJson, inboundEventDataAt(tenantId, ids[i]!)));
  const names = events.map((e) => e.name);
  const res = await withTransaction(db, async (tx) => {
    await tx.query(LOCK_NAMES_SQL, [tenantId, names]);
    return tx.query<{ kept: string[]; woke: string[] }>(SEND_SQL, [tenantId, ids, names, data, events.map((e) => e.ts ?? null)]);
  });
  const row = res.rows[0]!;
  return { ids, kept: row.kept, wokenRunIds: row.woke };
}
