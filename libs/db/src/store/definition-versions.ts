/**
 * Reads of `definition_versions` (written by ./definitions.ts with each definition write):
 * a keyset page of a definition's versions without their graphs, newest first, and one
 * version with its graph. Tenant-scoped: another tenant's definition reads as absent.
 */
import { openJsonText } from '../crypto';
import { definitionGraphAt, exactJson, type KeysetPage } from './definitions';
import type { Queryable } from './transaction';

/** One saved version of a definition, without its graph. */
export interface DefinitionVersionSummaryRow {
  definitionId: string;
  version: number;
  name: string;
  description: string | null;
  kind: string;
  graphHash: string;
  nodeCount: number;
  /** when this version was saved */
  createdAt: Date;
}

/** One saved version of a definition with its graph (the document as submitted). */
export interface DefinitionVersionRow extends DefinitionVersionSummaryRow {
  graph: unknown;
}

interface RawVersion {
  definition_id: string;
  version: number;
  name: string;
  description: string | null;
  kind: string;
  graph_hash: string;
  node_count: number;
  created_at: Date;
  graph?: string;
}

const COLUMNS = `definition_id, version, name, description, kind, graph_hash, node_count, created_at`;

function toSummary(r: RawVersion): DefinitionVersionSummaryRow {
  return {
    definitionId: r.definition_id,
    version: r.version,
    name: r.name,
    description: r.description,
    kind: r.kind,
    graphHash: r.graph_hash,
    nodeCount: r.node_count,
    createdAt: r.created_at,
  };
}

/** The cursor after a page ending at `version` (versions page newest first). */
export function encodeVersionCursor(version: number): string {
  return Buffer.from(`v${version}`, 'utf8').toString('base64url');
}

/** Decodes a cursor made by {@link encodeVersionCursor}; null when malformed. */
export function decodeVersionCursor(cursor: string): number | null {
  const m = /^v([1-9]\d{0,9})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  const n = m?.[1] ? Number(m[1]) : NaN;
  return Number.isSafeInteger(n) && n <= 2_147_483_647 ? n : null;
}

async function definitionExists(db: Queryable, tenantId: string, id: string): Promise<boolean> {
  const res = await db.query(`SELECT 1 FROM definitions WHERE id = $1 AND tenant_id = $2`, [id, tenantId]);
  return (res.rowCount ?? 0) > 0;
}

/**
 * A page of a definition's saved versions, newest first, without graphs; `before` is a
 * version from a decoded cursor (the page holds lower versions). Null when the definition
 * is absent or another tenant's. Reads one row past `limit` to know whether a next page exists.
 */
export async function listDefinitionVersions(
  db: Queryable,
  tenantId: string,
  definitionId: string,
  limit: number,
  before: number | null,
): Promise<KeysetPage<DefinitionVersionSummaryRow> | null> {
  const res = await db.query<RawVersion>(
    `SELECT ${COLUMNS} FROM definition_versions
     WHERE definition_id = $1 AND tenant_id = $2 AND ($3::integer IS NULL OR version < $3)
     ORDER BY version DESC
     LIMIT $4`,
    [definitionId, tenantId, before, limit + 1],
  );
  if (res.rows.length === 0 && !(await definitionExists(db, tenantId, definitionId))) return null;
  const rows = res.rows.slice(0, limit);
  const last = rows[rows.length - 1];
  return { items: rows.map(toSummary), nextCursor: res.rows.length > limit && last ? encodeVersionCursor(last.version) : null };
}

/** One saved version of a definition of the tenant, with its graph; null when absent. */
export async function getDefinitionVersion(db: Queryable, tenantId: string, definitionId: string, version: number): Promise<DefinitionVersionRow | null> {
  const res = await db.query<RawVersion>(
    `SELECT ${COLUMNS}, graph::text AS graph FROM definition_versions WHERE definition_id = $1 AND tenant_id = $2 AND version = $3`,
    [definitionId, tenantId, version],
  );
  const row = res.rows[0];
  if (!row) return null;
  return { ...toSummary(row), graph: exactJson(openJsonText(row.graph ?? null, definitionGraphAt(definitionId, version))) };
}

/**
 * A saved version's graph exactly as stored (sealed to the definition and version under
 * ENCRYPTION_KEY) and its hash, for a copy that stays bound to them (a schedule pinning the
 * version copies it into each run it starts); null when the tenant has no such version.
 */
export async function storedVersionGraph(db: Queryable, tenantId: string, definitionId: string, version: number): Promise<{ graphText: string; graphHash: string } | null> {
  const res = await db.query<{ graph: string; graph_hash: string }>(
    `SELECT graph::text AS graph, graph_hash FROM definition_versions WHERE definition_id = $1 AND tenant_id = $2 AND version = $3`,
    [definitionId, tenantId, version],
  );
  const row = res.rows[0];
  return row ? { graphText: row.graph, graphHash: row.graph_hash } : null;
}
