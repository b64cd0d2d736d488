/**
 * Waitpoint tokens (`schema/waitpoints.ts`): read, complete, revoke, list. Inserted and settled
 * by the planner's apply (`flowline_apply_run`); completed and revoked here, each as a
 * compare-and-set that also bumps the run's version and wakes it — so a tick planned before the
 * change (a timer about to win, say) cannot commit, and the next one sees it.
 */
import { isEnvelope, openJson, sealJsonText } from '../crypto';
import { decodeKeysetCursor, encodeKeysetCursor } from './keyset-cursor';
import { waitpointPayloadAt } from './run-snapshots';
import { withTransaction, type Queryable } from './transaction';
import type { Pool } from '../pool';

export const WAITPOINT_STATUSES = ['waiting', 'completed', 'expired', 'revoked'] as const;
export type WaitpointStatus = (typeof WAITPOINT_STATUSES)[number];

export interface WaitpointRecord {
  id: string;
  tenantId: string;
  runId: string;
  nodeKey: string;
  index: number;
  kind: 'token' | 'event';
  /** `expired` also when still marked waiting but past its expiry (the planner settles it on its next tick) */
  status: WaitpointStatus;
  schema: Record<string, unknown> | null;
  singleUse: boolean;
  eventName: string | null;
  payload: unknown;
  createdAt: string;
  expiresAt: string | null;
  completedAt: string | null;
  /** its Wait settled (used it, or withdrew it) */
  settled: boolean;
}

interface Row {
  id: string;
  tenant_id: string;
  run_id: string;
  node_key: string;
  arm_index: number;
  kind: 'token' | 'event';
  status: WaitpointStatus;
  schema: Record<string, unknown> | null;
  single_use: boolean;
  event_name: string | null;
  payload: unknown;
  created_at: Date;
  expires_at: Date | null;
  completed_at: Date | null;
  consumed_at: Date | null;
  past_expiry: boolean;
  created_key: string;
}

const COLUMNS = `id, tenant_id, run_id, node_key, arm_index, kind, status, schema, single_use, event_name, payload,
  created_at, expires_at, completed_at, consumed_at, (expires_at IS NOT NULL AND expires_at <= now()) AS past_expiry,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') AS created_key`;

function toRecord(r: Row): WaitpointRecord {
  const payload = isEnvelope(r.payload) ? openJson(r.payload, waitpointPayloadAt(r.id)) : r.payload;
  return {
    id: r.id,
    tenantId: r.tenant_id,
    runId: r.run_id,
    nodeKey: r.node_key,
    index: r.arm_index,
    kind: r.kind,
    status: r.status === 'waiting' && r.past_expiry ? 'expired' : r.status,
    schema: r.schema,
    singleUse: r.single_use,
    eventName: r.event_name,
    payload: payload ?? null,
    createdAt: r.created_at.toISOString(),
    expiresAt: r.expires_at?.toISOString() ?? null,
    completedAt: r.completed_at?.toISOString() ?? null,
    settled: r.consumed_at !== null,
  };
}

/** One waitpoint; `tenantId` null reads it by id alone (a signed callback proves its id). */
export async function getWaitpoint(db: Queryable, tenantId: string | null, id: string): Promise<WaitpointRecord | null> {
  const res = await db.query<Row>(`SELECT ${COLUMNS} FROM waitpoints WHERE id = $1::uuid AND ($2::text IS NULL OR tenant_id = $2)`, [id, tenantId]);
  return res.rows[0] ? toRecord(res.rows[0]) : null;
}

/** What a completion did. */
export type CompleteWaitpointOutcome =
  | { kind: 'completed'; record: WaitpointRecord }
  | { kind: 'alreadyCompleted'; record: WaitpointRecord }
  | { kind: 'expired' | 'revoked' | 'notToken'; record: WaitpointRecord }
  | { kind: 'notFound' };

/*
 * Inputs: $1 waitpoint id, $2 payload (JSON text, sealed when encryption is on).
 * Guard: a token not settled by its Wait, before its expiry (the database clock), waiting — or
 * completed already when it is not single-use (the later body replaces the earlier).
 * Effect: completed with the payload, `completed_at` now. Result: its id, or no row.
 */
const COMPLETE_SQL = `
UPDATE waitpoints SET status = 'completed', payload = $2::jsonb, completed_at = now()
WHERE id = $1::uuid AND kind = 'token' AND consumed_at IS NULL AND expires_at > now()
  AND (status = 'waiting' OR (status = 'completed' AND NOT single_use))
RETURNING id`;

/** Inputs: $1 run id. Effect: the run due now with its version bumped (its cached snapshot lacks the change). */
const WAKE_RUN_SQL = 'UPDATE runs SET wake_at = now(), version = version + 1 WHERE id = $1::uuid';

/**
 * Completes a token with `payloadJson` (judged against its schema by the caller). The run row
 * is locked first — the order the planner's apply takes, so the two never deadlock — and an
 * apply that planned without the completion then finds the run's version moved.
 * `tenantId` null: the signed callback, which names no tenant.
 */
export async function completeWaitpoint(pool: Pool, tenantId: string | null, id: string, payloadJson: string): Promise<CompleteWaitpointOutcome> {
  return withTransaction(pool, async (tx) => {
    const before = await getWaitpoint(tx, tenantId, id);
    if (!before) return { kind: 'notFound' };
    if (before.kind !== 'token') return { kind: 'notToken', record: before };
    await tx.query('SELECT 1 FROM runs WHERE id = $1::uuid FOR NO KEY UPDATE', [before.runId]);
    const payload = sealJsonText(payloadJson, waitpointPayloadAt(id));
    const res = await tx.query(COMPLETE_SQL, [id, payload]);
    const after = (await getWaitpoint(tx, tenantId, id))!;
    if (res.rowCount === 1) {
      await tx.query(WAKE_RUN_SQL, [before.runId]);
      return { kind: 'completed', record: after };
    }
    if (after.status === 'completed') return { kind: 'alreadyCompleted', record: after };
    if (after.status === 'waiting') return { kind: 'revoked', record: after }; // settled by its Wait (withdrawn) while waiting
    return { kind: after.status, record: after };
  });
}

/** What a revoke did. */
export type RevokeWaitpointOutcome = { kind: 'revoked' | 'notWaiting'; record: WaitpointRecord } | { kind: 'notFound' };

/**
 * Revokes a waiting token (`DELETE /v1/waitpoints/{id}`): its callback then answers 410, and its
 * Wait's arm fires at once with `revoked: true` (the run is woken). A token no longer waiting is
 * left as it is.
 */
export async function revokeWaitpoint(pool: Pool, tenantId: string, id: string): Promise<RevokeWaitpointOutcome> {
  return withTransaction(pool, async (tx) => {
    const before = await getWaitpoint(tx, tenantId, id);
    if (!before) return { kind: 'notFound' };
    await tx.query('SELECT 1 FROM runs WHERE id = $1::uuid FOR NO KEY UPDATE', [before.runId]);
    const res = await tx.query(
      `UPDATE waitpoints SET status = 'revoked', completed_at = now()
       WHERE id = $1::uuid AND kind = 'token' AND status = 'waiting' AND consumed_at IS NULL RETURNING id`,
      [id],
    );
    const after = (await getWaitpoint(tx, tenantId, id))!;
    if (res.rowCount !== 1) return { kind: 'notWaiting', record: after };
    await tx.query(WAKE_RUN_SQL, [before.runId]);
    return { kind: 'revoked', record: after };
  });
}

export interface ListWaitpointsParams {
  tenantId: string;
  runId?: string;
  status?: WaitpointStatus;
  limit: number;
  cursor?: string;
}

const CURSOR_TAG = 'w1:';
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Decodes a list cursor; null when malformed. */
export function decodeWaitpointCursor(cursor: string): { createdKey: string; id: string } | null {
  return decodeKeysetCursor(cursor, CURSOR_TAG, (id) => UUID_RE.test(id));
}

/**
 * A tenant's token waitpoints, newest first, optionally of one run and one status (`expired`
 * includes tokens past their expiry that the planner has not settled yet).
 */
export async function listWaitpoints(db: Queryable, p: ListWaitpointsParams): Promise<{ items: WaitpointRecord[]; nextCursor: string | null }> {
  const after = p.cursor ? decodeWaitpointCursor(p.cursor) : null;
  const res = await db.query<Row>(
    `SELECT ${COLUMNS} FROM waitpoints
     WHERE tenant_id = $1 AND kind = 'token' AND ($2::uuid IS NULL OR run_id = $2::uuid)
       AND ($3::text IS NULL
            OR ($3 = 'waiting' AND status = 'waiting' AND expires_at > now())
            OR ($3 = 'expired' AND (status = 'expired' OR (status = 'waiting' AND expires_at <= now())))
            OR ($3 NOT IN ('waiting', 'expired') AND status = $3))
       AND ($4::timestamp IS NULL OR (created_at AT TIME ZONE 'UTC', id) < ($4::timestamp, $5::uuid))
     ORDER BY created_at DESC, id DESC LIMIT $6`,
    [p.tenantId, p.runId ?? null, p.status ?? null, after?.createdKey ?? null, after?.id ?? null, p.limit + 1],
  );
  const rows = res.rows.slice(0, p.limit);
  const last = rows.at(-1);
  return {
    items: rows.map(toRecord),
    nextCursor: res.rows.length > p.limit && last ? encodeKeysetCursor(CURSOR_TAG, last.created_key, last.id) : null,
  };
}
