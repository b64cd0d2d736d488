/**
 * SQL for the `definitions` aggregate as the API uses it: create, read, keyset list,
 * version-guarded update, guarded delete (refused while a live run pins the definition or
 * another definition of the tenant names it). Every write of a definition row records the
 * version it wrote in `definition_versions` in the same statement (see
 * ./definition-versions.ts for the reads).
 * Every statement is tenant-scoped: a row of another tenant reads as absent.
 */
import type { Pool } from 'pg';
import { encryptionEnabled, openJsonText, sealJsonText, type Sealed } from '../crypto';
import { rollback, withTransaction, type Queryable } from './transaction';
import { needsVerbatimStorage } from '@flowline/graph';
import { decodeJson } from '../json-codec';
import { decodeKeysetCursor, encodeKeysetCursor, type KeysetPosition } from './keyset-cursor';

/** Run statuses that pin a definition against deletion (anything not terminal). */
export const DEFINITION_PINNING_STATUSES = ['Scheduled', 'Pending', 'Running', 'WaitingForApproval', 'Cancelling'] as const;

export interface DefinitionRow {
  id: string;
  tenantId: string;
  name: string;
  description: string | null;
  kind: string;
  version: number;
  /** the document as submitted */
  graph: unknown;
  graphHash: string;
  nodeCount: number;
  /** false while disabled: new runs are refused, live ones go on */
  enabled: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** A definition list row: everything but the graph document. */
export type DefinitionListRow = Omit<DefinitionRow, 'graph'>;

export interface NewDefinition {
  /** the principal saving it (its version 1's author) @default null */
  createdBy?: string | null;
  id: string;
  tenantId: string;
  name: string;
  description: string | null;
  kind: string;
  /** JSON text of the document as submitted */
  graphJson: string;
  /** JSON text of the parsed `Graph` model of that document */
  planGraphJson: string;
  graphHash: string;
  nodeCount: number;
  /**
   * The definitions the graph names (lower-case ids, Subworkflow/Loop): each must exist in
   * the tenant when the row is written, else {@link DefinitionRefsMissingError}. Default none.
   */
  refs?: readonly string[];
}

/**
 * A definition write naming definitions that no longer exist in the tenant (one was deleted
 * between the caller's check and the write). `missing` lists them.
 */
export class DefinitionRefsMissingError extends Error {
  readonly code = 'DefinitionRefsMissing' as const;
  constructor(readonly missing: string[]) {
    super(`referenced definitions not found: ${missing.join(', ')}`);
    this.name = 'DefinitionRefsMissingError';
  }
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Which of `ids` name a definition of the tenant (one query; ids that cannot be a
 * definition id are simply absent). Returned lower-cased.
 */
export async function existingDefinitionIds(db: Queryable, tenantId: string, ids: readonly string[]): Promise<Set<string>> {
  const wanted = [...new Set(ids.filter((id) => UUID_RE.test(id)).map((id) => id.toLowerCase()))];
  if (wanted.length === 0) return new Set();
  const res = await db.query<{ id: string }>(`SELECT id FROM definitions WHERE tenant_id = $1 AND id = ANY($2::uuid[])`, [tenantId, wanted]);
  return new Set(res.rows.map((r) => r.id));
}

/** The ids among `refs` that name no definition of the tenant now. */
async function missingRefs(db: Queryable, tenantId: string, refs: readonly string[]): Promise<string[]> {
  const present = await existingDefinitionIds(db, tenantId, refs);
  return refs.filter((r) => !present.has(r.toLowerCase()));
}

/**
 * A CTE that key-share locks the tenant's definitions among `$refs` (so a concurrent delete
 * of one waits for this write, then sees it and refuses), and the guard that all exist.
 */
const refsGuard = (tenant: string, refs: string) => ({
  cte: `present AS (SELECT id FROM definitions WHERE tenant_id = ${tenant} AND id = ANY(${refs}::uuid[]) FOR KEY SHARE)`,
  check: `(SELECT count(*) FROM present) = cardinality(${refs}::uuid[])`,
});

/**
 * A data-modifying CTE that records each definition row returned by the CTE `from` as its
 * version in `definition_versions` (the graph and plan graph copied as stored: a sealed graph
 * stays sealed to `<id>@<version>`). Part of the writing statement, so the row and its version commit
 * together or not at all.
 */
const recordVersion = (from: string, createdBy: string) =>
  `recorded AS (INSERT INTO definition_versions (definition_id, tenant_id, version, name, description, kind, graph, plan_graph, graph_hash, node_count, created_at, created_by)
     SELECT id, tenant_id, version, name, description, kind, graph, plan_graph, graph_hash, node_count, updated_at, ${createdBy}::text FROM ${from})`;

export interface KeysetPage<T> {
  items: T[];
  nextCursor: string | null;
}

const COLUMNS = `id, tenant_id, name, description, kind, version, graph_hash, node_count, enabled, created_at, updated_at,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') AS created_key`;

/** A definitions row's columns as the driver returns them (everything but the graph documents). */
export interface DefinitionColumns {
  id: string;
  tenant_id: string;
  name: string;
  description: string | null;
  kind: string;
  version: number;
  graph_hash: string;
  node_count: number | null;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

interface RawRow extends DefinitionColumns {
  graph?: unknown;
  created_key: string;
}

/** The list row of a definitions row's columns. */
export function definitionListRow(r: DefinitionColumns): DefinitionListRow {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    name: r.name,
    description: r.description,
    kind: r.kind,
    version: r.version,
    graphHash: r.graph_hash,
    nodeCount: r.node_count ?? 0,
    enabled: r.enabled,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function toRow(r: RawRow): DefinitionRow {
  return { ...definitionListRow(r), graph: exactJson(openJsonText(r.graph as string | null, definitionGraphAt(r.id, r.version))) };
}

/**
 * Where a definition version's graph lives (the AAD of its ciphertext). A run pins the
 * definition's ciphertext as is (`runs.graph`/`plan_graph` copied in SQL, also by
 * flowline_create_child), so a run's graph is opened with the AAD of the definition row and
 * version it was copied from (`runs.definition_id`, `runs.definition_version`).
 */
export function definitionGraphAt(definitionId: string, version: number, column: 'graph' | 'plan_graph' = 'graph'): Sealed {
  return { table: 'definitions', column, row: `${definitionId}@${version}` };
}

/**
 * The stored plan_graph text for a parsed-model JSON text. Sealed, it carries beside the
 * envelope the clear node skeleton `nodes: [{ key, kind, maxAttempts }]` — structure only,
 * no config or prompt — which flowline_create_child reads to seed a child run's node rows.
 */
export function sealPlanGraph(planGraphJson: string, definitionId: string, version: number): string {
  // without a key it is stored as itself, unless jsonb would rewrite a number of it (then verbatim, with the skeleton)
  if (!encryptionEnabled() && !needsVerbatimStorage(planGraphJson)) return planGraphJson;
  const model = JSON.parse(planGraphJson) as { nodes?: Array<{ key: string; kind: string; maxAttempts?: number }> };
  const nodes = (model.nodes ?? []).map((n) => ({ key: n.key, kind: n.kind, maxAttempts: n.maxAttempts ?? 1 }));
  return sealJsonText(planGraphJson, definitionGraphAt(definitionId, version, 'plan_graph'), { nodes });
}

/** The stored graph and plan_graph of a definition version, as JSON texts to store. */
function sealGraphs(graphJson: string, planGraphJson: string, definitionId: string, version: number): [string, string] {
  return [sealJsonText(graphJson, definitionGraphAt(definitionId, version)), sealPlanGraph(planGraphJson, definitionId, version)];
}

/**
 * A jsonb column selected as `::text` (to open a sealed value), decoded by the codec
 * (numbers a double cannot hold stay exact, as `JsonNumber`), so documents round-trip
 * through the API unchanged.
 */
export function exactJson(text: string | null | undefined): unknown {
  return text === null || text === undefined ? null : decodeJson(text);
}

/** The cursor of definition and run pages (no tag: the first kind, kept as issued). */
export function encodePageCursor(createdKey: string, id: string): string {
  return encodeKeysetCursor('', createdKey, id);
}

/** Decodes a cursor made by {@link encodePageCursor}; null when malformed (see {@link decodeKeysetCursor}). */
export function decodePageCursor(cursor: string): KeysetPosition | null {
  return decodeKeysetCursor(cursor, '', (id) => UUID_RE.test(id));
}

/**
 * Copies a definition of the tenant under a new id and name, at version 1, with the same
 * graph, parsed model and hash. Null when the source is absent.
 */
export async function duplicateDefinition(
  db: Queryable,
  tenantId: string,
  sourceId: string,
  newId: string,
  nameOf: (sourceName: string) => string,
  /** the principal saving the copy (its version 1's author) */
  createdBy: string | null = null,
): Promise<DefinitionRow | null> {
  const sealed = encryptionEnabled();
  // with a key the ciphertexts are bound to the source row: read them to open and re-seal for the copy
  const src = await db.query<{ name: string; graph: string | null; plan_graph: string | null; version: number }>(
    `SELECT name, version, ${sealed ? 'graph::text AS graph, plan_graph::text AS plan_graph' : 'NULL AS graph, NULL AS plan_graph'}
     FROM definitions WHERE id = $1 AND tenant_id = $2`,
    [sourceId, tenantId],
  );
  const source = src.rows[0];
  if (!source) return null;
  if (sealed) {
    const [graph, plan] = sealGraphs(
      openJsonText(source.graph!, definitionGraphAt(sourceId, source.version)),
      openJsonText(source.plan_graph!, definitionGraphAt(sourceId, source.version, 'plan_graph')),
      newId,
      1,
    );
    const res = await db.query<RawRow>(
      `WITH copy AS (
         INSERT INTO definitions (id, tenant_id, name, description, kind, version, graph, plan_graph, graph_hash, node_count, refs,
                                  trigger_events, created_at, updated_at)
         SELECT $3, tenant_id, $4, description, kind, 1, $5::jsonb, $6::jsonb, graph_hash, node_count, refs, trigger_events, now(), now()
         FROM definitions WHERE id = $1 AND tenant_id = $2
         RETURNING *),
       ${recordVersion('copy', '$7')}
       SELECT ${COLUMNS}, graph::text AS graph FROM copy`,
      [sourceId, tenantId, newId, nameOf(source.name), graph, plan, createdBy],
    );
    const row = res.rows[0];
    return row ? toRow(row) : null;
  }
  const res = await db.query<RawRow>(
    `WITH copy AS (
       INSERT INTO definitions (id, tenant_id, name, description, kind, version, graph, plan_graph, graph_hash, node_count, refs,
                                trigger_events, created_at, updated_at)
       SELECT $3, tenant_id, $4, description, kind, 1, graph, plan_graph, graph_hash, node_count, refs, trigger_events, now(), now()
       FROM definitions WHERE id = $1 AND tenant_id = $2
       RETURNING *),
     ${recordVersion('copy', '$5')}
     SELECT ${COLUMNS}, graph::text AS graph FROM copy`,
    [sourceId, tenantId, newId, nameOf(source.name), createdBy],
  );
  const row = res.rows[0];
  return row ? toRow(row) : null;
}

/**
 * The event names and patterns a parsed graph's `triggers` listen for (its `trigger_events`),
 * read from the plain plan JSON before it is sealed.
 */
function triggerEventsOfPlan(planGraphJson: string): string[] {
  const plan = JSON.parse(planGraphJson) as { triggers?: Array<{ event?: unknown }> };
  const events = (Array.isArray(plan.triggers) ? plan.triggers : []).map((t) => t.event).filter((e): e is string => typeof e === 'string');
  return [...new Set(events)];
}

/** Inserts a definition at version 1. */
export async function insertDefinition(db: Queryable, d: NewDefinition): Promise<DefinitionRow> {
  const [graph, plan] = sealGraphs(d.graphJson, d.planGraphJson, d.id, 1);
  const refs = [...new Set((d.refs ?? []).map((r) => r.toLowerCase()))];
  const guard = refsGuard('$2', '$10');
  // Inputs: the row and its refs. Guard: every ref is a definition of the tenant (key-share locked).
  // Result: the row (and its version 1 recorded), or none.
  const res = await db.query<RawRow>(
    `WITH ${guard.cte},
     created AS (
       INSERT INTO definitions (id, tenant_id, name, description, kind, version, graph, plan_graph, graph_hash, node_count, refs,
                                trigger_events, created_at, updated_at)
       SELECT $1, $2, $3, $4, $5, 1, $6::jsonb, $7::jsonb, $8, $9, $10::uuid[], $11::text[], now(), now()
       WHERE ${guard.check}
       RETURNING *),
     ${recordVersion('created', '$12')}
     SELECT ${COLUMNS}, graph::text AS graph FROM created`,
    [d.id, d.tenantId, d.name, d.description, d.kind, graph, plan, d.graphHash, d.nodeCount, refs, triggerEventsOfPlan(d.planGraphJson), d.createdBy ?? null],
  );
  const row = res.rows[0];
  if (!row) throw new DefinitionRefsMissingError(await missingRefs(db, d.tenantId, refs));
  return toRow(row);
}

/** One definition of the tenant, with its graph; null when absent or another tenant's. */
export async function getDefinition(db: Queryable, tenantId: string, id: string): Promise<DefinitionRow | null> {
  const res = await db.query<RawRow>(`SELECT ${COLUMNS}, graph::text AS graph FROM definitions WHERE id = $1 AND tenant_id = $2`, [
    id,
    tenantId,
  ]);
  const row = res.rows[0];
  return row ? toRow(row) : null;
}

/**
 * The parsed graph model (`plan_graph`) of a definition of the tenant — what a run started
 * now would pin — with its version; null when absent or another tenant's.
 */
export async function getDefinitionPlanGraph(db: Queryable, tenantId: string, id: string): Promise<{ version: number; planGraph: unknown } | null> {
  const res = await db.query<{ version: number; plan_graph: string }>(
    `SELECT version, plan_graph::text AS plan_graph FROM definitions WHERE id = $1 AND tenant_id = $2`,
    [id, tenantId],
  );
  const row = res.rows[0];
  if (!row) return null;
  return { version: row.version, planGraph: exactJson(openJsonText(row.plan_graph, definitionGraphAt(id, row.version, 'plan_graph'))) };
}

/**
 * A page of the tenant's definitions, newest first, without graphs.
 * `after` is a decoded cursor; reads one row past `limit` to know whether a next page exists.
 */
export async function listDefinitions(
  db: Queryable,
  tenantId: string,
  limit: number,
  after: { createdKey: string; id: string } | null,
): Promise<KeysetPage<DefinitionListRow>> {
  const res = await db.query<RawRow>(
    `SELECT ${COLUMNS} FROM definitions
     WHERE tenant_id = $1
       AND ($2::timestamp IS NULL OR (created_at, id) < (($2::timestamp AT TIME ZONE 'UTC'), $3::uuid))
     ORDER BY created_at DESC, id DESC
     LIMIT $4`,
    [tenantId, after?.createdKey ?? null, after?.id ?? null, limit + 1],
  );
  const rows = res.rows.slice(0, limit);
  const last = rows[rows.length - 1];
  return {
    items: rows.map(definitionListRow),
    nextCursor: res.rows.length > limit && last ? encodePageCursor(last.created_key, last.id) : null,
  };
}

/**
 * Enables or disables a definition. Not a new version (the graph is unchanged), and
 * idempotent: setting the state it already has answers the row as it is.
 * @returns the row, or null when the tenant has no such definition
 */
export async function setDefinitionEnabled(db: Queryable, tenantId: string, id: string, enabled: boolean): Promise<DefinitionRow | null> {
  const res = await db.query<RawRow>(
    `WITH changed AS (UPDATE definitions SET enabled = $3 WHERE id = $1 AND tenant_id = $2 RETURNING *)
     SELECT ${COLUMNS}, graph::text AS graph FROM changed`,
    [id, tenantId, enabled],
  );
  const row = res.rows[0];
  return row ? toRow(row) : null;
}

export interface DefinitionPatch {
  /** the principal saving the new version (its author) @default null */
  createdBy?: string | null;
  name?: string;
  description?: string | null;
  kind?: string;
  graphJson?: string;
  planGraphJson?: string;
  graphHash?: string;
  nodeCount?: number;
  /** the definitions the new graph names (see {@link NewDefinition.refs}); with a new graph */
  refs?: readonly string[];
}

/**
 * Version-guarded update: applies `patch` and bumps version only where
 * `version = expectVersion`. Returns the new row, `'conflict'` when the row exists at
 * another version, or null when absent.
 */
export async function updateDefinition(
  db: Queryable,
  tenantId: string,
  id: string,
  expectVersion: number,
  patch: DefinitionPatch,
): Promise<DefinitionRow | 'conflict' | null> {
  let graphJson = patch.graphJson ?? null;
  let planGraphJson = patch.planGraphJson ?? null;
  if (encryptionEnabled()) {
    // version + 1 re-binds the graphs' AAD: seal the new ones, or re-seal the current ones
    if (graphJson === null || planGraphJson === null) {
      const g = await db.query<{ graph: string; plan_graph: string }>(
        `SELECT graph::text AS graph, plan_graph::text AS plan_graph FROM definitions WHERE id = $1 AND tenant_id = $2 AND version = $3`,
        [id, tenantId, expectVersion],
      );
      const cur = g.rows[0];
      if (cur) {
        graphJson ??= openJsonText(cur.graph, definitionGraphAt(id, expectVersion));
        planGraphJson ??= openJsonText(cur.plan_graph, definitionGraphAt(id, expectVersion, 'plan_graph'));
      }
    }
    if (graphJson !== null) graphJson = sealJsonText(graphJson, definitionGraphAt(id, expectVersion + 1));
    if (planGraphJson !== null) planGraphJson = sealPlanGraph(planGraphJson, id, expectVersion + 1);
  }
  const refs = patch.refs === undefined ? null : [...new Set(patch.refs.map((r) => r.toLowerCase()))];
  const guard = refsGuard('$2', 'COALESCE($12, ARRAY[]::uuid[])');
  // Inputs: the patch. Guard: the version read and every ref present. Result: the row at version + 1 (recorded), or none.
  const res = await db.query<RawRow>(
    `WITH ${guard.cte},
     updated AS (
     UPDATE definitions SET
       name = COALESCE($4, name),
       description = CASE WHEN $5::boolean THEN $6 ELSE description END,
       kind = COALESCE($7, kind),
       graph = COALESCE($8::jsonb, graph),
       graph_hash = COALESCE($9, graph_hash),
       node_count = COALESCE($10, node_count),
       plan_graph = COALESCE($11::jsonb, plan_graph),
       refs = COALESCE($12::uuid[], refs),
       trigger_events = COALESCE($13::text[], trigger_events),
       version = version + 1,
       updated_at = now()
     WHERE id = $1 AND tenant_id = $2 AND version = $3 AND ${guard.check}
     RETURNING *),
     ${recordVersion('updated', '$14')}
     SELECT ${COLUMNS}, graph::text AS graph FROM updated`,
    [
      id,
      tenantId,
      expectVersion,
      patch.name ?? null,
      patch.description !== undefined,
      patch.description ?? null,
      patch.kind ?? null,
      graphJson,
      patch.graphHash ?? null,
      patch.nodeCount ?? null,
      planGraphJson,
      refs,
      patch.planGraphJson === undefined ? null : triggerEventsOfPlan(patch.planGraphJson),
      patch.createdBy ?? null,
    ],
  );
  const row = res.rows[0];
  if (row) return toRow(row);
  const exists = await db.query<{ version: number }>(`SELECT version FROM definitions WHERE id = $1 AND tenant_id = $2`, [id, tenantId]);
  const current = exists.rows[0];
  if (!current) return null;
  if (current.version === expectVersion && refs !== null) {
    const missing = await missingRefs(db, tenantId, refs);
    if (missing.length > 0) throw new DefinitionRefsMissingError(missing);
  }
  return 'conflict';
}

/** What {@link deleteDefinition} did: deleted, or why not (a live run pins it, absent, other definitions name it). */
export type DeleteDefinitionResult = 'deleted' | 'inUse' | 'notFound' | { referencedBy: Array<{ id: string; name: string }> };

/**
 * Deletes a definition unless a live run pins it or another definition of the tenant names
 * it (Subworkflow/Loop; up to 20 of them are returned).
 * Locks the row first (FOR UPDATE) so it serialises with run creation, which holds the
 * row FOR SHARE: the live-run check below then sees every run committed before it.
 */
export async function deleteDefinition(
  pool: Pool,
  tenantId: string,
  id: string,
): Promise<DeleteDefinitionResult> {
  return withTransaction<DeleteDefinitionResult>(pool, async (tx) => {
    const locked = await tx.query(`SELECT 1 FROM definitions WHERE id = $1 AND tenant_id = $2 FOR UPDATE`, [id, tenantId]);
    if (!locked.rowCount) return rollback<DeleteDefinitionResult>('notFound');
    const live = await tx.query(
      `SELECT 1 FROM runs WHERE definition_id = $1 AND tenant_id = $2 AND status = ANY($3::text[]) LIMIT 1`,
      [id, tenantId, DEFINITION_PINNING_STATUSES],
    );
    if (live.rowCount) return rollback<DeleteDefinitionResult>('inUse');
    // after the row lock: a write naming this definition either committed before it (seen here) or waits and then finds it gone
    const referrers = await tx.query<{ id: string; name: string }>(
      `SELECT id, name FROM definitions WHERE tenant_id = $1 AND $2::uuid = ANY(refs) AND id <> $2::uuid ORDER BY created_at, id LIMIT 20`,
      [tenantId, id],
    );
    if (referrers.rowCount) return rollback<DeleteDefinitionResult>({ referencedBy: referrers.rows });
    await tx.query(`DELETE FROM definitions WHERE id = $1 AND tenant_id = $2`, [id, tenantId]);
    return 'deleted';
  });
}
