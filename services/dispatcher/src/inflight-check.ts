/**
 * Heals lost transport (ARCHITECTURE principle 1): every committed Queued/Running lane node
 * of the given shards is compared with its BullMQ job. What a job's fate means — an outcome,
 * a start, nothing, or (job missing) a confirmed cancel or the same job put back on its lane —
 * is decided by libs/graph (`inflightVerdict`, `missingJobRemedy`); this check reads the fates
 * and hands the verdicts to the inbox and the dispatch window. A missing job the dispatch
 * window holds is not missing (it waits there by design).
 */
import type { RedisConnection } from '@flowline/queue';
import { inflightVerdict, missingJobRemedy } from '@flowline/graph';
import type { Logger } from 'pino';
import type { DispatchStore } from './store';
import type { PendingWork } from './pending-work';
import { probeJob } from './job-probe';
import type { TenantWork } from './release-window';

export interface InflightCheckDeps {
  store: DispatchStore;
  redis: RedisConnection;
  prefix: string;
  pending: PendingWork;
  /** hands work to the dispatch window */
  enqueue(work: TenantWork[]): Promise<void>;
  /** which invocations wait in the dispatch window (not on their lane yet, by design) */
  heldAmong(invocationIds: string[]): Promise<Set<string>>;
  defaultTimeoutMs: number;
  log: Logger;
}

/** Checks the in-flight work of `shards`; returns how many invocations needed healing. */
export async function checkInflight(d: InflightCheckDeps, shards: number[]): Promise<number> {
  if (shards.length === 0) return 0;
  const rows = await d.store.inflight(shards);
  const absent: typeof rows = [];
  let healed = 0;
  await Promise.all(
    rows.map(async (row) => {
      d.pending.rememberInvocation(row.invocationId, { runId: row.runId, nodeKey: row.nodeKey });
      if (d.pending.hasResult(row.runId, row.invocationId)) return;
      const verdict = inflightVerdict(row, await probeJob(d.redis, d.prefix, row.invocationId), Date.now());
      if (verdict.kind === 'missing') absent.push(row);
      else if (verdict.kind === 'result') d.pending.addResult(row.runId, verdict.result);
      else if (verdict.kind === 'started') d.pending.addStarted(row.runId, verdict.started);
      if (verdict.kind === 'result' || verdict.kind === 'started') healed++;
    }),
  );
  const held = absent.length > 0 ? await d.heldAmong(absent.map((r) => r.invocationId)) : new Set<string>();
  const missing = absent.filter((r) => !held.has(r.invocationId));
  if (missing.length > 0) {
    const snapshots = await d.store.loadSnapshots([...new Set(missing.map((m) => m.runId))]);
    const now = Date.now();
    const items: TenantWork[] = [];
    for (const m of missing) {
      const remedy = missingJobRemedy(snapshots.find((s) => s.run.id === m.runId), m, d.defaultTimeoutMs, now);
      if (remedy.kind === 'result') d.pending.addResult(m.runId, remedy.result);
      else if (remedy.kind === 'enqueue') items.push({ tenantId: remedy.tenantId, priority: remedy.priority, item: remedy.item });
    }
    await d.enqueue(items);
    d.log.info({ count: items.length }, 're-enqueued in-flight work missing from BullMQ');
    healed += items.length;
  }
  return healed;
}
