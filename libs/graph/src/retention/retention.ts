/**
 * Retention of terminal runs: which runs the dispatcher's pruner may delete.
 *
 * A tenant keeps its terminal runs (Completed / Failed / Cancelled) for its retention in
 * whole days: the `TENANT_RETENTION_DAYS` entry naming it, else `RETENTION_DAYS`; 0 keeps
 * them forever. A run is expired when it finished strictly before `now − days`. Live runs
 * are never expired, whatever their age (the store also refuses a run still tied to a live
 * parent or child). Pure: the pruner gathers the tenants that hold terminal runs and deletes
 * what the cutoffs give.
 */
import { TERMINAL_RUN_STATUSES, type RunStatus } from '../model';
import { parseTenantList } from '../tenant-list';

/** One day, ms. */
export const DAY_MS = 86_400_000;

/** Longest retention an option may give, days (100 years). */
export const MAX_RETENTION_DAYS = 36_500;

/** The retention options, as validated at boot. */
export interface RetentionPolicy {
  /** `RETENTION_DAYS`: days a tenant not listed keeps its terminal runs; 0 = forever */
  defaultDays: number;
  /** `TENANT_RETENTION_DAYS`: per-tenant overrides, days; 0 = forever */
  tenantDays: Readonly<Record<string, number>>;
}

/** A tenant whose terminal runs finished before `cutoff` (epoch ms) are expired. */
export interface RetentionCutoff {
  tenantId: string;
  cutoff: number;
  days: number;
}

/** Thrown by {@link parseTenantRetention} for a malformed list. */
export class TenantRetentionError extends Error {
  readonly code = 'TenantRetentionInvalid';
  constructor(message: string) {
    super(message);
    this.name = 'TenantRetentionError';
  }
}

/**
 * Parses `TENANT_RETENTION_DAYS`: `tenant=days` pairs separated by commas (`acme=7,beta=90`),
 * days integers 0–{@link MAX_RETENTION_DAYS} (0 keeps that tenant's runs forever); an empty
 * text overrides no tenant.
 * @throws TenantRetentionError naming the bad entry
 */
export function parseTenantRetention(text: string): Record<string, number> {
  return parseTenantList(text, {
    valueName: 'days',
    outOfRange: (tenant, days) => (days > MAX_RETENTION_DAYS ? `retention of '${tenant}' must be 0–${MAX_RETENTION_DAYS} days` : null),
    fail: (message) => new TenantRetentionError(message),
  });
}

/** The retention of `tenantId`, days (0 = forever). */
export function retentionDaysOf(policy: RetentionPolicy, tenantId: string): number {
  return Object.hasOwn(policy.tenantDays, tenantId) ? policy.tenantDays[tenantId]! : policy.defaultDays;
}

/** Epoch ms before which `tenantId`'s terminal runs are expired at `now`, or null when it keeps them forever. */
export function retentionCutoff(policy: RetentionPolicy, tenantId: string, now: number): number | null {
  const days = retentionDaysOf(policy, tenantId);
  if (!Number.isInteger(days) || days <= 0) return null;
  return now - days * DAY_MS;
}

/** True when the policy can expire any run at all (some tenant has a retention). */
export function retentionEnabled(policy: RetentionPolicy): boolean {
  return policy.defaultDays > 0 || Object.values(policy.tenantDays).some((d) => d > 0);
}

/**
 * The cutoffs of one pruning pass: for each tenant holding terminal runs that has a
 * retention, in tenant order (each tenant once); tenants kept forever are left out.
 */
export function planRetention(policy: RetentionPolicy, tenants: readonly string[], now: number): RetentionCutoff[] {
  const out: RetentionCutoff[] = [];
  for (const tenantId of [...new Set(tenants)].sort()) {
    const cutoff = retentionCutoff(policy, tenantId, now);
    if (cutoff !== null) out.push({ tenantId, cutoff, days: retentionDaysOf(policy, tenantId) });
  }
  return out;
}

/** Whether a run is expired at `now`: terminal, finished, and finished strictly before its tenant's cutoff. */
export function isRunExpired(
  policy: RetentionPolicy,
  run: { tenantId: string; status: RunStatus; finishedAt: number | null },
  now: number,
): boolean {
  if (!TERMINAL_RUN_STATUSES.has(run.status) || run.finishedAt === null) return false;
  const cutoff = retentionCutoff(policy, run.tenantId, now);
  return cutoff !== null && run.finishedAt < cutoff;
}
