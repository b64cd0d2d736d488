/**
 * The audit entry of the request being served, carried by an AsyncLocalStorage so that
 * {@link withTransaction} can write it into the first transaction the request commits: the
 * store's functions open their own transactions, and threading an entry through every one of
 * them would touch each signature. The API's audit middleware opens the scope
 * ({@link runWithAuditEntry}); outside it (the dispatcher, tests, background work) nothing is
 * written. Once the request's answer is recorded the entry is closed, so work the request
 * spawned and that commits later (an event fan-out, say) writes nothing under its name.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Queryable } from './transaction';

/** Who did what to which resource, in which request: what every audit row says. */
export interface AuditFacts {
  principal: string;
  keyPrefix: string | null;
  action: string;
  resourceType: string;
  resourceId: string | null;
  requestId: string;
  clientAddress: string | null;
}

/** What one request records (the row of `audit_log` before it is chained). */
export interface AuditEntry extends AuditFacts {
  /** the tenant whose chain the row joins; null until known (a keyless route learns it from its link) */
  tenant: string | null;
  /** RFC 6902 diff of a definition change, secrets redacted */
  patch: unknown;
  /** the row written (a committed transaction carried it); null while none was */
  rowId: number | null;
  /** true while a committing transaction writes it (two transactions of one request in parallel write one row) */
  claimed: boolean;
  /** true once the answer was recorded: later commits write nothing */
  closed: boolean;
  /**
   * The status the request answers when the write it makes next creates its resource, as the
   * route says before making it; a write that records the row with its creation
   * (run-create-statement.ts) records this status and the created id then, so the answer needs
   * no second write. @default none
   */
  presumedStatus?: number;
  /** the status the written row already holds (set with {@link presumedStatus}); the answer rewrites the row only when it differs */
  recordedStatus?: number;
}

const current = new AsyncLocalStorage<AuditEntry>();

/** Runs `fn` with `entry` as the request's audit entry. */
export function runWithAuditEntry<T>(entry: AuditEntry, fn: () => Promise<T>): Promise<T> {
  return current.run(entry, fn);
}

/** The audit entry of the request being served, if any. */
export function currentAuditEntry(): AuditEntry | undefined {
  return current.getStore();
}

/**
 * The entry a committing transaction writes — open, tenant known, not written nor being
 * written — claimed for it; null when there is none.
 */
export function claimAuditEntry(): AuditEntry | null {
  const e = current.getStore();
  if (e === undefined || e.closed || e.claimed || e.tenant === null) return null;
  e.claimed = true;
  return e;
}

const INSERT_SQL = `
INSERT INTO audit_log (tenant_id, principal, key_prefix, action, resource_type, resource_id, request_id, client_address, status, error_code, patch)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
RETURNING id`;

/**
 * Inserts `entry` unchained; `status` null = the answer is not known yet (a transaction of the
 * request commits before its handler answers), set by {@link recordAuditOutcome} afterwards.
 */
export async function insertAuditRow(db: Queryable, entry: AuditEntry, status: number | null, errorCode: string | null): Promise<number> {
  const res = await db.query<{ id: string }>(INSERT_SQL, auditRowValues(entry, status, errorCode));
  return Number(res.rows[0]!.id);
}

/** The values of an audit row in the column order of {@link INSERT_SQL} (a statement writing the row itself takes them in that order). */
export function auditRowValues(entry: AuditEntry, status: number | null, errorCode: string | null): unknown[] {
  return [
    entry.tenant,
    entry.principal,
    entry.keyPrefix,
    entry.action,
    entry.resourceType,
    entry.resourceId,
    entry.requestId,
    entry.clientAddress,
    status,
    errorCode,
    entry.patch === undefined || entry.patch === null ? null : JSON.stringify(entry.patch),
  ];
}

/**
 * The audit row as a statement that writes it beside its change: `INSERT … SELECT` of the 11
 * parameters from `$first` on (the values of {@link auditStatementValues}), one row per row of
 * `source` (the change's RETURNING, so no change writes no row), none when the tenant parameter
 * is null (no entry to write); RETURNING the row's id.
 */
export function auditInsertFrom(source: string, first: number): string {
  const p = Array.from({ length: 11 }, (_, i) => `$${first + i}`);
  return `INSERT INTO audit_log (tenant_id, principal, key_prefix, action, resource_type, resource_id, request_id, client_address, status, error_code, patch)
  SELECT ${p.join(', ')} FROM ${source} WHERE ${p[0]}::text IS NOT NULL
  RETURNING id`;
}

/**
 * The parameters of {@link auditInsertFrom} for a claimed entry (all null without one): with a
 * presumed status, that status, and `createdId` (the resource the change creates) when given.
 */
export function auditStatementValues(entry: AuditEntry | null, createdId?: string): unknown[] {
  if (entry === null) return Array.from({ length: 11 }, () => null);
  if (entry.presumedStatus === undefined) return auditRowValues(entry, null, null);
  return auditRowValues(createdId === undefined ? entry : { ...entry, resourceId: createdId }, entry.presumedStatus, null);
}

/** After a statement that may have written `entry`'s row: its id (and the status it holds) when written, else the entry freed for a later write. */
export function settleAuditEntry(entry: AuditEntry | null, rowId: number | null): void {
  if (entry === null) return;
  if (rowId === null) {
    entry.claimed = false;
    return;
  }
  entry.rowId = rowId;
  if (entry.presumedStatus !== undefined) entry.recordedStatus = entry.presumedStatus;
}

/**
 * Records the answer on a row its request's transaction wrote (and the resource id a create
 * learned only from its answer). Only an unchained row changes: once chained, its content is
 * sealed by its hash (a row chained for want of an answer past the grace keeps status null).
 */
export async function recordAuditOutcome(db: Queryable, rowId: number, status: number, errorCode: string | null, resourceId: string | null): Promise<void> {
  await db.query(
    `UPDATE audit_log SET status = $2, error_code = $3, resource_id = coalesce($4, resource_id) WHERE id = $1 AND seq IS NULL`,
    [rowId, status, errorCode, resourceId],
  );
}
