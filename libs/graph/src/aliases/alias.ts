/**
 * Version aliases of a definition: which saved version a start runs. `current` is what a start
 * naming no version uses (absent: the latest version); a named alias (`canary`, …) lists weighted
 * targets `[{version, percent}]`. Percents sum to at most 100; the starts an alias does not place
 * fall to `current`, and those `current` does not place to the latest version — so a canary is
 * `canary: [{version: 7, percent: 10}]` and rollback is moving `current`. Pure: the caller rolls
 * the dice (`roll` in [0, 100)).
 */
import type { Issue } from '../model';

export const CURRENT_ALIAS = 'current';
export const ALIAS_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
/** Most targets one alias may list. */
export const MAX_ALIAS_TARGETS = 10;

export interface AliasTarget {
  version: number;
  /** share of the starts through the alias, in percent (0 < percent ≤ 100) */
  percent: number;
}

/** A body of `PUT …/aliases/{name}`: one version (all starts), or weighted targets. */
export type AliasBody = { version: number } | { targets: AliasTarget[] };

/** The targets an alias body sets, or the keyed issues that refuse it. */
export function aliasTargetsOf(body: AliasBody): { ok: true; targets: AliasTarget[] } | { ok: false; issues: Issue[] } {
  const targets = 'version' in body ? [{ version: body.version, percent: 100 }] : body.targets;
  const issues: Issue[] = [];
  if (targets.length === 0) issues.push({ key: 'targets', message: 'must list at least one version' });
  if (targets.length > MAX_ALIAS_TARGETS) issues.push({ key: 'targets', message: `at most ${MAX_ALIAS_TARGETS} versions` });
  const seen = new Set<number>();
  targets.forEach((t, i) => {
    if (!Number.isInteger(t.version) || t.version < 1) issues.push({ key: `targets.${i}.version`, message: 'must be a positive integer' });
    if (!(t.percent > 0 && t.percent <= 100)) issues.push({ key: `targets.${i}.percent`, message: 'must be more than 0 and at most 100' });
    if (seen.has(t.version)) issues.push({ key: `targets.${i}.version`, message: `version ${t.version} is listed twice` });
    seen.add(t.version);
  });
  const total = targets.reduce((s, t) => s + t.percent, 0);
  if (total > 100) issues.push({ key: 'targets', message: `percents sum to ${total}, more than 100` });
  return issues.length > 0 ? { ok: false, issues } : { ok: true, targets: targets.map((t) => ({ version: t.version, percent: t.percent })) };
}

/** The version `targets` place a start rolling `roll` (in [0, 100)) on, or null when it falls past them. */
export function pickTarget(targets: readonly AliasTarget[], roll: number): number | null {
  let upTo = 0;
  for (const t of targets) {
    upTo += t.percent;
    if (roll < upTo) return t.version;
  }
  return null;
}

/**
 * The version a start runs: `alias` (default `current`) resolved over the stored aliases, its
 * rest falling to `current` and `current`'s rest to `latest`. Two independent rolls, one per
 * alias consulted. Null when `alias` names no stored alias (other than `current`).
 */
export function resolveAlias(
  aliases: ReadonlyMap<string, readonly AliasTarget[]>,
  alias: string,
  latest: number,
  rolls: readonly [number, number],
): number | null {
  const current = (roll: number) => pickTarget(aliases.get(CURRENT_ALIAS) ?? [], roll) ?? latest;
  if (alias === CURRENT_ALIAS) return current(rolls[0]);
  const targets = aliases.get(alias);
  if (!targets) return null;
  return pickTarget(targets, rolls[0]) ?? current(rolls[1]);
}

/** What a Subworkflow or Map node pins in its config (`version` or `alias`, not both). */
export interface ChildNodePin {
  version?: number;
  alias?: string;
}

/** The version a child run is created at, or why none: the alias the rule chose is not the child definition's. */
export type ChildVersion = { ok: true; version: number; alias: string | null } | { ok: false; alias: string };

/**
 * The version of a Subworkflow or Map child: the node's pinned `version`, else its pinned
 * `alias`, else the alias the parent run went through when the child definition has one of that
 * name (the parent's pinned choice carries down: a `canary` parent runs `canary` children), else
 * `current` — resolved like a start ({@link resolveAlias}). A node's alias the child definition
 * lacks is refused (`ok: false`), never silently replaced.
 */
export function childVersion(
  pin: ChildNodePin,
  parentAlias: string | null,
  aliases: ReadonlyMap<string, readonly AliasTarget[]>,
  latest: number,
  rolls: readonly [number, number],
): ChildVersion {
  if (pin.version !== undefined) return { ok: true, version: pin.version, alias: null };
  const alias = pin.alias ?? (parentAlias !== null && aliases.has(parentAlias) ? parentAlias : CURRENT_ALIAS);
  const version = resolveAlias(aliases, alias, latest, rolls);
  return version === null ? { ok: false, alias } : { ok: true, version, alias };
}
