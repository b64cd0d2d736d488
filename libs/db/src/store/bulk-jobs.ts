/**
 * SQL of bulk actions by filter: the dry-run count, the submission (the job row
 * and its fixed set of runs, snapshotted in ONE `INSERT … SELECT`), the progress read, and
 * the processing a dispatcher does — claim a job under a lease (`FOR UPDATE SKIP LOCKED`, so
 * replicas never claim one job together; an expired lease is claimable again), read the
 * next runs after the cursor, and record a batch's outcomes (counts, cursor, lease renewal
 * and status in one transaction, guarded by the lease owner).
 *
 * Which runs an action applies to is libs/graph's `BULK_ACTION_RULES`; the statements read
 * their lists from it.
 */
import type { Pool } from 'pg';
import { randomUUID } from 'node:crypto';
import {
  BULK_ACTION_RULES,
  bulkJobStatus,
  bulkPauseReason,
  resumedGate,
  type BulkAction,
  type BulkGateState,
  type BulkJobStatus,
  type BulkMigrateOptions,
  type BulkPauseReason,
  type BulkRunOutcome,
  type MigrationReason,
  type RunSearch,
} from '@flowline/graph';
import { rollback, withTransaction, type Queryable } from './transaction';
import { runSearchSql } from './run-search';

export interface BulkJobRow {
  id: string;
  tenantId: string;
  requestId: string | null;
  action: BulkAction;
  filter: RunSearch;
  options: Record<string, unknown>;
  status: BulkJobStatus;
  total: number;
  done: number;
  failed: number;
  cursor: string | null;
  leaseOwner: string | null;
  claims: number;
  /** why a Paused job stopped (canary | errorRate), else null */
  pauseReason: BulkPauseReason | null;
  /** a migrate's canary and error-rate gate */
  gate: BulkGateState;
  /** the principal that submitted it */
  createdBy: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/* eslint-disable-next-line @typescript-eslint/no-explicit-any -- a raw pg row mapped field by field */
function toJob(r: any): BulkJobRow {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    requestId: r.request_id,
    action: r.action,
    filter: r.filter,
    options: r.options ?? {},
    status: r.status,
    total: r.total,
    done: r.done,
    failed: r.failed,
    cursor: r.cursor,
    leaseOwner: r.lease_owner,
    createdBy: r.created_by,
    claims: r.claims,
    pauseReason: r.pause_reason,
    gate: { canaryReleased: r.canary_released, baseDone: r.rate_base_done, baseFailed: r.rate_base_failed },
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

const JOB_COLUMNS = `id, tenant_id, request_id, action, filter, options, status, total, done, failed, cursor, lease_owner, claims, pause_reason,
  canary_released, rate_base_done, rate_base_failed, created_by, created_at, updated_at`;

/**
 * The selection of a job's runs: the tenant's runs matching the search AND the action's rule
 * (status list, paused, top-level). Appends its values to `params` ($1 must be the tenant).
 */
function candidatesSql(action: BulkAction, search: RunSearch, params: unknown[]): string {
  const rule = BULK_ACTION_RULES[action];
  const where = runSearchSql(search, params);
  params.push([...rule.runStatuses]);
  const statuses = `$${params.length}`;
  return `SELECT r.id FROM runs r
    WHERE r.tenant_id = $1 AND ${where} AND r.status = ANY(${statuses}::text[])
      ${rule.pausedOnly ? 'AND r.paused' : ''} ${rule.topLevelOnly ? 'AND r.parent_run_id IS NULL' : ''}`;
}

/**
 * The number of runs a job with this action and search would hold now, counted up to
 * `cap + 1` (so an oversized request costs at most that many index entries).
 */
export async function countBulkCandidates(db: Queryable, tenantId: string, action: BulkAction, search: RunSearch, cap: number): Promise<number> {
  const params: unknown[] = [tenantId];
  const sel = candidatesSql(action, search, params);
  params.push(cap + 1);
  const res = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM (${sel} LIMIT $${params.length}) c`, params);
  return res.rows[0]?.n ?? 0;
}

export interface SubmitBulkParams {
  tenantId: string;
  requestId: string | null;
  action: BulkAction;
  search: RunSearch;
  options: Record<string, unknown>;
  /** MAX_BULK_RUNS: a job matching more runs is refused */
  maxRuns: number;
  /** the submitting principal (recorded on the intents the job writes) @default null */
  createdBy?: string | null;
}

export type SubmitBulkResult =
  | { kind: 'created'; job: BulkJobRow }
  | { kind: 'replayed'; job: BulkJobRow }
  | { kind: 'requestIdReused'; job: BulkJobRow }
  | { kind: 'tooMany'; count: number };

/* Inputs: tenant, request id, the request (action, filter, options as JSON). Result: the job holding the id and whether it is this request. */
async function heldJob(db: Queryable, p: SubmitBulkParams): Promise<SubmitBulkResult | null> {
  if (p.requestId === null) return null;
  const res = await db.query(
    `SELECT ${JOB_COLUMNS}, (action = $3 AND filter = $4::jsonb AND options = $5::jsonb) AS same
     FROM bulk_jobs WHERE tenant_id = $1 AND request_id = $2`,
    [p.tenantId, p.requestId, p.action, JSON.stringify(p.search), JSON.stringify(p.options)],
  );
  const r = res.rows[0];
  if (!r) return null;
  return { kind: r.same ? 'replayed' : 'requestIdReused', job: toJob(r) };
}

/**
 * Submits a job: the job row, then its runs in one `INSERT … SELECT` (the set is fixed here:
 * `total` is final whatever the runs do next), in one transaction. Idempotent on
 * `requestId` (unique per tenant): the same request again answers the same job; the id
 * used for another request answers `requestIdReused`. More than `maxRuns` runs: `tooMany`,
 * nothing written.
 */
export async function submitBulkJob(pool: Pool, p: SubmitBulkParams): Promise<SubmitBulkResult> {
  const held = await heldJob(pool, p);
  if (held) return held;
  return withTransaction(pool, async (tx) => {
    const id = randomUUID();
    // A twin's uncommitted insert of the same request id makes this statement wait for its outcome.
    const ins = await tx.query(
      `INSERT INTO bulk_jobs (id, tenant_id, request_id, action, filter, options, status, total, created_by, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, 'Pending', 0, $7, now(), now())
       ON CONFLICT (tenant_id, request_id) WHERE request_id IS NOT NULL DO NOTHING RETURNING id`,
      [id, p.tenantId, p.requestId, p.action, JSON.stringify(p.search), JSON.stringify(p.options), p.createdBy ?? null],
    );
    if (!ins.rowCount) {
      const again = await heldJob(tx, p);
      if (!again) throw new Error('bulk job insert conflicted but no job holds the request id');
      return rollback(again);
    }
    const params: unknown[] = [p.tenantId];
    const sel = candidatesSql(p.action, p.search, params);
    params.push(id, p.maxRuns + 1);
    const runs = await tx.query(
      `INSERT INTO bulk_job_runs (bulk_id, run_id)
       SELECT $${params.length - 1}::uuid, c.id FROM (${sel} LIMIT $${params.length}) c`,
      params,
    );
    const total = runs.rowCount ?? 0;
    if (total > p.maxRuns) return rollback<SubmitBulkResult>({ kind: 'tooMany', count: total });
    const status = bulkJobStatus({ total, done: 0, failed: 0 }, false);
    const job = await tx.query(`UPDATE bulk_jobs SET total = $2, status = $3 WHERE id = $1 RETURNING ${JOB_COLUMNS}`, [id, total, status]);
    return { kind: 'created' as const, job: toJob(job.rows[0]) };
  });
}

/** The tenant's job; null when absent (another tenant's job reads as absent). */
export async function getBulkJob(db: Queryable, tenantId: string, bulkId: string): Promise<BulkJobRow | null> {
  const res = await db.query(`SELECT ${JOB_COLUMNS} FROM bulk_jobs WHERE id = $1 AND tenant_id = $2`, [bulkId, tenantId]);
  return res.rows[0] ? toJob(res.rows[0]) : null;
}

/**
 * Claims the oldest open job whose lease is free or expired (database clock): lease_owner =
 * `owner` until now + `leaseMs`, claims + 1, status Running. `SKIP LOCKED`: a job another
 * replica is claiming right now is passed over. Null when no job is claimable.
 */
export async function claimBulkJob(db: Queryable, owner: string, leaseMs: number): Promise<BulkJobRow | null> {
  const res = await db.query({
    name: 'flowline_claim_bulk_job',
    text: `UPDATE bulk_jobs SET lease_owner = $1, lease_expires_at = now() + make_interval(secs => $2::double precision / 1000),
                          claims = claims + 1, status = 'Running', updated_at = now()
     WHERE id = (
       SELECT id FROM bulk_jobs
       WHERE status IN ('Pending', 'Running') AND (lease_expires_at IS NULL OR lease_expires_at < now())
       ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
     RETURNING ${JOB_COLUMNS}`,
    values: [owner, leaseMs],
  });
  return res.rows[0] ? toJob(res.rows[0]) : null;
}

/** The next `limit` runs of the job after `cursor` (id order) that have no outcome yet. */
export async function nextBulkRuns(db: Queryable, bulkId: string, cursor: string | null, limit: number): Promise<string[]> {
  const res = await db.query<{ run_id: string }>(
    `SELECT run_id FROM bulk_job_runs
     WHERE bulk_id = $1 AND ($2::uuid IS NULL OR run_id > $2::uuid) AND outcome IS NULL
     ORDER BY run_id LIMIT $3`,
    [bulkId, cursor, limit],
  );
  return res.rows.map((r) => r.run_id);
}

/** One run's outcome in a batch. */
export interface BulkRunResult {
  runId: string;
  outcome: BulkRunOutcome;
  /** a refusal's code, else null */
  reason: string | null;
  /** a refused migrate's planner reasons @default null */
  details?: MigrationReason[] | null;
}

/** How a batch's recording judges a migrate job's gate. */
export interface BulkGateOptions {
  /** BULK_ERROR_RATE_MIN_RUNS: the fewest runs since the last resume before the error rate can pause the job */
  errorRateMinRuns: number;
}

/**
 * Records a batch, in one transaction guarded by the lease: the job row locked only while
 * `owner` holds it; each run's outcome written only where none is (a batch re-applied after
 * a crash counts nothing twice); done/failed raised by what was written; cursor = the
 * batch's last run; the lease renewed; the status from libs/graph `bulkJobStatus` — Paused
 * (lease released, the reason recorded) when a migrate's gate (`bulkPauseReason`) stops it.
 * Returns the job as recorded, or null when the lease was lost (another replica owns the job now).
 */
export async function recordBulkBatch(
  pool: Pool,
  bulkId: string,
  owner: string,
  leaseMs: number,
  results: BulkRunResult[],
  cursor: string | null,
  gateOptions?: BulkGateOptions,
): Promise<BulkJobRow | null> {
  return withTransaction(pool, async (tx) => {
    const lock = await tx.query(`SELECT id FROM bulk_jobs WHERE id = $1 AND lease_owner = $2 FOR UPDATE`, [bulkId, owner]);
    if (!lock.rowCount) return null;
    const wrote = await tx.query<{ done: number; failed: number }>(
      `WITH w AS (
         UPDATE bulk_job_runs b SET outcome = t.o, reason = t.rs, details = t.d::jsonb
         FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[]) AS t(id, o, rs, d)
         WHERE b.bulk_id = $1 AND b.run_id = t.id AND b.outcome IS NULL
         RETURNING b.outcome)
       SELECT count(*) FILTER (WHERE outcome <> 'refused')::int AS done, count(*) FILTER (WHERE outcome = 'refused')::int AS failed FROM w`,
      [bulkId, results.map((r) => r.runId), results.map((r) => r.outcome), results.map((r) => r.reason), results.map((r) => (r.details ? JSON.stringify(r.details) : null))],
    );
    const w = wrote.rows[0] ?? { done: 0, failed: 0 };
    const upd = await tx.query(
      `UPDATE bulk_jobs SET done = done + $2, failed = failed + $3, cursor = coalesce($4::uuid, cursor),
                            lease_expires_at = now() + make_interval(secs => $5::double precision / 1000), updated_at = now()
       WHERE id = $1 RETURNING ${JOB_COLUMNS}`,
      [bulkId, w.done, w.failed, cursor, leaseMs],
    );
    const job = toJob(upd.rows[0]);
    const pause = job.action === 'migrate' ? bulkPauseReason(job, job.options as unknown as BulkMigrateOptions, job.gate, gateOptions?.errorRateMinRuns) : null;
    const status = bulkJobStatus(job, true, pause !== null);
    if (status === job.status) return job;
    // a finished or paused job releases its lease: nothing is left to claim until a resume
    const fin = await tx.query(
      `UPDATE bulk_jobs SET status = $2, pause_reason = $4, lease_owner = CASE WHEN $3 THEN NULL ELSE lease_owner END,
                            lease_expires_at = CASE WHEN $3 THEN NULL ELSE lease_expires_at END
       WHERE id = $1 RETURNING ${JOB_COLUMNS}`,
      [bulkId, status, status !== 'Running', pause],
    );
    return toJob(fin.rows[0]);
  });
}

export type ResumeBulkResult = { kind: 'resumed'; job: BulkJobRow } | { kind: 'notPaused'; job: BulkJobRow } | null;

/**
 * Resumes a Paused job: Running with no lease (the next claim takes it from its cursor), the
 * canary released and the error rate measured afresh (libs/graph `resumedGate`). Guarded by
 * status = Paused under the row lock, so two resumes resume once. Null for another tenant's
 * or an unknown job; `notPaused` when it is not Paused.
 */
export async function resumeBulkJob(pool: Pool, tenantId: string, bulkId: string): Promise<ResumeBulkResult> {
  return withTransaction(pool, async (tx) => {
    const cur = await tx.query(`SELECT ${JOB_COLUMNS} FROM bulk_jobs WHERE id = $1 AND tenant_id = $2 FOR UPDATE`, [bulkId, tenantId]);
    if (!cur.rows[0]) return null;
    const job = toJob(cur.rows[0]);
    if (job.status !== 'Paused') return { kind: 'notPaused' as const, job };
    const gate = resumedGate(job);
    const res = await tx.query(
      `UPDATE bulk_jobs SET status = 'Running', pause_reason = NULL, canary_released = $2, rate_base_done = $3, rate_base_failed = $4,
                            lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
       WHERE id = $1 AND status = 'Paused' RETURNING ${JOB_COLUMNS}`,
      [bulkId, gate.canaryReleased, gate.baseDone, gate.baseFailed],
    );
    return { kind: 'resumed' as const, job: toJob(res.rows[0]) };
  });
}

/** One processed run of a job as listed. */
export interface BulkJobRunRow {
  runId: string;
  outcome: BulkRunOutcome;
  reason: string | null;
  details: MigrationReason[] | null;
}

/**
 * A page of a job's processed runs in run id order after `cursor`, optionally of one outcome;
 * null when the tenant has no such job. Runs not yet processed are not listed.
 */
export async function listBulkJobRuns(
  db: Queryable,
  tenantId: string,
  bulkId: string,
  q: { outcome: BulkRunOutcome | null; cursor: string | null; limit: number },
): Promise<{ items: BulkJobRunRow[]; nextCursor: string | null } | null> {
  const job = await db.query('SELECT 1 FROM bulk_jobs WHERE id = $1 AND tenant_id = $2', [bulkId, tenantId]);
  if (!job.rowCount) return null;
  const res = await db.query<{ run_id: string; outcome: BulkRunOutcome; reason: string | null; details: MigrationReason[] | null }>(
    `SELECT run_id, outcome, reason, details FROM bulk_job_runs
     WHERE bulk_id = $1 AND outcome IS NOT NULL AND ($2::text IS NULL OR outcome = $2) AND ($3::uuid IS NULL OR run_id > $3::uuid)
     ORDER BY run_id LIMIT $4`,
    [bulkId, q.outcome, q.cursor, q.limit + 1],
  );
  const rows = res.rows.slice(0, q.limit);
  return {
    items: rows.map((r) => ({ runId: r.run_id, outcome: r.outcome, reason: r.reason, details: r.details })),
    nextCursor: res.rows.length > q.limit ? rows.at(-1)!.run_id : null,
  };
}

/** The run's status and its Failed nodes (a retry-failed's targets); null when the tenant has no such run. */
export async function failedNodesOf(db: Queryable, tenantId: string, runId: string): Promise<{ status: string; nodeKeys: string[] } | null> {
  const res = await db.query<{ status: string; keys: string[] }>(
    `SELECT r.status, coalesce(array_agg(n.node_key ORDER BY n.node_key) FILTER (WHERE n.node_key IS NOT NULL), '{}') AS keys
     FROM runs r LEFT JOIN node_runs n ON n.run_id = r.id AND n.status = 'Failed'
     WHERE r.id = $1 AND r.tenant_id = $2 GROUP BY r.status`,
    [runId, tenantId],
  );
  const r = res.rows[0];
  return r ? { status: r.status, nodeKeys: r.keys } : null;
}
