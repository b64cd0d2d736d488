/**
 * Managed API keys (`schema/api-keys.ts`). A secret never reaches this module: callers pass
 * its keyed hash (HMAC-SHA256 under the server's pepper), which is what is stored and what a
 * presented key is looked up by. Every read and write is tenant-scoped except
 * {@link resolveApiKeySecret}, which finds the tenant from the secret itself.
 */
import { decodeKeysetCursor, encodeKeysetCursor } from './keyset-cursor';
import type { Queryable, Tx } from './transaction';

/** What a key may touch, beyond its scopes (null members: unconstrained). */
export interface ApiKeyConstraints {
  definitionIds: string[] | null;
  cidrs: string[] | null;
}

/** A managed key as listed: never its secret. */
export interface ApiKeyRecord extends ApiKeyConstraints {
  id: string;
  tenantId: string;
  name: string;
  scopes: string[];
  owner: string;
  prefix: string;
  lastFour: string;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  rotatedAt: Date | null;
  lastUsedAt: Date | null;
  lastUsedAddress: string | null;
}

/** A key found by one of its secrets, with the end of that secret's rotation grace. */
export interface ResolvedApiKey extends ApiKeyRecord {
  /** when this secret stops working because the key was rotated (null: it is the current one) */
  secretExpiresAt: Date | null;
}

/** A new key: its record's members and the keyed hash of its secret. */
export interface ApiKeyInsert extends Pick<ApiKeyRecord, 'id' | 'tenantId' | 'name' | 'scopes' | 'definitionIds' | 'cidrs' | 'owner' | 'prefix' | 'lastFour' | 'expiresAt'> {
  hash: string;
}

interface RawKey {
  id: string;
  tenant_id: string;
  name: string;
  scopes: string[];
  definition_ids: string[] | null;
  cidrs: string[] | null;
  owner: string;
  prefix: string;
  last_four: string;
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
  rotated_at: Date | null;
  last_used_at: Date | null;
  last_used_address: string | null;
  created_key: string;
}

const COLUMNS = (t: string) => `${t}.id, ${t}.tenant_id, ${t}.name, ${t}.scopes, ${t}.definition_ids, ${t}.cidrs, ${t}.owner, ${t}.prefix,
  ${t}.last_four, ${t}.created_at, ${t}.expires_at, ${t}.revoked_at, ${t}.rotated_at, ${t}.last_used_at, ${t}.last_used_address,
  to_char(${t}.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') AS created_key`;

const toRecord = (r: RawKey): ApiKeyRecord => ({
  id: r.id,
  tenantId: r.tenant_id,
  name: r.name,
  scopes: r.scopes,
  definitionIds: r.definition_ids,
  cidrs: r.cidrs,
  owner: r.owner,
  prefix: r.prefix,
  lastFour: r.last_four,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  revokedAt: r.revoked_at,
  rotatedAt: r.rotated_at,
  lastUsedAt: r.last_used_at,
  lastUsedAddress: r.last_used_address,
});

/** Inserts a key and its first secret in one statement. */
export async function insertApiKey(db: Queryable, k: ApiKeyInsert): Promise<ApiKeyRecord> {
  const res = await db.query<RawKey>(
    `WITH k AS (
       INSERT INTO api_keys (id, tenant_id, name, scopes, definition_ids, cidrs, owner, prefix, last_four, expires_at)
       VALUES ($1, $2, $3, $4::text[], $5::text[], $6::text[], $7, $8, $9, $10) RETURNING *)
     , s AS (INSERT INTO api_key_secrets (hash, key_id, tenant_id) SELECT $11, id, tenant_id FROM k)
     SELECT ${COLUMNS('k')} FROM k`,
    [k.id, k.tenantId, k.name, k.scopes, k.definitionIds, k.cidrs, k.owner, k.prefix, k.lastFour, k.expiresAt, k.hash],
  );
  return toRecord(res.rows[0] as RawKey);
}

const CURSOR_TAG = 'k:';
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Decodes a key-list cursor; null when malformed. */
export const decodeApiKeyCursor = (cursor: string) => decodeKeysetCursor(cursor, CURSOR_TAG, (id) => UUID_RE.test(id));

/** A page of the tenant's keys (revoked ones included), newest first. */
export async function listApiKeys(
  db: Queryable,
  tenantId: string,
  limit: number,
  after: { createdKey: string; id: string } | null,
): Promise<{ items: ApiKeyRecord[]; nextCursor: string | null }> {
  const res = await db.query<RawKey>(
    `SELECT ${COLUMNS('k')} FROM api_keys k
     WHERE k.tenant_id = $1
       AND ($2::timestamp IS NULL OR (k.created_at, k.id) < (($2::timestamp AT TIME ZONE 'UTC'), $3::uuid))
     ORDER BY k.created_at DESC, k.id DESC
     LIMIT $4`,
    [tenantId, after?.createdKey ?? null, after?.id ?? null, limit + 1],
  );
  const rows = res.rows.slice(0, limit);
  const last = rows[rows.length - 1];
  return {
    items: rows.map(toRecord),
    nextCursor: res.rows.length > limit && last ? encodeKeysetCursor(CURSOR_TAG, last.created_key, last.id) : null,
  };
}

/** One of the tenant's keys; null when absent. */
export async function getApiKey(db: Queryable, tenantId: string, id: string): Promise<ApiKeyRecord | null> {
  const res = await db.query<RawKey>(`SELECT ${COLUMNS('k')} FROM api_keys k WHERE k.tenant_id = $1 AND k.id = $2`, [tenantId, id]);
  return res.rows[0] ? toRecord(res.rows[0]) : null;
}

/**
 * The live key one of whose secrets has keyed hash `hash`: not revoked, and the secret not
 * past its rotation grace (the key's own expiry is the caller's to judge, so it can answer
 * 401 from a cached copy too). Null when none.
 */
export async function resolveApiKeySecret(db: Queryable, hash: string): Promise<ResolvedApiKey | null> {
  const res = await db.query<RawKey & { secret_expires_at: Date | null }>(
    `SELECT ${COLUMNS('k')}, s.expires_at AS secret_expires_at
       FROM api_key_secrets s JOIN api_keys k ON k.id = s.key_id
      WHERE s.hash = $1 AND k.revoked_at IS NULL AND (s.expires_at IS NULL OR s.expires_at > now())`,
    [hash],
  );
  const r = res.rows[0];
  return r ? { ...toRecord(r), secretExpiresAt: r.secret_expires_at } : null;
}

/**
 * Gives a live key a new secret (`hash`). Its other secrets stay valid for `graceSeconds` more
 * at most (a secret already in a shorter grace keeps it; 0 ends them now) and the lapsed ones
 * are deleted. Null when the key is absent or revoked.
 */
export async function rotateApiKey(
  tx: Tx,
  tenantId: string,
  id: string,
  next: { hash: string; prefix: string; lastFour: string; graceSeconds: number },
): Promise<ApiKeyRecord | null> {
  const res = await tx.query<RawKey>(
    `UPDATE api_keys k SET prefix = $3, last_four = $4, rotated_at = now()
      WHERE k.tenant_id = $1 AND k.id = $2 AND k.revoked_at IS NULL
      RETURNING ${COLUMNS('k')}`,
    [tenantId, id, next.prefix, next.lastFour],
  );
  if (!res.rows[0]) return null;
  // the row lock taken above orders two rotations of one key: each sees the other's secret
  await tx.query(
    `UPDATE api_key_secrets SET expires_at = LEAST(COALESCE(expires_at, 'infinity'), now() + make_interval(secs => $2))
      WHERE key_id = $1`,
    [id, next.graceSeconds],
  );
  await tx.query(`DELETE FROM api_key_secrets WHERE key_id = $1 AND expires_at <= now()`, [id]);
  await tx.query(`INSERT INTO api_key_secrets (hash, key_id, tenant_id) VALUES ($1, $2, $3)`, [next.hash, id, tenantId]);
  return toRecord(res.rows[0]);
}

/**
 * Revokes a key: stamps `revoked_at` (kept from the first revocation) and deletes its
 * secrets. Null when the tenant has no such key.
 */
export async function revokeApiKey(db: Queryable, tenantId: string, id: string): Promise<ApiKeyRecord | null> {
  const res = await db.query<RawKey>(
    `WITH k AS (
       UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE tenant_id = $1 AND id = $2 RETURNING *)
     , s AS (DELETE FROM api_key_secrets WHERE key_id IN (SELECT id FROM k))
     SELECT ${COLUMNS('k')} FROM k`,
    [tenantId, id],
  );
  return res.rows[0] ? toRecord(res.rows[0]) : null;
}

/**
 * Records a use of the key from `address`, unless one was recorded less than `intervalS`
 * ago (guarded here, so replicas together write at most once per interval). True when written.
 */
export async function touchApiKey(db: Queryable, id: string, address: string | null, intervalS: number): Promise<boolean> {
  const res = await db.query(
    `UPDATE api_keys SET last_used_at = now(), last_used_address = $2
      WHERE id = $1 AND (last_used_at IS NULL OR last_used_at <= now() - make_interval(secs => $3))`,
    [id, address, intervalS],
  );
  return (res.rowCount ?? 0) > 0;
}

/** What a route names by id that belongs to one definition. */
export type DefinitionSubject = 'run' | 'waitpoint' | 'schedule';

const SUBJECT_SQL: Record<DefinitionSubject, string> = {
  run: `SELECT definition_id::text AS d FROM runs WHERE tenant_id = $1 AND id = $2::uuid`,
  waitpoint: `SELECT r.definition_id::text AS d FROM waitpoints w JOIN runs r ON r.id = w.run_id WHERE w.tenant_id = $1 AND w.id = $2::uuid`,
  schedule: `SELECT definition_id::text AS d FROM schedules WHERE tenant_id = $1 AND id = $2::uuid`,
};

/**
 * The definition a tenant's run, waitpoint or schedule belongs to (a constrained key's check);
 * null when the tenant has no such row (the route then answers its own 404). `id` must be a uuid.
 */
export async function definitionOfSubject(db: Queryable, tenantId: string, subject: DefinitionSubject, id: string): Promise<string | null> {
  const res = await db.query<{ d: string }>(SUBJECT_SQL[subject], [tenantId, id]);
  return res.rows[0]?.d ?? null;
}
