/**
 * The version each Subworkflow or Map child of a batch of plans is created at, chosen before the
 * batch is applied (libs/graph `childVersion`: the node's pin, else the parent's alias when the
 * child definition has it, else `current`). One read for the whole batch: the parents' aliases
 * and the child definitions' latest versions and aliases. `flowline_create_child` then copies the
 * chosen version's stored graphs, or fails the child with the reason.
 */
import { childVersion, type AliasTarget } from '@flowline/graph';
import type { ApplyItem } from './run-apply';
import type { Queryable } from './transaction';

/** What a child is created at: a version (and the alias that chose it), or why it cannot start. */
export type ChildVersionChoice = { version: number; alias: string | null } | { refused: string };

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/*
 * Inputs: $1 parent run ids, $2 child definition ids (uuids). Result: each parent's version alias,
 * and each definition's tenant, latest version and aliases (name → targets).
 */
const FACTS_SQL = `SELECT
  (SELECT jsonb_object_agg(id, jsonb_build_object('alias', version_alias, 'tenant', tenant_id)) FROM runs WHERE id = ANY($1::uuid[])) AS parents,
  (SELECT jsonb_object_agg(d.id, jsonb_build_object('tenant', d.tenant_id, 'latest', d.version,
     'aliases', (SELECT jsonb_object_agg(a.name, a.targets) FROM definition_aliases a WHERE a.definition_id = d.id)))
   FROM definitions d WHERE d.id = ANY($2::uuid[])) AS defs`;

interface DefFacts {
  tenant: string;
  latest: number;
  aliases: Record<string, AliasTarget[]> | null;
}

/** The version of every child the plans start, by child run id (none for a definition that is gone: the SQL fails that child). */
export async function chooseChildVersions(db: Queryable, items: readonly ApplyItem[]): Promise<Map<string, ChildVersionChoice>> {
  const chosen = new Map<string, ChildVersionChoice>();
  const starting = items.filter((i) => i.plan.startChildren.length > 0);
  if (starting.length === 0) return chosen;
  const defIds = [...new Set(starting.flatMap((i) => i.plan.startChildren.map((c) => c.definitionId.toLowerCase())).filter((id) => UUID_RE.test(id)))];
  const res = await db.query<{ parents: Record<string, { alias: string | null; tenant: string }> | null; defs: Record<string, DefFacts> | null }>(FACTS_SQL, [
    starting.map((i) => i.snapshot.run.id),
    defIds,
  ]);
  const parents = res.rows[0]?.parents ?? {};
  const defs = res.rows[0]?.defs ?? {};
  for (const item of starting) {
    const parent = parents[item.snapshot.run.id];
    for (const c of item.plan.startChildren) {
      const def = defs[c.definitionId.toLowerCase()];
      // another tenant's definition reads as gone, as in flowline_create_child
      if (!def || !parent || def.tenant !== parent.tenant) continue;
      const aliases = new Map(Object.entries(def.aliases ?? {}));
      const v = childVersion(c.pin ?? {}, parent.alias, aliases, def.latest, [Math.random() * 100, Math.random() * 100]);
      chosen.set(c.childRunId, v.ok ? { version: v.version, alias: v.alias } : { refused: `the child definition has no alias '${v.alias}'` });
    }
  }
  return chosen;
}
