/**
 * Bulk actions by filter: the dispatcher's job runner. Any replica claims an
 * open job under a lease (BULK_LEASE_MS, renewed by every batch it records), then works
 * through the job's fixed set of runs in id order, BULK_BATCH_SIZE at a time: each run gets
 * its verb through the SAME store call the single-run operator route makes (the cancel
 * intent, a retry intent per Failed node, the resume write, the fork transaction), so the
 * planner decides what follows; then the batch's outcomes, counts and cursor are recorded in
 * one transaction guarded by the lease. A replica killed mid-batch leaves the lease to
 * expire; the next claimant re-applies only the runs without an outcome, and every verb is
 * idempotent there (a cancel or resume already made is a no-op; a retry already pending is
 * a duplicate, one already applied finds the run reopened; a fork's requestId is derived
 * from the job and the run, so it replays; a migration is one transaction, and a run it moved
 * plans as already on the target with nothing to move, so it is migrated once).
 *
 * A migrate job plans each run with the single-run route's planner and store call; batches
 * stop at its canary share, and after each batch its gate may pause it (libs/graph
 * `bulkPauseReason`): the job then waits, unclaimed, for `POST /v1/bulk-jobs/{id}/resume`.
 */
import type { Pool } from 'pg';
import {
  EncryptedValueError,
  claimBulkJob,
  failedNodesOf,
  forkRun,
  getRunHead,
  migrateRun,
  nextBulkRuns,
  recordBulkBatch,
  recordNodeIntent,
  requestCancel,
  setRunPaused,
  type BulkJobRow,
  type BulkRunResult,
  type ForkSeed,
  type ForkSourceView,
  type ForkTargetView,
} from '@flowline/db';
import {
  bulkBatchLimit,
  bulkMigrateAnswer,
  bulkOperationId,
  bulkRunOutcome,
  planFork,
  planRunMigration,
  retryFailedAnswer,
  stringifyJson,
  type BulkForkOptions,
  type BulkMigrateOptions,
  type BulkVerbAnswer,
  type MigrationReason,
  type RunStatus,
} from '@flowline/graph';
import { publishWakes, type SignalConnection } from '@flowline/queue';
import { runPasses, type Logger } from '@flowline/runtime';

export interface BulkRunnerDeps {
  pool: Pool;
  redis: SignalConnection;
  queuePrefix: string;
  shardCount: number;
  /** this replica's DISPATCHER_ID: the lease owner */
  owner: string;
  /** BULK_BATCH_SIZE */
  batchSize: number;
  /** BULK_LEASE_MS */
  leaseMs: number;
  /** BULK_BATCH_PAUSE_MS */
  batchPauseMs: number;
  /** BULK_ERROR_RATE_MIN_RUNS */
  errorRateMinRuns: number;
  log: Logger;
  /** asked between batches: true ends the job's processing early (shutdown) */
  stopping?: () => boolean;
}

/** One run's verb: its answer, a refusal's code, and the runs to wake. */
interface VerbResult {
  answer: BulkVerbAnswer;
  reason: string | null;
  wake: string[];
  /** a refused migration's planner reasons */
  details?: MigrationReason[];
}

/** A fork refused by the decision inside the fork's transaction (rolled back). */
class BulkForkRefused extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

/** The fork's seed without an edited input: the decision, the source's own input (lossless) and its node rows. */
function forkSeed(opts: BulkForkOptions, source: ForkSourceView, target: ForkTargetView): ForkSeed {
  if (target.planGraph === null) throw new BulkForkRefused('ForkVersionUnknown');
  const decision = planFork({
    source: source.planGraph,
    sourceNodes: source.nodes,
    sourceParentRunId: source.parentRunId,
    target: target.planGraph,
    fromNodeKey: opts.fromNodeKey,
    failedOnly: opts.failedOnly,
  });
  if (!decision.ok) throw new BulkForkRefused(decision.code);
  return {
    inputJson: stringifyJson(source.input),
    inputOverrideJson: null,
    planGraphJson: null,
    reused: decision.reused.map((r) => r.nodeKey),
    resumeLoop: decision.resumeLoop,
    nodes: target.planGraph.nodes.map((n) => ({ key: n.key, kind: n.kind, attemptLimit: n.maxAttempts })),
  };
}

/** A migration refused before planning: the target version has no stored parsed graph (no longer the definition's latest). */
class BulkMigrateRefused extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

/**
 * Migrates one run through the single-run route's store call and planner. The target's parsed
 * graph must be stored (the definition's latest version: the API refuses any other at
 * submission; a version saved since makes each remaining run refused `VersionNotLatest`).
 */
async function migrateOne(d: BulkRunnerDeps, job: BulkJobRow, runId: string): Promise<VerbResult> {
  const opts = job.options as unknown as BulkMigrateOptions;
  try {
    const res = await migrateRun(d.pool, {
      tenantId: job.tenantId,
      runId,
      toVersion: opts.toVersion,
      nodeMap: opts.nodeMap,
      dryRun: false,
      decide: (snap, target) => {
        if (target.planGraph === null) throw new BulkMigrateRefused('VersionNotLatest');
        return { plan: planRunMigration(snap, target.planGraph, opts.nodeMap), planGraph: target.planGraph, planGraphJson: null };
      },
    });
    if (res.kind === 'runNotFound') return { answer: 'gone', reason: 'NotFound', wake: [] };
    if (res.kind === 'versionNotFound') return { answer: 'refused', reason: 'VersionNotFound', wake: [] };
    const a = bulkMigrateAnswer(res);
    return { answer: a.answer, reason: a.reason, wake: res.executed ? [runId] : [], details: a.reasons };
  } catch (err) {
    if (err instanceof BulkMigrateRefused) return { answer: 'refused', reason: err.code, wake: [] };
    throw err;
  }
}

/** Applies the job's verb to one run through the operator store calls. */
async function applyVerb(d: BulkRunnerDeps, job: BulkJobRow, runId: string): Promise<VerbResult> {
  const tenant = job.tenantId;
  switch (job.action) {
    case 'cancel': {
      const res = await requestCancel(d.pool, tenant, runId, `bulk cancel ${job.id}`, job.createdBy);
      if (!res) return { answer: 'gone', reason: 'NotFound', wake: [] };
      return res.outcome === 'cancelling' ? { answer: 'applied', reason: null, wake: [runId] } : { answer: 'already', reason: null, wake: [] };
    }
    case 'resume': {
      if ((await setRunPaused(d.pool, tenant, runId, false)) !== null) return { answer: 'applied', reason: null, wake: [runId] };
      return (await getRunHead(d.pool, tenant, runId)) ? { answer: 'already', reason: null, wake: [] } : { answer: 'gone', reason: 'NotFound', wake: [] };
    }
    case 'retry-failed': {
      const run = await failedNodesOf(d.pool, tenant, runId);
      let retried = 0;
      for (const key of run?.nodeKeys ?? []) {
        const o = await recordNodeIntent(d.pool, tenant, runId, key, 'retry', '{}', job.createdBy);
        if (o === 'recorded' || o === 'duplicate') retried++;
      }
      const answer = retryFailedAnswer({ exists: run !== null, runStatus: (run?.status ?? null) as RunStatus | null, retried });
      return { answer, reason: answer === 'refused' ? 'NodeStateConflict' : answer === 'gone' ? 'NotFound' : null, wake: retried > 0 ? [runId] : [] };
    }
    case 'fork': {
      const opts = job.options as unknown as BulkForkOptions;
      try {
        const res = await forkRun(d.pool, {
          tenantId: tenant,
          sourceRunId: runId,
          fromNodeKey: opts.fromNodeKey,
          definitionVersion: null,
          requestId: bulkOperationId(job.id, runId),
          shardCount: d.shardCount,
          prepare: (source, target) => forkSeed(opts, source, target),
        });
        if (res.kind === 'created') return { answer: 'applied', reason: null, wake: [res.runId, runId] };
        if (res.kind === 'replayed') return { answer: 'applied', reason: null, wake: [] };
        if (res.kind === 'runNotFound') return { answer: 'gone', reason: 'NotFound', wake: [] };
        return { answer: 'refused', reason: res.kind === 'requestIdReused' ? 'RequestIdReused' : 'ForkVersionUnknown', wake: [] };
      } catch (err) {
        if (err instanceof BulkForkRefused) return { answer: 'refused', reason: err.code, wake: [] };
        throw err;
      }
    }
    case 'migrate':
      return migrateOne(d, job, runId);
  }
}

/**
 * Works one claimed job to its end (or until the lease is lost or the process stops):
 * batch after batch, apply then record. Returns the job as last recorded, or null when the
 * lease was lost.
 */
export async function processBulkJob(d: BulkRunnerDeps, claimed: BulkJobRow): Promise<BulkJobRow | null> {
  let job = claimed;
  const log = d.log.child({ bulkId: job.id, action: job.action });
  log.info({ total: job.total, done: job.done, failed: job.failed, claims: job.claims }, 'bulk job claimed');
  for (;;) {
    if (d.stopping?.()) return job;
    const limit = job.action === 'migrate' ? bulkBatchLimit(job, job.options as unknown as BulkMigrateOptions, job.gate, d.batchSize) : d.batchSize;
    const runIds = await nextBulkRuns(d.pool, job.id, job.cursor, limit);
    const results: BulkRunResult[] = [];
    const wake: string[] = [];
    for (const runId of runIds) {
      const v = await applyVerb(d, job, runId).catch((err: unknown): VerbResult => {
        // a run whose stored values do not decrypt would fail every claimant forever: it is refused, named in the log
        if (!(err instanceof EncryptedValueError)) throw err;
        log.error({ runId, code: err.code, details: err.details }, 'bulk: run refused, a stored value cannot be decrypted');
        return { answer: 'refused', reason: err.code, wake: [] };
      });
      results.push({ runId, outcome: bulkRunOutcome(v.answer), reason: v.reason, details: v.details && v.details.length > 0 ? v.details : null });
      wake.push(...v.wake);
    }
    const recorded = await recordBulkBatch(d.pool, job.id, d.owner, d.leaseMs, results, runIds.at(-1) ?? null, { errorRateMinRuns: d.errorRateMinRuns });
    if (wake.length > 0) {
      // the committed wake_at is the guarantee; the signal saves a sweep interval
      await publishWakes(d.redis, wake.map((runId) => ({ runId })), d.queuePrefix, d.shardCount).catch((err: unknown) => log.warn({ err }, 'bulk: wake publish failed; the sweep picks the runs up'));
    }
    if (recorded === null) {
      log.warn('bulk job lease lost: another dispatcher owns it now');
      return null;
    }
    job = recorded;
    if (job.status === 'Paused') {
      log.info({ pauseReason: job.pauseReason, done: job.done, failed: job.failed, total: job.total }, 'bulk job paused until resumed');
      return job;
    }
    if (job.status === 'Completed' || job.status === 'Failed' || runIds.length === 0) {
      log.info({ status: job.status, total: job.total, done: job.done, failed: job.failed }, 'bulk job finished');
      return job;
    }
    if (d.batchPauseMs > 0) await new Promise((resolve) => setTimeout(resolve, d.batchPauseMs));
  }
}

/** Starts the runner loop: claim a job and work it; poll every `pollMs` when none is open. */
export function startBulkRunner(d: BulkRunnerDeps & { pollMs: number }): { stop(): Promise<void> } {
  return runPasses(
    async (stopping) => {
      const job = await claimBulkJob(d.pool, d.owner, d.leaseMs);
      if (!job) return false;
      await processBulkJob({ ...d, stopping }, job);
      return !stopping();
    },
    { idleMs: d.pollMs, logger: d.log, name: 'bulk-jobs', backoff: { initialMs: 500, maxMs: 30_000 } },
  );
}
