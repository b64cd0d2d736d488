/**
 * SQL of schedules (`/v1/schedules`) and their slot ledger (`schedule_slots`). The API writes
 * the schedule rows; the dispatchers fire due slots: each pass locks the due schedule rows it
 * takes (`FOR UPDATE SKIP LOCKED`, so one replica decides a schedule at a time) and records each
 * slot once by its primary key (schedule, slot instant) with `ON CONFLICT DO NOTHING`; the run of
 * a slot dedupes on its request id `schedule:<id>:<slot>`. Correctness rests on those two keys,
 * not on the lock.
 */
import type { Pool } from 'pg';
import { concurrencyKeyOf, CURRENT_ALIAS, resolveAlias, slotRequestId, stringifyJson, type Graph, type Json } from '@flowline/graph';
import { startVersionFacts } from './definition-aliases';
import { storedVersionPin } from './definition-versions';
import { createRun, SavedAgentsMissingError, type PinnedVersion } from './run-create';
import { TERMINAL_RUN_STATUSES_SQL } from './status-sql';
import { decodeKeysetCursor, encodeKeysetCursor } from './keyset-cursor';
import type { Queryable, Tx } from './transaction';

/** The slot outcomes of the ledger; `failed`: the run could not be created (the reason says why). */
export const SLOT_OUTCOMES = ['started', 'skippedOverlap', 'skippedCatchup', 'buffered', 'cancelledPrevious', 'failed'] as const;
export type SlotOutcome = (typeof SLOT_OUTCOMES)[number];

export interface ScheduleRow {
  id: string;
  tenantId: string;
  key: string;
  definitionId: string;
  /** null: the version `alias` picks at each slot */
  definitionVersion: number | null;
  /** the version alias resolved at each slot (null: `current`); never with a pinned version */
  alias: string | null;
  /** the pinned version's stored graphs (null without a pinned version) */
  pinned: PinnedVersion | null;
  input: unknown;
  metadata: Record<string, string>;
  spec: unknown;
  policy: unknown;
  paused: boolean;
  pausedReason: string | null;
  nextFireAt: Date | null;
  lastSlotAt: Date | null;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface SlotRow {
  scheduleId: string;
  slotAt: Date;
  source: string;
  outcome: SlotOutcome;
  runId: string | null;
  reason: string | null;
  decidedAt: Date;
}

const COLUMNS = `id, tenant_id, key, definition_id, definition_version, alias, pinned_graph::text AS pinned_graph,
  pinned_plan_graph::text AS pinned_plan_graph, pinned_graph_hash, input, metadata, spec, policy, paused, paused_reason,
  next_fire_at, last_slot_at, version, created_at, updated_at,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') AS created_key`;

/* eslint-disable @typescript-eslint/no-explicit-any -- raw pg rows are mapped field by field */
function toSchedule(r: any): ScheduleRow {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    key: r.key,
    definitionId: r.definition_id,
    definitionVersion: r.definition_version,
    alias: r.alias,
    pinned:
      r.definition_version === null || r.pinned_graph === null
        ? null
        : { version: r.definition_version, graphText: r.pinned_graph, planGraphText: r.pinned_plan_graph, graphHash: r.pinned_graph_hash },
    input: r.input,
    metadata: r.metadata ?? {},
    spec: r.spec,
    policy: r.policy,
    paused: r.paused,
    pausedReason: r.paused_reason,
    nextFireAt: r.next_fire_at,
    lastSlotAt: r.last_slot_at,
    version: r.version,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function toSlot(r: any): SlotRow {
  return { scheduleId: r.schedule_id, slotAt: r.slot_at, source: r.source, outcome: r.outcome, runId: r.run_id, reason: r.reason, decidedAt: r.decided_at };
}
/* eslint-enable @typescript-eslint/no-explicit-any */

/** What a schedule write stores (the API checked every member). */
export interface ScheduleWrite {
  tenantId: string;
  key: string;
  definitionId: string;
  definitionVersion: number | null;
  /** the alias resolved at each slot (null: `current`), only without `definitionVersion` */
  alias: string | null;
  /** the pinned version's stored graphs, with `definitionVersion` set */
  pinned: PinnedVersion | null;
  inputJson: string;
  metadata: Record<string, string>;
  spec: unknown;
  policy: unknown;
  /** when its first slot after now fires (the due index), null: none left */
  nextFireAt: Date | null;
}

/**
 * Creates the tenant's schedule of `key`, or (the key taken) replaces its members: an upsert on
 * (tenant_id, key). Either way its slots count from now (`last_slot_at` = now: a changed spec
 * does not catch up the slots of the old one), version + 1 on update. Result: the row and
 * whether it was created.
 */
export async function upsertSchedule(db: Queryable, w: ScheduleWrite): Promise<{ row: ScheduleRow; created: boolean }> {
  const res = await db.query(
    `INSERT INTO schedules (tenant_id, key, definition_id, definition_version, input, metadata, spec, policy, next_fire_at, last_slot_at,
                            pinned_graph, pinned_plan_graph, pinned_graph_hash, alias)
     VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7::jsonb, $8::jsonb, $9, now(), $10::jsonb, $11::jsonb, $12, $13)
     ON CONFLICT (tenant_id, key) DO UPDATE SET definition_id = EXCLUDED.definition_id, definition_version = EXCLUDED.definition_version, alias = EXCLUDED.alias,
       pinned_graph = EXCLUDED.pinned_graph, pinned_plan_graph = EXCLUDED.pinned_plan_graph, pinned_graph_hash = EXCLUDED.pinned_graph_hash,
       input = EXCLUDED.input, metadata = EXCLUDED.metadata, spec = EXCLUDED.spec, policy = EXCLUDED.policy,
       next_fire_at = EXCLUDED.next_fire_at, last_slot_at = now(), version = schedules.version + 1, updated_at = now()
     RETURNING ${COLUMNS}, (xmax = 0) AS inserted`,
    [w.tenantId, w.key, w.definitionId, w.definitionVersion, w.inputJson, JSON.stringify(w.metadata), JSON.stringify(w.spec), JSON.stringify(w.policy), w.nextFireAt,
      ...pinnedValues(w), w.alias],
  );
  const r = res.rows[0];
  return { row: toSchedule(r), created: r.inserted === true };
}

/**
 * Replaces the members of the tenant's schedule `id` (PUT). Guard: the row exists for the
 * tenant; its key may change unless another schedule of the tenant holds it (`keyTaken`).
 */
export async function replaceSchedule(db: Queryable, id: string, w: ScheduleWrite): Promise<ScheduleRow | 'keyTaken' | null> {
  try {
    const res = await db.query(
      `UPDATE schedules SET key = $3, definition_id = $4, definition_version = $5, input = $6::jsonb, metadata = $7::jsonb, spec = $8::jsonb,
         policy = $9::jsonb, next_fire_at = CASE WHEN paused THEN NULL ELSE $10::timestamptz END, last_slot_at = now(), version = version + 1, updated_at = now(),
         pinned_graph = $11::jsonb, pinned_plan_graph = $12::jsonb, pinned_graph_hash = $13, alias = $14
       WHERE id = $1 AND tenant_id = $2 RETURNING ${COLUMNS}`,
      [id, w.tenantId, w.key, w.definitionId, w.definitionVersion, w.inputJson, JSON.stringify(w.metadata), JSON.stringify(w.spec), JSON.stringify(w.policy), w.nextFireAt,
        ...pinnedValues(w), w.alias],
    );
    return res.rows[0] ? toSchedule(res.rows[0]) : null;
  } catch (err) {
    if ((err as { code?: string }).code === '23505') return 'keyTaken';
    throw err;
  }
}

const pinnedValues = (w: ScheduleWrite) => [w.pinned?.graphText ?? null, w.pinned?.planGraphText ?? null, w.pinned?.graphHash ?? null];

export async function getSchedule(db: Queryable, tenantId: string, id: string): Promise<ScheduleRow | null> {
  const res = await db.query(`SELECT ${COLUMNS} FROM schedules WHERE id = $1 AND tenant_id = $2`, [id, tenantId]);
  return res.rows[0] ? toSchedule(res.rows[0]) : null;
}

const CURSOR_TAG = 's:';

/** The tenant's schedules, newest first, keyset-paged on (created_at, id). */
export async function listSchedules(db: Queryable, tenantId: string, limit: number, cursor: string | null): Promise<{ items: ScheduleRow[]; nextCursor: string | null }> {
  const pos = cursor === null ? null : decodeKeysetCursor(cursor, CURSOR_TAG, (id) => /^[0-9a-f-]{36}$/i.test(id));
  const res = await db.query(
    `SELECT ${COLUMNS} FROM schedules WHERE tenant_id = $1
       AND ($2::timestamp IS NULL OR (created_at AT TIME ZONE 'UTC', id) < ($2::timestamp, $3::uuid))
     ORDER BY created_at DESC, id DESC LIMIT $4`,
    [tenantId, pos?.createdKey ?? null, pos?.id ?? null, limit + 1],
  );
  const rows = res.rows.slice(0, limit);
  const last = rows.at(-1);
  return { items: rows.map(toSchedule), nextCursor: res.rows.length > limit && last ? encodeKeysetCursor(CURSOR_TAG, last.created_key, last.id) : null };
}

/** True when `cursor` is one {@link listSchedules} made. */
export function isScheduleCursor(cursor: string): boolean {
  return decodeKeysetCursor(cursor, CURSOR_TAG, (id) => /^[0-9a-f-]{36}$/i.test(id)) !== null;
}

/** Deletes the tenant's schedule (its slot ledger goes with it; the runs it started stay). */
export async function deleteSchedule(db: Queryable, tenantId: string, id: string): Promise<boolean> {
  const res = await db.query(`DELETE FROM schedules WHERE id = $1 AND tenant_id = $2`, [id, tenantId]);
  return (res.rowCount ?? 0) > 0;
}

/**
 * Pauses (next_fire_at NULL, the reason kept) or resumes a schedule. A resume counts slots from
 * now (`last_slot_at` = now, `next_fire_at` given by the caller): the slots of the pause are not
 * caught up. Result: the row, or null when the tenant has no such schedule.
 */
export async function setSchedulePaused(db: Queryable, tenantId: string, id: string, paused: boolean, reason: string | null, nextFireAt: Date | null): Promise<ScheduleRow | null> {
  const res = await db.query(
    `UPDATE schedules SET paused = $3, paused_reason = CASE WHEN $3 THEN $4 ELSE NULL END,
       next_fire_at = CASE WHEN $3 THEN NULL ELSE $5::timestamptz END,
       last_slot_at = CASE WHEN $3 OR NOT paused THEN last_slot_at ELSE now() END, version = version + 1, updated_at = now()
     WHERE id = $1 AND tenant_id = $2 RETURNING ${COLUMNS}`,
    [id, tenantId, paused, reason, nextFireAt],
  );
  return res.rows[0] ? toSchedule(res.rows[0]) : null;
}

/** The schedule's slot ledger, newest slot first, `limit` rows before `before` (exclusive). */
export async function listSlots(db: Queryable, tenantId: string, scheduleId: string, limit: number, before: Date | null): Promise<SlotRow[]> {
  const res = await db.query(
    `SELECT schedule_id, slot_at, source, outcome, run_id, reason, decided_at FROM schedule_slots
     WHERE schedule_id = $1 AND tenant_id = $2 AND ($3::timestamptz IS NULL OR slot_at < $3) ORDER BY slot_at DESC LIMIT $4`,
    [scheduleId, tenantId, before, limit],
  );
  return res.rows.map(toSlot);
}

// ---------------------------------------------------------------- the dispatchers' side

/** A due schedule as a firing pass sees it, with the database clock of the pass. */
export interface DueSchedule extends ScheduleRow {
  now: Date;
}

/**
 * Inputs: $1 limit. Guard: next_fire_at <= now() and not paused; rows another pass holds are
 * skipped. Result: up to $1 due schedules, locked until the caller's transaction ends.
 */
export async function lockDueSchedules(tx: Tx, limit: number): Promise<DueSchedule[]> {
  const res = await tx.query(
    `SELECT ${COLUMNS}, now() AS now FROM schedules WHERE next_fire_at <= now() AND NOT paused
     ORDER BY next_fire_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
    [limit],
  );
  return res.rows.map((r) => ({ ...toSchedule(r), now: r.now }));
}

/**
 * Inputs: $1 limit. Result: unpaused schedules with a buffered slot (found through the partial
 * index of buffered slots, so an idle pass reads no schedule), locked (skipping those held), with
 * the database clock; a buffered slot starts once its schedule has no live run.
 */
export async function lockBufferedSchedules(tx: Tx, limit: number): Promise<DueSchedule[]> {
  const res = await tx.query(
    `SELECT ${COLUMNS}, now() AS now FROM schedules
     WHERE id IN (SELECT DISTINCT schedule_id FROM schedule_slots WHERE outcome = 'buffered') AND NOT paused
     LIMIT $1 FOR UPDATE SKIP LOCKED`,
    [limit],
  );
  return res.rows.map((r) => ({ ...toSchedule(r), now: r.now }));
}

/** The schedule's runs that have not ended (its overlap policy counts them). */
export async function liveRunsOfSchedule(db: Queryable, scheduleId: string): Promise<string[]> {
  const res = await db.query<{ id: string }>(
    `SELECT id FROM runs WHERE schedule_id = $1 AND status NOT IN (${TERMINAL_RUN_STATUSES_SQL}) ORDER BY created_at`,
    [scheduleId],
  );
  return res.rows.map((r) => r.id);
}

/** The schedule's buffered slots, oldest first. */
export async function bufferedSlots(db: Queryable, scheduleId: string): Promise<Date[]> {
  const res = await db.query<{ slot_at: Date }>(`SELECT slot_at FROM schedule_slots WHERE schedule_id = $1 AND outcome = 'buffered' ORDER BY slot_at`, [scheduleId]);
  return res.rows.map((r) => r.slot_at);
}

/** The status of the schedule's newest run (pauseOnFailure reads it), or null without one. */
export async function newestRunStatus(db: Queryable, scheduleId: string): Promise<{ id: string; status: string } | null> {
  const res = await db.query<{ id: string; status: string }>(
    `SELECT id, status FROM runs WHERE schedule_id = $1 ORDER BY created_at DESC LIMIT 1`,
    [scheduleId],
  );
  return res.rows[0] ?? null;
}

/** A slot decision to record. */
export interface SlotDecision {
  slotAt: Date;
  source: 'cron' | 'trigger' | 'backfill';
  outcome: SlotOutcome;
  runId: string | null;
  reason: string | null;
}

/**
 * Records slot decisions, each once: ON CONFLICT (schedule_id, slot_at) DO NOTHING, so a slot
 * another pass (or replica) recorded first keeps its row. Result: the decisions that were new.
 */
export async function recordSlots(db: Queryable, tenantId: string, scheduleId: string, slots: readonly SlotDecision[]): Promise<SlotDecision[]> {
  if (slots.length === 0) return [];
  const res = await db.query<{ slot_at: Date }>(
    `INSERT INTO schedule_slots (schedule_id, tenant_id, slot_at, source, outcome, run_id, reason)
     SELECT $1, $2, t.at, t.src, t.outcome, t.run, t.reason
     FROM unnest($3::timestamptz[], $4::text[], $5::text[], $6::uuid[], $7::text[]) AS t(at, src, outcome, run, reason)
     ON CONFLICT (schedule_id, slot_at) DO NOTHING RETURNING slot_at`,
    [scheduleId, tenantId, slots.map((s) => s.slotAt), slots.map((s) => s.source), slots.map((s) => s.outcome), slots.map((s) => s.runId), slots.map((s) => s.reason)],
  );
  const fresh = new Set(res.rows.map((r) => r.slot_at.getTime()));
  return slots.filter((s) => fresh.has(s.slotAt.getTime()));
}

/** The slots of `at` already recorded for the schedule (a trigger or backfill does not decide them again). */
export async function recordedSlots(db: Queryable, scheduleId: string, at: readonly Date[]): Promise<Set<number>> {
  if (at.length === 0) return new Set();
  const res = await db.query<{ slot_at: Date }>(`SELECT slot_at FROM schedule_slots WHERE schedule_id = $1 AND slot_at = ANY($2::timestamptz[])`, [scheduleId, at]);
  return new Set(res.rows.map((r) => r.slot_at.getTime()));
}

/** A buffered slot started: its row now reads `outcome` with the run. Guard: still buffered. */
export async function startBufferedSlot(db: Queryable, scheduleId: string, slotAt: Date, outcome: SlotOutcome, runId: string | null, reason: string | null): Promise<boolean> {
  const res = await db.query(
    `UPDATE schedule_slots SET outcome = $3, run_id = $4, reason = $5, decided_at = now() WHERE schedule_id = $1 AND slot_at = $2 AND outcome = 'buffered'`,
    [scheduleId, slotAt, outcome, runId, reason],
  );
  return (res.rowCount ?? 0) > 0;
}

/** After a pass: the newest decided slot and the next fire time (null: none left), or paused with a reason. */
export async function advanceSchedule(db: Queryable, id: string, lastSlotAt: Date | null, nextFireAt: Date | null, pausedReason: string | null = null): Promise<void> {
  await db.query(
    `UPDATE schedules SET last_slot_at = coalesce($2, last_slot_at), next_fire_at = CASE WHEN $4::text IS NULL THEN $3::timestamptz END,
       paused = paused OR $4::text IS NOT NULL, paused_reason = coalesce($4, paused_reason)
     WHERE id = $1`,
    [id, lastSlotAt, nextFireAt, pausedReason],
  );
}

/** Counts of the schedule's slots by outcome (the API's summary of a ledger). */
export async function slotCounts(db: Pool | Queryable, scheduleId: string): Promise<Record<string, number>> {
  const res = await db.query<{ outcome: string; n: number }>(`SELECT outcome, count(*)::int AS n FROM schedule_slots WHERE schedule_id = $1 GROUP BY outcome`, [scheduleId]);
  return Object.fromEntries(res.rows.map((r) => [r.outcome, r.n]));
}

/** What starting a slot's run answered. */
export type SlotStart = { ok: true; runId: string } | { ok: false; reason: string };

/**
 * The version a slot of `s` runs: its pinned version, else its alias (default `current`)
 * resolved now over the definition's aliases (libs/graph `resolveAlias`), so moving the alias
 * moves the schedule's next run. A version other than the latest runs from its stored graphs.
 * A refusal (the alias deleted, its version retired or kept without a parsed graph) is a reason
 * for the ledger, not an error.
 */
async function slotVersion(pool: Pool, s: ScheduleRow): Promise<{ pinned: PinnedVersion | null; versionAlias: string | null } | { refused: string }> {
  if (s.pinned !== null) return { pinned: s.pinned, versionAlias: null };
  const alias = s.alias ?? CURRENT_ALIAS;
  const facts = await startVersionFacts(pool, s.tenantId, s.definitionId);
  if (facts === null) return { refused: 'the definition no longer exists' };
  const version = resolveAlias(facts.aliases, alias, facts.latest, [Math.random() * 100, Math.random() * 100]);
  if (version === null) return { refused: `the definition has no alias '${alias}' any more` };
  if (version === facts.latest) return { pinned: null, versionAlias: alias };
  const pin = await storedVersionPin(pool, s.tenantId, s.definitionId, version);
  if (pin === 'absent') return { refused: `alias '${alias}' picked version ${version}, which is retired or gone` };
  if (pin === 'noPlanGraph') return { refused: `alias '${alias}' picked version ${version}, saved before versions kept their parsed graph; point the alias at a newer version` };
  return { pinned: pin, versionAlias: alias };
}

/**
 * Starts the run of one slot of `s`: request id `schedule:<id>:<slot ISO>` (a repeat of the same
 * slot answers the same run), the schedule's input and metadata, `schedule_id` set, at the
 * version {@link slotVersion} picks. The definition must be enabled. Never throws for a refused
 * start: the reason goes to the ledger.
 */
export async function startSlotRun(pool: Pool, s: ScheduleRow, slotAt: number, o: { shardCount: number; maxPendingRuns?: number }): Promise<SlotStart> {
  const choice = await slotVersion(pool, s);
  if ('refused' in choice) return { ok: false, reason: choice.refused };
  const res = await createRun(pool, {
    tenantId: s.tenantId,
    definitionId: s.definitionId,
    requestId: slotRequestId(s.id, slotAt),
    conversationId: null,
    shardCount: o.shardCount,
    metadata: s.metadata,
    scheduleId: s.id,
    ...(o.maxPendingRuns !== undefined ? { maxPendingRuns: o.maxPendingRuns } : {}),
    pinned: choice.pinned,
    versionAlias: choice.versionAlias,
    prepare: (def) => {
      if (!def.enabled) throw new SlotRefused('the definition is disabled');
      // with a pinned version this is that version's plan graph
      const graph = def.planGraph as Graph;
      return {
        inputJson: stringifyJson(s.input as Json),
        nodes: graph.nodes.map((n) => ({ key: n.key, kind: n.kind, attemptLimit: n.maxAttempts })),
        concurrency: concurrencyKeyOf(graph, s.input as Json),
      };
    },
  }).catch((err: unknown) => {
    if (err instanceof SlotRefused || err instanceof SavedAgentsMissingError) return { kind: 'refused' as const, reason: err.message };
    throw err;
  });
  if (res.kind === 'created' || res.kind === 'replayed') return { ok: true, runId: res.runId };
  if (res.kind === 'refused') return { ok: false, reason: res.reason };
  if (res.kind === 'definitionNotFound') return { ok: false, reason: 'the definition no longer exists' };
  if (res.kind === 'backlogFull') return { ok: false, reason: `the tenant's Pending backlog is full (MAX_PENDING_RUNS, ${res.pending} Pending)` };
  return { ok: false, reason: `run creation answered ${res.kind}` };
}

class SlotRefused extends Error {}
