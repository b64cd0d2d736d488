/**
 * SQL of a definition's version aliases (`definition_aliases`): list, upsert (every target
 * version must be a saved version of the definition), delete, and the map a start resolves.
 */
import type { AliasTarget } from '@flowline/graph';
import type { Queryable } from './transaction';

export interface DefinitionAliasRow {
  name: string;
  targets: AliasTarget[];
  updatedAt: Date;
}

/** The definition's aliases by name (tenant-scoped; empty for another tenant's definition). */
export async function listDefinitionAliases(db: Queryable, tenantId: string, definitionId: string): Promise<DefinitionAliasRow[]> {
  const res = await db.query<{ name: string; targets: AliasTarget[]; updated_at: Date }>(
    'SELECT name, targets, updated_at FROM definition_aliases WHERE definition_id = $1 AND tenant_id = $2 ORDER BY name',
    [definitionId, tenantId],
  );
  return res.rows.map((r) => ({ name: r.name, targets: r.targets, updatedAt: r.updated_at }));
}

/** The aliases as a start resolves them: name → targets. */
export async function definitionAliasMap(db: Queryable, tenantId: string, definitionId: string): Promise<Map<string, AliasTarget[]>> {
  return new Map((await listDefinitionAliases(db, tenantId, definitionId)).map((a) => [a.name, a.targets]));
}

export type PutAliasResult = { kind: 'saved'; alias: DefinitionAliasRow } | { kind: 'definitionNotFound' } | { kind: 'versionsMissing'; versions: number[] };

/*
 * Inputs: $1 definition, $2 tenant, $3 name, $4 targets (JSON), $5 target versions.
 * Guard: the tenant's definition, and every target version saved for it and not retired; else nothing is written.
 * Result: the alias as saved, the missing versions, and whether the definition exists.
 */
export async function putDefinitionAlias(db: Queryable, tenantId: string, definitionId: string, name: string, targets: AliasTarget[]): Promise<PutAliasResult> {
  const res = await db.query<{ found: boolean; missing: number[]; name: string | null; targets: AliasTarget[] | null; updated_at: Date | null }>(
    `WITH d AS (SELECT id FROM definitions WHERE id = $1 AND tenant_id = $2),
     missing AS (
       SELECT coalesce(array_agg(v ORDER BY v), '{}') AS versions FROM unnest($5::int[]) AS v
       WHERE NOT EXISTS (SELECT 1 FROM definition_versions dv WHERE dv.definition_id = $1 AND dv.tenant_id = $2 AND dv.version = v AND dv.retired_at IS NULL)),
     up AS (
       INSERT INTO definition_aliases (definition_id, tenant_id, name, targets, updated_at)
       SELECT d.id, $2, $3, $4::jsonb, now() FROM d, missing WHERE cardinality(missing.versions) = 0
       ON CONFLICT (definition_id, name) DO UPDATE SET targets = excluded.targets, updated_at = now()
       RETURNING name, targets, updated_at)
     SELECT EXISTS (SELECT 1 FROM d) AS found, (SELECT versions FROM missing) AS missing, up.name, up.targets, up.updated_at
     FROM (SELECT 1) one LEFT JOIN up ON true`,
    [definitionId, tenantId, name, JSON.stringify(targets), targets.map((t) => t.version)],
  );
  const r = res.rows[0]!;
  if (!r.found) return { kind: 'definitionNotFound' };
  if (r.name === null || r.targets === null || r.updated_at === null) return { kind: 'versionsMissing', versions: r.missing };
  return { kind: 'saved', alias: { name: r.name, targets: r.targets, updatedAt: r.updated_at } };
}

/** Deletes one alias; false when the tenant's definition has none of that name. */
export async function deleteDefinitionAlias(db: Queryable, tenantId: string, definitionId: string, name: string): Promise<boolean> {
  const res = await db.query('DELETE FROM definition_aliases WHERE definition_id = $1 AND tenant_id = $2 AND name = $3', [definitionId, tenantId, name]);
  return (res.rowCount ?? 0) > 0;
}

/** The definition's latest version and its aliases, as a start chooses its version from them. */
export interface StartVersionFacts {
  latest: number;
  aliases: Map<string, AliasTarget[]>;
}

/** The aliases of definition row `d` as one JSON object, name → targets (a select-list expression). */
export const ALIASES_OF_DEFINITION_SQL = `(SELECT jsonb_object_agg(a.name, a.targets) FROM definition_aliases a WHERE a.definition_id = d.id)`;

/** {@link StartVersionFacts} of a row's `version` and {@link ALIASES_OF_DEFINITION_SQL} columns. */
export function startVersionFactsOf(version: number, aliases: Record<string, AliasTarget[]> | null): StartVersionFacts {
  return { latest: version, aliases: new Map(Object.entries(aliases ?? {})) };
}

/**
 * What a start needs to pick its version, in one round trip: the definition's latest version
 * and its aliases; null when the tenant has no such definition.
 */
export async function startVersionFacts(db: Queryable, tenantId: string, definitionId: string): Promise<StartVersionFacts | null> {
  const res = await db.query<{ version: number; aliases: Record<string, AliasTarget[]> | null }>(
    `SELECT d.version, ${ALIASES_OF_DEFINITION_SQL} AS aliases FROM definitions d WHERE d.id = $1 AND d.tenant_id = $2`,
    [definitionId, tenantId],
  );
  const r = res.rows[0];
  return r ? startVersionFactsOf(r.version, r.aliases) : null;
}
