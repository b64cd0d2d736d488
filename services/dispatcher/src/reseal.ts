/**
 * The re-seal runner: moves stored values sealed with an older encryption key to the current
 * one, so the older key can be removed (see libs/db reseal.ts for the pass itself). Any
 * dispatcher may run it; an advisory lock keeps it to one at a time. Once no older key is in
 * use, a pass is one cheap read of the key registry.
 */
import type { Registry } from 'prom-client';
import { currentKeyId, olderKeysInUse, resealPass, staleValueCount, type Pool } from '@flowline/db';
import { metricsOn, runPasses, type Logger } from '@flowline/runtime';

export interface ResealMetrics {
  rowsLeft(n: number): void;
  resealed(n: number): void;
}

export const NO_RESEAL_METRICS: ResealMetrics = { rowsLeft() {}, resealed() {} };

export function createResealMetrics(registry: Registry): ResealMetrics {
  const m = metricsOn(registry);
  let left = 0;
  m.gauge('flowline_reseal_rows_left', 'stored values still sealed with an older encryption key (as of the last re-seal pass)', function () {
    this.set(left);
  });
  const done = m.counter('flowline_resealed_total', 'stored values re-sealed with the current encryption key');
  return {
    rowsLeft(n) {
      left = n;
    },
    resealed(n) {
      if (n > 0) done.inc(n);
    },
  };
}

export interface ResealDeps {
  pool: Pool;
  /** ENCRYPTION_RESEAL_INTERVAL_MS */
  intervalMs: number;
  /** ENCRYPTION_RESEAL_BATCH */
  batch: number;
  log: Logger;
  metrics: ResealMetrics;
}

/** One round: a pass when an older key is in use, then the count of what is left. */
export async function resealRound(d: ResealDeps, stopping: () => boolean = () => false): Promise<void> {
  if (!(await olderKeysInUse(d.pool))) {
    d.metrics.rowsLeft(0);
    return;
  }
  const startedAt = Date.now();
  let reported = 0;
  const pass = await resealPass(d.pool, {
    batch: d.batch,
    stopping,
    onProgress: (n) => {
      d.metrics.resealed(n - reported);
      reported = n;
    },
  });
  if (!pass.ran) {
    d.log.debug('re-seal: pass skipped, another dispatcher is re-sealing');
    return;
  }
  const left = await staleValueCount(d.pool);
  d.metrics.rowsLeft(left);
  for (const err of pass.errors) d.log.error({ code: err.code, details: err.details }, 're-seal: a stored value cannot be opened; it is left as it is');
  d.log.info({ resealed: pass.resealed, raced: pass.raced, unreadable: pass.unreadable, left, ms: Date.now() - startedAt }, 're-seal: pass done');
}

/** Starts the re-seal loop, or returns null when there is no encryption or the interval is 0. */
export function startReseal(d: ResealDeps): { stop(): Promise<void> } | null {
  if (currentKeyId() === null || d.intervalMs === 0) return null;
  return runPasses(
    async (stopping) => {
      await resealRound(d, stopping);
      return false;
    },
    { idleMs: d.intervalMs, logger: d.log, name: 'reseal', backoff: { initialMs: 1000, maxMs: 60_000 } },
  );
}
