/**
 * Heals lost transport (ARCHITECTURE principle 1): every committed Queued/Running
 * lane node of the given shards is compared with its BullMQ job.
 * - job missing and not held by the dispatch window (Redis flushed, add lost after commit,
 *   a releasing dispatcher died between its pop and its add) → held again, SAME invocation id;
 *   on a Cancelling run nothing is enqueued: the job is gone, so the cancel is confirmed;
 * - job failed (worker died: stalled with maxStalledCount 0, or threw) → Interrupted result;
 * - job completed → its return value is the result;
 * - job started but its lock lapsed (worker died; BullMQ would notice only on a
 *   surviving worker's stalled check) → Interrupted result;
 * - job active while the row reads Queued → a start (on the llm lane only once the
 *   worker reported its admission; a job waiting for provider capacity is left alone).
 */
import type { RedisConnection } from '@flowline/queue';
import { inflightWorkItem, interruptedResult, withdrawnResult } from '@flowline/graph';
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
      const fate = await probeJob(d.redis, d.prefix, row.invocationId);
      switch (fate.state) {
        case 'missing':
          absent.push(row);
          return;
        case 'completed':
          d.pending.addResult(row.runId, { invocationId: row.invocationId, nodeKey: row.nodeKey, outcome: fate.ret.outcome });
          break;
        case 'failed':
          d.pending.addResult(row.runId, interruptedResult(row.invocationId, row.nodeKey, fate.reason, fate.finishedOn));
          break;
        case 'orphaned':
          d.pending.addResult(row.runId, interruptedResult(row.invocationId, row.nodeKey, 'the worker holding the job is gone', Date.now()));
          break;
        case 'running':
          if (row.status !== 'Queued') return;
          d.pending.addStarted(row.runId, { invocationId: row.invocationId, nodeKey: row.nodeKey, at: fate.startedAt });
          break;
        case 'waiting':
        case 'admitting':
          return;
      }
      healed++;
    }),
  );
  const held = absent.length > 0 ? await d.heldAmong(absent.map((r) => r.invocationId)) : new Set<string>();
  const missing = absent.filter((r) => !held.has(r.invocationId));
  if (missing.length > 0) {
    const runIds = [...new Set(missing.map((m) => m.runId))];
    const snapshots = await d.store.loadSnapshots(runIds);
    const now = Date.now();
    const items: TenantWork[] = [];
    for (const m of missing) {
      const snap = snapshots.find((s) => s.run.id === m.runId);
      if (snap?.run.status === 'Cancelling') {
        d.pending.addResult(m.runId, withdrawnResult(m.invocationId, m.nodeKey, now));
        continue;
      }
      const item = snap ? inflightWorkItem(snap, m.nodeKey, d.defaultTimeoutMs, now) : null;
      if (snap && item && item.invocationId === m.invocationId) items.push({ tenantId: snap.run.tenantId, item });
    }
    await d.enqueue(items);
    d.log.info({ count: items.length }, 're-enqueued in-flight work missing from BullMQ');
    healed += items.length;
  }
  return healed;
}


