/**
 * The audit log's reads and upkeep: chaining, listing, verifying the chain, pruning by age.
 * Rows are written by the API's requests (audit-context.ts); the schema is schema/audit-log.ts.
 *
 * Pruning keeps verify working with a checkpoint: the prune deletes a prefix of the chain
 * (rows 1..K) and records row K's seq and hash in audit_chains (`pruned_seq`, `pruned_hash`)
 * in the same transaction. Verify starts there: the first kept row must be K+1 and carry
 * K's hash as its `prev_hash`. The chain head (`head_seq`, `head_hash`) is recorded the same
 * way, so deleting the newest rows is caught too.
 */
import type { Pool } from 'pg';
import type { AuditFacts } from './audit-context';
import { withTransaction, type Queryable } from './transaction';

/** One chained (or pending) audit row as the API answers it. */
export interface AuditRecord extends AuditFacts {
  /** null while pending (committed, not chained yet) */
  seq: number | null;
  at: string;
  status: number | null;
  errorCode: string | null;
  patch: unknown;
  prevHash: string | null;
  hash: string | null;
}

interface AuditRowSql {
  seq: string | null;
  at: string;
  principal: string;
  key_prefix: string | null;
  action: string;
  resource_type: string;
  resource_id: string | null;
  request_id: string;
  client_address: string | null;
  status: number | null;
  error_code: string | null;
  patch: unknown;
  prev_hash: string | null;
  hash: string | null;
}

const COLUMNS = `seq, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at, principal, key_prefix, action, resource_type, resource_id,
  request_id, client_address, status, error_code, patch, prev_hash, hash`;

const record = (r: AuditRowSql): AuditRecord => ({
  seq: r.seq === null ? null : Number(r.seq),
  at: r.at,
  principal: r.principal,
  keyPrefix: r.key_prefix,
  action: r.action,
  resourceType: r.resource_type,
  resourceId: r.resource_id,
  requestId: r.request_id,
  clientAddress: r.client_address,
  status: r.status,
  errorCode: r.error_code,
  patch: r.patch,
  prevHash: r.prev_hash,
  hash: r.hash,
});

/** Chains up to `maxRows` of the tenant's ready rows (flowline_audit_chain); answers how many. */
export async function chainAudit(db: Queryable, tenant: string, graceS: number, maxRows = 1000): Promise<number> {
  const res = await db.query<{ n: number }>(`SELECT flowline_audit_chain($1, make_interval(secs => $2), $3) AS n`, [tenant, graceS, maxRows]);
  return res.rows[0]!.n;
}

/** Chains every ready row of the tenant, pass after pass. */
export async function chainAuditFully(db: Queryable, tenant: string, graceS: number, batch = 1000): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await chainAudit(db, tenant, graceS, batch);
    total += n;
    if (n < batch) return total;
  }
}

/* Loose index scan over audit_log_unchained_idx: one probe per tenant with pending rows. */
const PENDING_TENANTS_SQL = `
WITH RECURSIVE t AS (
  (SELECT tenant_id FROM audit_log WHERE seq IS NULL ORDER BY tenant_id LIMIT 1)
  UNION ALL
  SELECT (SELECT a.tenant_id FROM audit_log a WHERE a.seq IS NULL AND a.tenant_id > t.tenant_id ORDER BY a.tenant_id LIMIT 1)
  FROM t WHERE t.tenant_id IS NOT NULL
)
SELECT tenant_id FROM t WHERE tenant_id IS NOT NULL`;

/** The tenants with unchained rows (the sweep chains them). */
export async function tenantsWithPendingAudit(db: Queryable): Promise<string[]> {
  const res = await db.query<{ tenant_id: string }>(PENDING_TENANTS_SQL);
  return res.rows.map((r) => r.tenant_id);
}

/** The tenants with a chain (the prune looks at them). */
export async function tenantsWithAuditChain(db: Queryable): Promise<string[]> {
  const res = await db.query<{ tenant_id: string }>(`SELECT tenant_id FROM audit_chains ORDER BY tenant_id`);
  return res.rows.map((r) => r.tenant_id);
}

/** What the list filters on; every member optional. */
export interface AuditFilter {
  principal?: string;
  /** an exact action, or a prefix ending in `.*` (`run.*`) */
  action?: string;
  resourceType?: string;
  resourceId?: string;
  /** inclusive lower bound of `at` (ISO 8601) */
  from?: string;
  /** exclusive upper bound of `at` (ISO 8601) */
  to?: string;
}

function whereOf(tenant: string, f: AuditFilter): { sql: string; params: unknown[] } {
  const params: unknown[] = [tenant];
  const conds = ['tenant_id = $1'];
  const add = (cond: (p: string) => string, v: unknown) => {
    params.push(v);
    conds.push(cond(`$${params.length}`));
  };
  if (f.principal !== undefined) add((p) => `principal = ${p}`, f.principal);
  if (f.action !== undefined) {
    if (f.action.endsWith('.*')) add((p) => `starts_with(action, ${p})`, f.action.slice(0, -1));
    else add((p) => `action = ${p}`, f.action);
  }
  if (f.resourceType !== undefined) add((p) => `resource_type = ${p}`, f.resourceType);
  if (f.resourceId !== undefined) add((p) => `resource_id = ${p}`, f.resourceId);
  if (f.from !== undefined) add((p) => `at >= ${p}::timestamptz`, f.from);
  if (f.to !== undefined) add((p) => `at < ${p}::timestamptz`, f.to);
  return { sql: conds.join(' AND '), params };
}

/** A page of the chained rows, newest first, plus (first page, asked for) the pending ones. */
export interface AuditPage {
  items: AuditRecord[];
  /** the seq the next page starts below; null on the last page */
  nextBefore: number | null;
}

/**
 * The tenant's chained rows matching `filter`, newest first (by seq), `limit` of them below
 * `beforeSeq`; with `pending` the matching unchained rows come first (they have no seq yet).
 */
export async function listAudit(db: Queryable, tenant: string, filter: AuditFilter, limit: number, beforeSeq: number | null, pending: boolean): Promise<AuditPage> {
  const w = whereOf(tenant, filter);
  const params = [...w.params, limit + 1];
  const before = beforeSeq === null ? '' : ` AND seq < $${params.push(beforeSeq)}`;
  const res = await db.query<AuditRowSql>(
    `SELECT ${COLUMNS} FROM audit_log WHERE ${w.sql} AND seq IS NOT NULL${before} ORDER BY seq DESC LIMIT $${w.params.length + 1}`,
    params,
  );
  const rows = res.rows.slice(0, limit).map(record);
  const nextBefore = res.rows.length > limit ? rows[rows.length - 1]!.seq : null;
  if (!pending || beforeSeq !== null) return { items: rows, nextBefore };
  const p = await db.query<AuditRowSql>(`SELECT ${COLUMNS} FROM audit_log WHERE ${w.sql} AND seq IS NULL ORDER BY id DESC LIMIT 1000`, w.params);
  return { items: [...p.rows.map(record), ...rows], nextBefore };
}

/** Every chained row matching `filter`, oldest first, in pages of `batch` (the NDJSON export). */
export async function* exportAudit(db: Queryable, tenant: string, filter: AuditFilter, batch = 500): AsyncGenerator<AuditRecord[]> {
  const w = whereOf(tenant, filter);
  let after = 0;
  for (;;) {
    const res = await db.query<AuditRowSql>(
      `SELECT ${COLUMNS} FROM audit_log WHERE ${w.sql} AND seq > $${w.params.length + 1} ORDER BY seq LIMIT $${w.params.length + 2}`,
      [...w.params, after, batch],
    );
    if (res.rows.length === 0) return;
    const rows = res.rows.map(record);
    yield rows;
    if (rows.length < batch) return;
    after = rows[rows.length - 1]!.seq!;
  }
}

/** The answer of {@link verifyAudit}. */
export interface AuditVerification {
  ok: boolean;
  /** rows whose hash was recomputed */
  checked: number;
  /** the last pruned row (0: none pruned); the chain is proven from the row after it */
  prunedSeq: number;
  /** the chain's recorded head (0: no row chained yet) */
  headSeq: number;
  /** rows committed and not chained yet (not covered by this proof) */
  pending: number;
  /** the first seq where the chain breaks; null when ok */
  brokenAt: number | null;
  /** why it breaks there: `missing`, `hashMismatch`, `prevHashMismatch`, `headMismatch` */
  reason: string | null;
}

/**
 * Walks the tenant's chain from the retention checkpoint to the recorded head, recomputing
 * each row's hash (flowline_audit_hash) and checking it links to the one before: an altered
 * row breaks at its seq (its content no longer hashes to its hash), a deleted one at its seq
 * (the next row is not the one expected), a deleted newest row at the head.
 */
export async function verifyAudit(db: Queryable, tenant: string, batch = 2000): Promise<AuditVerification> {
  const chain = await db.query<{ head_seq: string; head_hash: string; pruned_seq: string; pruned_hash: string }>(
    `SELECT head_seq, head_hash, pruned_seq, pruned_hash FROM audit_chains WHERE tenant_id = $1`,
    [tenant],
  );
  const c = chain.rows[0];
  const headSeq = c ? Number(c.head_seq) : 0;
  const prunedSeq = c ? Number(c.pruned_seq) : 0;
  const pendingRes = await db.query<{ n: string }>(`SELECT count(*) AS n FROM audit_log WHERE tenant_id = $1 AND seq IS NULL`, [tenant]);
  const pending = Number(pendingRes.rows[0]!.n);
  let expectSeq = prunedSeq + 1;
  let expectPrev = c ? c.pruned_hash : '';
  let checked = 0;
  const broken = (at: number, reason: string): AuditVerification => ({ ok: false, checked, prunedSeq, headSeq, pending, brokenAt: at, reason });
  for (;;) {
    const res = await db.query<{ seq: string; prev_hash: string; hash: string; recomputed: string }>(
      `SELECT a.seq, a.prev_hash, a.hash, flowline_audit_hash(a.prev_hash, a) AS recomputed
       FROM audit_log a WHERE a.tenant_id = $1 AND a.seq >= $2 ORDER BY a.seq LIMIT $3`,
      [tenant, expectSeq, batch],
    );
    for (const r of res.rows) {
      const seq = Number(r.seq);
      if (seq !== expectSeq) return broken(expectSeq, 'missing');
      if (r.prev_hash !== expectPrev) return broken(seq, 'prevHashMismatch');
      if (r.recomputed !== r.hash) return broken(seq, 'hashMismatch');
      expectPrev = r.hash;
      expectSeq = seq + 1;
      checked += 1;
    }
    if (res.rows.length < batch) break;
  }
  const lastSeq = expectSeq - 1;
  if (lastSeq < headSeq) return broken(lastSeq + 1, 'missing');
  if (lastSeq > headSeq || (c !== undefined && c.head_hash !== expectPrev)) return broken(headSeq, 'headMismatch');
  return { ok: true, checked, prunedSeq, headSeq, pending, brokenAt: null, reason: null };
}

/**
 * Deletes the tenant's chained rows older than `cutoff`, as a prefix of the chain: rows 1..K
 * where K is the seq before the first chained row at or after `cutoff` (a row younger than the
 * cutoff is never deleted; an old row chained after a young one waits for it), and records row
 * K as the checkpoint verify starts from. Under the chain's advisory lock, so the chainer does
 * not move the head meanwhile. Answers the rows deleted.
 */
export async function pruneAudit(pool: Pool, tenant: string, cutoff: Date): Promise<number> {
  return withTransaction(pool, async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock(flowline_audit_lock_key($1))`, [tenant]);
    const k = await tx.query<{ k: string | null; hash: string | null }>(
      `WITH bound AS (
         SELECT coalesce(
           (SELECT min(seq) - 1 FROM audit_log WHERE tenant_id = $1 AND seq IS NOT NULL AND at >= $2),
           (SELECT head_seq FROM audit_chains WHERE tenant_id = $1)) AS k)
       SELECT bound.k, (SELECT hash FROM audit_log WHERE tenant_id = $1 AND seq = bound.k) AS hash FROM bound`,
      [tenant, cutoff],
    );
    const row = k.rows[0];
    const upTo = row?.k === null || row?.k === undefined ? 0 : Number(row.k);
    if (upTo <= 0 || row?.hash === null || row?.hash === undefined) return 0;
    const del = await tx.query(`DELETE FROM audit_log WHERE tenant_id = $1 AND seq IS NOT NULL AND seq <= $2`, [tenant, upTo]);
    await tx.query(
      `UPDATE audit_chains SET pruned_seq = $2, pruned_hash = $3, pruned_at = now() WHERE tenant_id = $1 AND pruned_seq < $2`,
      [tenant, upTo, row.hash],
    );
    return del.rowCount ?? 0;
  });
}
