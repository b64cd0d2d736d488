/**
 * Reads of `definition_versions` (written by ./definitions.ts with each definition write):
 * a keyset page of a definition's versions without their graphs, newest first, and one
 * version with its graph. Tenant-scoped: another tenant's definition reads as absent.
 */
import { openJsonText } from '../crypto';
import { definitionGraphAt, exactJson, type KeysetPage } from './definitions';
import type { Pool } from 'pg';
import type { PinnedVersion } from './run-create';
import { TERMINAL_RUN_STATUSES_SQL } from './status-sql';
import { withTransaction, type Queryable } from './transaction';

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
  /** when it was retired, else null */
  retiredAt: Date | null;
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
  retired_at: Date | null;
  graph?: string;
}

const COLUMNS = `definition_id, version, name, description, kind, graph_hash, node_count, created_at, retired_at`;

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
    retiredAt: r.retired_at,
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
 * A page of a definition's saved versions in service (retired ones are hidden), newest first, without graphs; `before` is a
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
     WHERE definition_id = $1 AND tenant_id = $2 AND ($3::integer IS NULL OR version < $3) AND retired_at IS NULL
     ORDER BY version DESC
     LIMIT $4`,
    [definitionId, tenantId, before, limit + 1],
  );
  if (res.rows.length === 0 && !(await definitionExists(db, tenantId, definitionId))) return null;
  const rows = res.rows.slice(0, limit);
  const last = rows[rows.length - 1];
  return { items: rows.map(toSummary), nextCursor: res.rows.length > limit && last ? encodeVersionCursor(last.version) : null };
}

/** One saved version of a definition of the tenant, with its graph (a retired one too: history); null when absent. */
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
 * version copies it into each run it starts); null when the tenant has no such version, or it is retired.
 */
export async function storedVersionGraph(db: Queryable, tenantId: string, definitionId: string, version: number): Promise<{ graphText: string; graphHash: string } | null> {
  const res = await db.query<{ graph: string; graph_hash: string }>(
    `SELECT graph::text AS graph, graph_hash FROM definition_versions WHERE definition_id = $1 AND tenant_id = $2 AND version = $3 AND retired_at IS NULL`,
    [definitionId, tenantId, version],
  );
  const row = res.rows[0];
  return row ? { graphText: row.graph, graphHash: row.graph_hash } : null;
}

/** Why {@link storedVersionPin} cannot pin a version. */
export type VersionPinRefusal = 'absent' | 'noPlanGraph';

/**
 * A saved version as a run pins it without parsing (a schedule's alias, the dispatchers): its
 * graph and parsed plan graph exactly as stored (sealed to the definition and version) and its
 * hash. `absent`: no such version of the tenant, or retired; `noPlanGraph`: saved before versions
 * kept their parsed graph (only the latest one has it, on the definition row).
 */
export async function storedVersionPin(db: Queryable, tenantId: string, definitionId: string, version: number): Promise<PinnedVersion | VersionPinRefusal> {
  const res = await db.query<{ graph: string; plan_graph: string | null; graph_hash: string }>(
    `SELECT graph::text AS graph, plan_graph::text AS plan_graph, graph_hash FROM definition_versions
     WHERE definition_id = $1 AND tenant_id = $2 AND version = $3 AND retired_at IS NULL`,
    [definitionId, tenantId, version],
  );
  const row = res.rows[0];
  if (!row) return 'absent';
  if (row.plan_graph === null) return 'noPlanGraph';
  return { version, graphText: row.graph, planGraphText: row.plan_graph, graphHash: row.graph_hash };
}

/** What pins a version: live runs and schedules. */
export interface VersionPins {
  /** non-terminal runs pinned to the version */
  liveRuns: number;
  /** live runs parked: none of their nodes is Queued or Running (waiting on a person, a wait, a timer) */
  parkedRuns: number;
  /** schedules that start every run on the version */
  schedules: number;
  /** aliases with a target on the version */
  aliases: string[];
}

/*
 * Inputs: $1 definition, $2 tenant, $3 version.
 * Result: the counts of VersionPins (runs by the (definition, version) they pinned).
 */
async function versionPins(db: Queryable, tenantId: string, definitionId: string, version: number): Promise<VersionPins> {
  const res = await db.query<{ live: number; parked: number; schedules: number; aliases: string[] }>(
    `SELECT
       (SELECT count(*)::int FROM runs r WHERE r.definition_id = $1 AND r.tenant_id = $2 AND r.definition_version = $3 AND r.status NOT IN (${TERMINAL_RUN_STATUSES_SQL})) AS live,
       (SELECT count(*)::int FROM runs r WHERE r.definition_id = $1 AND r.tenant_id = $2 AND r.definition_version = $3 AND r.status NOT IN (${TERMINAL_RUN_STATUSES_SQL})
          AND NOT EXISTS (SELECT 1 FROM node_runs n WHERE n.run_id = r.id AND n.status IN ('Queued', 'Running'))) AS parked,
       (SELECT count(*)::int FROM schedules s WHERE s.definition_id = $1 AND s.tenant_id = $2 AND s.definition_version = $3) AS schedules,
       (SELECT coalesce(array_agg(DISTINCT a.name ORDER BY a.name), '{}') FROM definition_aliases a, jsonb_array_elements(a.targets) t
          WHERE a.definition_id = $1 AND a.tenant_id = $2 AND (t->>'version')::int = $3) AS aliases`,
    [definitionId, tenantId, version],
  );
  const r = res.rows[0]!;
  return { liveRuns: r.live, parkedRuns: r.parked, schedules: r.schedules, aliases: r.aliases };
}

/** What pins a saved version of the tenant's definition now; null when the tenant has no such version. */
export async function definitionVersionPins(db: Queryable, tenantId: string, definitionId: string, version: number): Promise<VersionPins | null> {
  const v = await db.query('SELECT 1 FROM definition_versions WHERE definition_id = $1 AND tenant_id = $2 AND version = $3', [definitionId, tenantId, version]);
  if (!v.rowCount) return null;
  return versionPins(db, tenantId, definitionId, version);
}

export type RetireVersionResult =
  | { kind: 'retired'; retiredAt: Date }
  | { kind: 'notFound' }
  | { kind: 'latest'; latest: number }
  | { kind: 'pinned'; pins: VersionPins };

/**
 * Retires a saved version: refused while it is the definition's latest (a start without a
 * version runs it), or while live runs, schedules or aliases pin it (`pinned`, with the
 * counts); otherwise `retired_at` is set (kept when already retired: a retry answers the
 * same). Under the definition row's lock (FOR UPDATE): run creation holds it FOR SHARE, so the
 * live-run count sees every run committed before it and no start pins the version meanwhile.
 */
export async function retireDefinitionVersion(pool: Pool, tenantId: string, definitionId: string, version: number): Promise<RetireVersionResult> {
  return withTransaction(pool, async (tx) => {
    const def = await tx.query<{ version: number }>('SELECT version FROM definitions WHERE id = $1 AND tenant_id = $2 FOR UPDATE', [definitionId, tenantId]);
    const d = def.rows[0];
    if (!d) return { kind: 'notFound' as const };
    const v = await tx.query<{ retired_at: Date | null }>('SELECT retired_at FROM definition_versions WHERE definition_id = $1 AND tenant_id = $2 AND version = $3 FOR UPDATE', [definitionId, tenantId, version]);
    const row = v.rows[0];
    if (!row) return { kind: 'notFound' as const };
    if (row.retired_at !== null) return { kind: 'retired' as const, retiredAt: row.retired_at };
    if (version === d.version) return { kind: 'latest' as const, latest: d.version };
    const pins = await versionPins(tx, tenantId, definitionId, version);
    if (pins.liveRuns > 0 || pins.schedules > 0 || pins.aliases.length > 0) return { kind: 'pinned' as const, pins };
    const res = await tx.query<{ retired_at: Date }>(
      'UPDATE definition_versions SET retired_at = now() WHERE definition_id = $1 AND tenant_id = $2 AND version = $3 RETURNING retired_at',
      [definitionId, tenantId, version],
    );
    return { kind: 'retired' as const, retiredAt: res.rows[0]!.retired_at };
  });
}
