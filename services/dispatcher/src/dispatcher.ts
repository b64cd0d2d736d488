/**
 * The dispatcher replica: leases shards, learns which runs need a tick (wake channel,
 * worker reports, due sweep), ticks them in batches and heals lost transport. Built from
 * injected clients so tests run it in-process exactly as main.ts runs it.
 */
import { createApprovalNotifier } from './approval-notify';
import { Job } from 'bullmq';
import type { RedisConnection } from '@flowline/queue';
import type { Pool } from 'pg';
import { DispatcherLiveness } from '@flowline/db';
import { runLoop, systemClock, tracingEnabled, waitpointSigningKey, type Clock, type LoopHandle, type Logger, type Service } from '@flowline/runtime';
import { closeLaneQueues, createLaneQueues, jobIdFor, LANES, laneTelemetry } from '@flowline/queue';
import { interruptedResult, type Lane, type WorkItem } from '@flowline/graph';
import { coreOptionsOf, laneWindowsOf, modelPricesOf, slotRetryMsOf, tenantWeightsOf, type DispatcherConfig } from './config';
import { createDispatchStore, type DispatchStore } from './store';
import { PendingWork } from './pending-work';
import { LeaseKeeper } from './lease-keeper';
import { JobFeed } from './job-feed';
import { checkInflight } from './inflight-check';
import { tickRuns, type CommittedPlan, type TickStats } from './tick';
import { createEffects } from './effects';
import { createPublisher } from './publish';
import { SnapshotCache } from './snapshot-cache';
import { ApplyFailures } from './quarantine';
import { createReleaseWindow, type TenantWork } from './release-window';
import { emptyStuckCounts, runWatchdog, type StuckCounts } from './watchdog';
import { NO_METRICS, type DispatcherMetrics } from './metrics';

export interface DispatcherDeps {
  config: DispatcherConfig;
  pool: Pool;
  /** command connection (queues, publishes); not closed by the dispatcher */
  redis: RedisConnection;
  log: Logger;
  /** replaces the Postgres port (tests) */
  store?: DispatchStore;
  /** the planner's clock (deadlines, backoff, wake times); shard leases use the database clock. @default systemClock */
  clock?: Clock;
  /** engine metrics (metrics.ts) @default NO_METRICS */
  metrics?: DispatcherMetrics;
}

export interface DispatcherTotals {
  ticks: number;
  applied: number;
  conflicted: number;
  healed: number;
  /** apply statements (one transaction each) */
  commits: number;
  /** runs planned from the snapshot cache / read from Postgres */
  cached: number;
  loaded: number;
  /** run plans the store refused (each retried by the sweep until APPLY_FAILURE_LIMIT) */
  applyFailures: number;
  /** runs ended Failed `Internal` after APPLY_FAILURE_LIMIT refused applies */
  quarantined: number;
  /** jobs this replica released from the dispatch window to their lanes */
  released: number;
  /** window releases that lost their compare-and-set to a peer (read again) */
  releaseConflicts: number;
  /** stuck-run watchdog findings by invariant (watchdog.ts); each run found is made due */
  stuck: StuckCounts;
  /** shard lease renewals that failed */
  leaseRenewFailures: number;
  /** messages received on the wake channels (broadcast and this replica's shards) */
  wakesReceived: number;
  /** of those, reports and wakes naming a run of a shard this replica does not hold (work spent for a peer) */
  wakesForeign: number;
}

export interface Dispatcher {
  readonly id: string;
  start(): Promise<void>;
  /** Graceful: stops loops, releases shards so peers take them at once. */
  stop(): Promise<void>;
  /** Simulated death: stops everything WITHOUT releasing shards (they expire on the DB clock). */
  halt(): Promise<void>;
  ownedShards(): number[];
  totals(): DispatcherTotals;
  /** True when the run's next tick would plan from the snapshot cache. */
  isCached(runId: string): boolean;
}

/** Builds a dispatcher replica; nothing runs until `start()`. */
export function createDispatcher(deps: DispatcherDeps): Dispatcher {
  const { config: c, redis } = deps;
  const log = deps.log.child({ dispatcherId: c.DISPATCHER_ID });
  const store =
    deps.store ??
    createDispatchStore(deps.pool, {
      dispatcherId: c.DISPATCHER_ID,
      shardCount: c.SHARD_COUNT,
      leaseMs: c.SHARD_LEASE_MS,
      maxConcurrentRuns: c.MAX_CONCURRENT_RUNS,
    });
  const queues = createLaneQueues(redis, c.QUEUE_PREFIX);
  const pending = new PendingWork({ startDelayMs: c.DISPATCH_START_DELAY_MS, weights: tenantWeightsOf(c), maxTenantHints: c.TENANT_HINT_RUNS });
  const cache = new SnapshotCache(c.SNAPSHOT_CACHE_RUNS);
  const failures = new ApplyFailures(c.APPLY_FAILURE_LIMIT);
  /** a foreign change: the run is read afresh on its next tick */
  const changedElsewhere = (runIds: string[]) => {
    const own = runIds.filter((id) => owns(id));
    for (const id of own) cache.drop(id);
    pending.markReady(own);
  };
  const metrics = deps.metrics ?? NO_METRICS;
  let wakesForeign = 0;
  /** the run is this replica's; counts a message about a run it does not own */
  const ownsReported = (runId: string) => {
    const own = owns(runId);
    if (!own) wakesForeign++;
    return own;
  };
  const totals: Omit<DispatcherTotals, 'released' | 'releaseConflicts' | 'leaseRenewFailures' | 'wakesReceived' | 'wakesForeign'> = {
    ticks: 0,
    applied: 0,
    conflicted: 0,
    healed: 0,
    commits: 0,
    cached: 0,
    loaded: 0,
    applyFailures: 0,
    quarantined: 0,
    stuck: emptyStuckCounts(),
  };
  let running = false;
  let sweeps = 0;

  const owns = (runId: string) => leases.owns(store.shardOf(runId));
  const publisher = createPublisher({ pool: deps.pool, redis, prefix: c.QUEUE_PREFIX, dropCached: (id) => cache.drop(id), log });
  const window = createReleaseWindow({ redis, prefix: c.QUEUE_PREFIX, queues, targets: laneWindowsOf(c), weights: tenantWeightsOf(c), log });
  /** space may have freed on a lane: release held work (any run's, any tenant's) */
  const nudgeWindow = () => {
    if (running) void window.nudge().catch((err: unknown) => log.warn({ err }, 'dispatch window release failed; the next trigger retries'));
  };
  /** after a tick: release on the lanes where a job finished and no hold of the tick read the lane since */
  const flushFreedLanes = () => {
    if (running) void window.flushFreed().catch((err: unknown) => log.warn({ err }, 'dispatch window release failed; the next trigger retries'));
  };
  const notifier = createApprovalNotifier({
    secret: c.APPROVAL_WEBHOOK_SECRET, publicUrl: c.PUBLIC_URL, timeoutMs: c.APPROVAL_WEBHOOK_TIMEOUT_MS, tries: c.APPROVAL_WEBHOOK_TRIES, log,
    // the API's precedence without API_KEYS, which only the API holds: then no approval links
    linkKey:
      c.WAITPOINT_SIGNING_KEY || c.ENCRYPTION_KEY || c.ENCRYPTION_KEYS?.default
        ? waitpointSigningKey({ signingKey: c.WAITPOINT_SIGNING_KEY, encryptionKey: c.ENCRYPTION_KEY ?? c.ENCRYPTION_KEYS?.default }).key
        : null,
  });
  const effects = createEffects({ redis, queues, prefix: c.QUEUE_PREFIX, shardCount: c.SHARD_COUNT, pending, window, owns, dropCached: (id) => cache.drop(id), publish: publisher.afterCommit, telemetry: tracingEnabled() ? laneTelemetry() : undefined, log });
  const inflightDeps = {
    store,
    redis,
    prefix: c.QUEUE_PREFIX,
    pending,
    enqueue: (work: TenantWork[]) => effects.enqueue(work),
    heldAmong: (ids: string[]) => window.heldAmong(ids),
    defaultTimeoutMs: c.DEFAULT_NODE_TIMEOUT_SECONDS * 1000,
    log,
  };

  // proof of life for the peers (see DISPATCHER_LIVENESS_PROBE_MS); its key is named in claims only while held
  const liveness =
    c.DISPATCHER_LIVENESS_PROBE_MS > 0
      ? new DispatcherLiveness(c.DATABASE_URL, (err) => log.warn({ err }, 'liveness lock lost with its connection; peers judge this dispatcher by its lease until it is taken again'))
      : null;
  const leases: LeaseKeeper = new LeaseKeeper(
    { claim: () => store.claimShards(liveness?.held ? liveness.key : null), release: () => store.releaseShards() },
    c.SHARD_LEASE_MS,
    {
      gained: async (shards) => {
        // first the shards' wake channels: a report after this point arrives, one before it is healed below
        await feed.joinShards(shards);
        const gained = new Set(shards);
        cache.retain((id) => !gained.has(store.shardOf(id)));
        await store.reconcileInlineRunning(shards);
        totals.healed += await checkInflight(inflightDeps, shards);
        await publisher.heal(shards, c.DISPATCH_BATCH_SIZE);
        pending.markReady(await store.dueRuns(shards, c.DISPATCH_BATCH_SIZE * 10));
      },
      lost: (shards) => {
        feed.leaveShards(shards);
        pending.retainRuns(owns);
        cache.retain(owns);
        failures.retain(owns);
      },
    },
    log,
  );

  const feed = new JobFeed(
    redis,
    c.QUEUE_PREFIX,
    {
      // a change in the store: the run is read afresh on its next tick
      wake: (runId, tenantId) => {
        if (!ownsReported(runId)) return;
        if (tenantId !== undefined) pending.rememberTenant(runId, tenantId);
        changedElsewhere([runId]);
      },
      started: (invocationId, at, reported) => {
        const ref = pending.lookupInvocation(invocationId) ?? reported;
        if (ownsReported(ref.runId)) pending.addStarted(ref.runId, { invocationId, nodeKey: ref.nodeKey, at });
      },
      completed: (ret) => {
        if (!ownsReported(ret.runId)) return;
        // the job's lane has space again: released after the run's tick (which usually holds its successor there)
        window.markFreed(laneOfInvocation(ret.invocationId));
        pending.addResult(ret.runId, { invocationId: ret.invocationId, nodeKey: ret.nodeKey, outcome: ret.outcome });
      },
      failed: (invocationId, reason, at, runId) => {
        if (runId !== null && !ownsReported(runId)) return;
        nudgeWindow();
        void onFailed(invocationId, reason, at).catch((err: unknown) => log.warn({ err, invocationId }, 'failed-job lookup failed'));
      },
    },
    log,
  );

  /** The lane an invocation's job was put on by this replica; every lane when unknown. */
  function laneOfInvocation(invocationId: string): readonly Lane[] {
    const lane = pending.lookupInvocation(invocationId)?.lane;
    return lane === undefined ? LANES : [lane];
  }

  /** A failed job is rare: when its run is unknown here, its payload names the run. */
  async function onFailed(invocationId: string, reason: string, at: number): Promise<void> {
    let ref = pending.lookupInvocation(invocationId);
    if (!ref) {
      for (const lane of LANES) {
        const job = await Job.fromId<WorkItem>(queues[lane], jobIdFor(invocationId));
        if (job) {
          ref = { runId: job.data.runId, nodeKey: job.data.nodeKey };
          break;
        }
      }
    }
    if (ref && owns(ref.runId)) pending.addResult(ref.runId, interruptedResult(invocationId, ref.nodeKey, reason, at));
  }

  const tickDeps = {
    store,
    pending,
    options: coreOptionsOf(c),
    owns,
    slotRetryMs: slotRetryMsOf(c),
    prices: modelPricesOf(c),
    pendingRunTtlMs: c.PENDING_RUN_TTL_MS,
    clock: deps.clock ?? systemClock,
    afterCommit: async (committed: CommittedPlan[]) => {
      await effects.afterCommit(committed);
      notifier.afterCommit(committed);
      metrics.committed(committed, Date.now());
    },
    cache,
    failures,
    log,
  };

  /** The tick loop: whatever is ready now goes now (never waits to fill a batch). */
  const ticker: Service = {
    start() {},
    stop() {},
    async runOnce() {
      try {
        return await tickOnce();
      } finally {
        flushFreedLanes();
      }
    },
  };

  /** One tick over what is ready now; true when more is ready. */
  async function tickOnce(): Promise<boolean> {
    if (pending.readyCount === 0) return false;
    const runIds = pending.takeReady(c.DISPATCH_BATCH_SIZE);
    const startedAt = performance.now();
    try {
      const s: TickStats = await tickRuns(tickDeps, runIds);
      metrics.tick(performance.now() - startedAt, runIds.length);
      totals.ticks++;
      totals.applied += s.applied;
      totals.conflicted += s.conflicted;
      totals.commits += s.statements;
      totals.cached += s.cached;
      totals.loaded += s.loaded;
      totals.applyFailures += s.failed;
      totals.quarantined += s.quarantined;
      if (s.applied || s.conflicted) log.debug(s, 'tick');
    } catch (err) {
      // Reports stay in the inbox; the runs go back to the ready set for the next try.
      pending.markReady(runIds.filter(owns));
      throw err;
    }
    return pending.readyCount > 0;
  }

  /** The due sweep (wake_at <= now()) plus, every Nth round, the in-flight check. */
  const sweeper: Service = {
    start() {},
    stop() {},
    async runOnce() {
      const shards = [...leases.shards];
      if (shards.length === 0) return false;
      // backstop: space freed by jobs whose reports reached other replicas, or was lost
      nudgeWindow();
      const due = (await store.dueRuns(shards, c.DISPATCH_BATCH_SIZE * 5)).filter(owns);
      // due by the database clock: a foreign change (or our own timer); read it afresh
      for (const id of due) cache.drop(id);
      pending.markReady(due);
      if (++sweeps % c.INFLIGHT_CHECK_EVERY_SWEEPS === 0) totals.healed += await checkInflight(inflightDeps, shards);
      if (sweeps % c.INFLIGHT_CHECK_EVERY_SWEEPS === 0) await publisher.heal(shards, c.DISPATCH_BATCH_SIZE);
      if (sweeps % c.WATCHDOG_EVERY_SWEEPS === 0) await watchdogRound(shards);
      return false;
    },
  };

  const watchdogDeps = { pool: deps.pool, graceMs: c.WATCHDOG_GRACE_MS, batch: c.DISPATCH_BATCH_SIZE, maxConcurrentRuns: c.MAX_CONCURRENT_RUNS, log };
  /** Stuck runs are read afresh (their rows changed without a wake) and ticked. */
  async function watchdogRound(shards: number[]): Promise<void> {
    const { runIds, counts } = await runWatchdog(watchdogDeps, shards);
    for (const k of Object.keys(counts) as Array<keyof StuckCounts>) totals.stuck[k] += counts[k];
    const own = runIds.filter(owns);
    for (const id of own) cache.drop(id);
    pending.markReady(own);
  }

  let loops: LoopHandle[] = [];

  async function shutdown(release: boolean): Promise<void> {
    if (!running) return;
    running = false;
    await Promise.allSettled(loops.map((l) => l.stop()));
    await notifier.drain();
    pending.interrupt();
    await window.idle();
    cache.clear();
    await leases.relinquish({ release }).catch((err: unknown) => log.warn({ err }, 'lease release failed'));
    await liveness?.close();
    await feed.stop();
    await closeLaneQueues(queues);
    log.info({ release }, 'dispatcher stopped');
  }

  return {
    id: c.DISPATCHER_ID,
    async start() {
      running = true;
      await feed.start();
      // best effort before the first claim: without the lock, peers judge this replica by its lease
      await liveness?.acquire().catch((err: unknown) => log.warn({ err }, 'liveness lock not taken; retried by the liveness loop'));
      await leases.runOnce();
      const tickLoop = runLoop(ticker, { idleMs: c.DISPATCH_SWEEP_MS, logger: log, name: 'tick', backoff: { initialMs: 50, maxMs: 2000 } });
      pending.onReady(() => tickLoop.wake());
      loops = [
        runLoop(leases, { idleMs: leases.renewEveryMs, jitter: 0, logger: log, name: 'leases' }),
        tickLoop,
        runLoop(sweeper, { idleMs: c.DISPATCH_SWEEP_MS, logger: log, name: 'sweep' }),
        ...(liveness
          ? [runLoop(livenessProbe(liveness, store, leases), { idleMs: c.DISPATCHER_LIVENESS_PROBE_MS, jitter: 0, logger: log, name: 'liveness' })]
          : []),
      ];
      log.info({ shards: [...leases.shards] }, 'dispatcher started');
    },
    stop: () => shutdown(true),
    halt: () => shutdown(false),
    ownedShards: () => [...leases.shards].sort((a, b) => a - b),
    totals: () => {
      const w = window.totals();
      return {
        ...totals,
        stuck: { ...totals.stuck },
        released: w.released,
        releaseConflicts: w.conflicts,
        wakesReceived: feed.received,
        wakesForeign,
        leaseRenewFailures: leases.renewFailures,
      };
    },
    isCached: (runId) => cache.has(runId),
  };
}

/**
 * The liveness loop: keeps this replica's own lock taken (again after its connection broke), and
 * when a peer's lock is gone while its lease still runs, claims at once so its shards (and the
 * timers, waits and work on them) move now rather than when the lease ends.
 */
function livenessProbe(liveness: DispatcherLiveness, store: DispatchStore, leases: LeaseKeeper): Service {
  return {
    start() {},
    async runOnce() {
      await liveness.acquire();
      if (await store.deadDispatcherExists()) await leases.runOnce();
      return false;
    },
    stop() {},
  };
}
