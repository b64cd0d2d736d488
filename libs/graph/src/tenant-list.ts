/**
 * The one reader of per-tenant override lists (`TENANT_WEIGHTS`, `TENANT_RETENTION_DAYS`,
 * `TENANT_MAX_PENDING_RUNS`): `tenant=<integer>` entries separated by commas, white space around
 * either side ignored, empty entries skipped, a tenant named at most once.
 */

/** How a list's values read and what it throws: the names and the range check differ per option. */
export interface TenantListRules {
  /** the value's name in the format message: `'x' is not tenant=<valueName>` */
  valueName: string;
  /** what is wrong with `value` for `tenant`, or null when it is in range */
  outOfRange(tenant: string, value: number): string | null;
  /** the error thrown for a bad entry, from its message */
  fail(message: string): Error;
}

/** Parses a `tenant=<integer>` list by `rules`; empty text: no entries. */
export function parseTenantList(text: string, rules: TenantListRules): Record<string, number> {
  const out: Record<string, number> = {};
  for (const raw of text.split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const m = /^([^=\s]+)\s*=\s*(\d+)$/.exec(entry);
    if (!m) throw rules.fail(`'${entry}' is not tenant=${rules.valueName}`);
    const tenant = m[1]!;
    const value = Number(m[2]);
    const wrong = rules.outOfRange(tenant, value);
    if (wrong !== null) throw rules.fail(wrong);
    // own members only: a tenant named like an Object member (`constructor`) is not already listed
    if (Object.hasOwn(out, tenant)) throw rules.fail(`tenant '${tenant}' is listed twice`);
    out[tenant] = value;
  }
  return out;
}
