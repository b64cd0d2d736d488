/**
 * The retention pruner: every RETENTION_INTERVAL_MS, one replica at a time (a
 * Postgres session try-lock; the others skip the pass) deletes the expired terminal runs of
 * every tenant with a retention (libs/graph `planRetention` decides the cutoffs from
 * RETENTION_DAYS / TENANT_RETENTION_DAYS), RETENTION_BATCH_SIZE runs per statement, each
 * statement its own short transaction that skips rows others hold, with a pause of
 * RETENTION_BATCH_PAUSE_MS between batches so the tick loops keep the database. Counts go to
 * `flowline_runs_pruned_total{tenant}` and one info line per pass.
 */
import type { Pool } from 'pg';
import type { Registry } from 'prom-client';
import { pruneExpiredRuns, tenantsWithTerminalRuns, withRetentionLock, type PruneCounts } from '@flowline/db';
import { parseTenantRetention, planRetention, retentionEnabled, type RetentionPolicy } from '@flowline/graph';
import { metricsOn, runPasses, type Logger } from '@flowline/runtime';
import type { DispatcherConfig } from './config';

/** The retention options of a validated config. */
export function retentionPolicyOf(c: Pick<DispatcherConfig, 'RETENTION_DAYS' | 'TENANT_RETENTION_DAYS'>): RetentionPolicy {
  return { defaultDays: c.RETENTION_DAYS, tenantDays: parseTenantRetention(c.TENANT_RETENTION_DAYS) };
}

/** Where the pruner reports what it deleted. */
export interface RetentionMetrics {
  pruned(tenantId: string, runs: number): void;
}

export const NO_RETENTION_METRICS: RetentionMetrics = { pruned() {} };

/** Registers `flowline_runs_pruned_total{tenant}` on `registry`. */
export function createRetentionMetrics(registry: Registry): RetentionMetrics {
  const counter = metricsOn(registry).counter(
    'flowline_runs_pruned_total',
    'terminal runs deleted by retention (with their events, node runs, intents, results and messages), by tenant',
    ['tenant'],
  );
  return {
    pruned(tenantId, runs) {
      if (runs > 0) counter.inc({ tenant: tenantId }, runs);
    },
  };
}

export interface RetentionDeps {
  pool: Pool;
  policy: RetentionPolicy;
  /** RETENTION_BATCH_SIZE */
  batchSize: number;
  /** RETENTION_BATCH_PAUSE_MS */
  batchPauseMs: number;
  log: Logger;
  metrics: RetentionMetrics;
  /** @default Date.now */
  now?: () => number;
  /** asked between batches: true ends the pass early (shutdown) */
  stopping?: () => boolean;
}

/** What one pass did: null when another replica held the lock. */
export interface PassResult {
  tenants: number;
  batches: number;
  totals: PruneCounts;
  byTenant: Record<string, number>;
}

const zero = (): PruneCounts => ({ runs: 0, events: 0, nodeRuns: 0, intents: 0, messages: 0, conversations: 0 });

/** One pruning pass over every tenant with a retention (see the module comment). */
export async function prunePass(d: RetentionDeps): Promise<PassResult | null> {
  const startedAt = Date.now();
  const result = await withRetentionLock(d.pool, async (client) => {
    const now = (d.now ?? Date.now)();
    const plan = planRetention(d.policy, await tenantsWithTerminalRuns(client), now);
    const totals = zero();
    const byTenant: Record<string, number> = {};
    let batches = 0;
    for (const { tenantId, cutoff } of plan) {
      for (;;) {
        if (d.stopping?.()) break;
        const batch = await pruneExpiredRuns(client, tenantId, new Date(cutoff), d.batchSize);
        batches++;
        for (const k of Object.keys(totals) as (keyof PruneCounts)[]) totals[k] += batch[k];
        if (batch.runs > 0) {
          byTenant[tenantId] = (byTenant[tenantId] ?? 0) + batch.runs;
          d.metrics.pruned(tenantId, batch.runs);
        }
        if (batch.runs < d.batchSize) break;
        if (d.batchPauseMs > 0) await new Promise((resolve) => setTimeout(resolve, d.batchPauseMs));
      }
    }
    return { tenants: plan.length, batches, totals, byTenant };
  });
  if (result === null) d.log.debug('retention: pass skipped, another dispatcher is pruning');
  else d.log.info({ ...result.totals, tenants: result.tenants, batches: result.batches, byTenant: result.byTenant, ms: Date.now() - startedAt }, 'retention: pass done');
  return result;
}

/**
 * Starts the pruner loop (a first pass at once, then every `intervalMs`), or returns null
 * without starting anything when no tenant has a retention.
 */
export function startRetention(d: RetentionDeps & { intervalMs: number }): { stop(): Promise<void> } | null {
  if (!retentionEnabled(d.policy)) {
    d.log.info('retention off: RETENTION_DAYS and TENANT_RETENTION_DAYS keep every run');
    return null;
  }
  const loop = runPasses(
    async (stopping) => {
      await prunePass({ ...d, stopping });
      return false;
    },
    { idleMs: d.intervalMs, logger: d.log, name: 'retention', backoff: { initialMs: 1000, maxMs: 60_000 } },
  );
  d.log.info({ defaultDays: d.policy.defaultDays, tenantDays: d.policy.tenantDays, intervalMs: d.intervalMs, batchSize: d.batchSize }, 'retention on');
  return loop;
}
