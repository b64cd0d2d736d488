/**
 * The dispatcher's view of Postgres: a narrow port over @flowline/db so the tick and
 * the reconciler read as glue and tests can see which statements a tick costs.
 */
import type { PlanResult } from '@flowline/graph';
import {
  applyPlans,
  claimConcurrency,
  claimShards,
  deadDispatcherExists,
  dueRuns,
  forceQuarantine,
  findRunsWithInflightWork,
  loadSnapshots,
  reconcileInlineRunning,
  releaseShards,
  shardOfRun,
  type ApplyOutcome,
  type LoadedSnapshot,
} from '@flowline/db';
import type { Pool } from 'pg';

/** An in-flight (Queued/Running) lane node as committed. */
export interface InflightWork {
  runId: string;
  nodeKey: string;
  invocationId: string;
  status: 'Queued' | 'Running';
}

export interface DispatchStore {
  /** one round trip; missing runs are left out */
  loadSnapshots(runIds: string[]): Promise<LoadedSnapshot[]>;
  /** concurrency keys: the Pending keyed runs of `runIds` that took a place of their key (absent: none ever does) */
  claimConcurrency?(runIds: string[]): Promise<Set<string>>;
  /** one transaction; each run guarded on its own */
  applyPlans(items: { snapshot: LoadedSnapshot; plan: PlanResult }[]): Promise<ApplyOutcome>;
  /** ends a run Failed `Internal` writing no node row or document; false when already terminal */
  forceQuarantine(runId: string, reason: string): Promise<boolean>;
  dueRuns(shards: number[], limit: number): Promise<string[]>;
  inflight(shards: number[]): Promise<InflightWork[]>;
  reconcileInlineRunning(shards: number[]): Promise<void>;
  /** `livenessKey`: the advisory lock this process holds right now, or null (see DispatcherLiveness) */
  claimShards(livenessKey: bigint | null): Promise<number[]>;
  releaseShards(): Promise<void>;
  /** some peer live by its lease has lost its liveness lock: a claim now takes its shards */
  deadDispatcherExists(): Promise<boolean>;
  shardOf(runId: string): number;
}

export interface StoreOptions {
  dispatcherId: string;
  shardCount: number;
  leaseMs: number;
  maxConcurrentRuns: number;
}

/** The production store over a pg pool. */
export function createDispatchStore(pool: Pool, o: StoreOptions): DispatchStore {
  return {
    loadSnapshots: (runIds) => loadSnapshots(pool, runIds, { maxConcurrentRuns: o.maxConcurrentRuns }),
    claimConcurrency: (runIds) => claimConcurrency(pool, runIds),
    applyPlans: (items) => applyPlans(pool, items, { shardCount: o.shardCount }),
    forceQuarantine: (runId, reason) => forceQuarantine(pool, runId, reason),
    dueRuns: (shards, limit) => dueRuns(pool, shards, limit),
    inflight: async (shards) => {
      const rows = await findRunsWithInflightWork(pool, shards);
      return rows.flatMap((r) =>
        r.invocationId ? [{ runId: r.runId, nodeKey: r.nodeKey, invocationId: r.invocationId, status: r.status }] : [],
      );
    },
    reconcileInlineRunning: async (shards) => {
      await reconcileInlineRunning(pool, shards);
    },
    claimShards: (livenessKey) => claimShards(pool, o.dispatcherId, o.shardCount, o.leaseMs, livenessKey),
    deadDispatcherExists: () => deadDispatcherExists(pool),
    releaseShards: async () => {
      await releaseShards(pool, o.dispatcherId);
    },
    shardOf: (runId) => shardOfRun(runId, o.shardCount),
  };
}
