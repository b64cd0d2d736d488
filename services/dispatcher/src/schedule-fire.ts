/**
 * The schedule firer: every SCHEDULE_POLL_MS, any replica takes the due schedules (locked rows,
 * skipped by the others) and decides their due slots — catch-up, then the overlap policy (pure,
 * libs/graph schedule/slots.ts) — starting runs and recording every slot once in the ledger
 * (`schedule_slots`, keyed by schedule and slot). A second pass starts buffered slots whose
 * schedule has no live run left. Counts go to `flowline_schedule_slots_total{outcome}`.
 *
 * Exactly once, whatever the number of replicas: a slot's row is inserted ON CONFLICT DO
 * NOTHING, and its run's request id (`schedule:<id>:<slot>`) dedupes the creation, so a pass
 * that dies after creating a run and before recording the slot is repaired by the next pass,
 * which finds the run by its request id and records it as started.
 */
import type { Pool } from 'pg';
import type { Registry } from 'prom-client';
import {
  advanceSchedule,
  bufferedSlots,
  findRunByRequestId,
  liveRunsOfSchedule,
  lockBufferedSchedules,
  lockDueSchedules,
  newestRunStatus,
  recordSlots,
  requestCancel,
  startBufferedSlot,
  startSlotRun,
  withTransaction,
  type DueSchedule,
  type SlotDecision,
  type SlotOutcome,
  type Tx,
} from '@flowline/db';
import {
  catchupVerdicts,
  compileScheduleSpec,
  nextSlot,
  overlapVerdict,
  parseIsoDuration,
  slotJitterMs,
  slotRequestId,
  slotsBetween,
  type CompiledSpec,
  type SchedulePolicy,
} from '@flowline/graph';
import { metricsOn, runPasses, type Logger } from '@flowline/runtime';

/** Where the firer counts the slots it decided. */
export interface ScheduleMetrics {
  slots(outcome: SlotOutcome, n: number): void;
}

export const NO_SCHEDULE_METRICS: ScheduleMetrics = { slots() {} };

/** Registers `flowline_schedule_slots_total{outcome}` on `registry`. */
export function createScheduleMetrics(registry: Registry): ScheduleMetrics {
  const counter = metricsOn(registry).counter('flowline_schedule_slots_total', 'schedule slots decided, by outcome (started, skippedOverlap, skippedCatchup, buffered, cancelledPrevious, failed)', ['outcome']);
  return {
    slots(outcome, n) {
      if (n > 0) counter.inc({ outcome }, n);
    },
  };
}

export interface ScheduleFireDeps {
  pool: Pool;
  shardCount: number;
  /** MAX_PENDING_RUNS of a tenant (a slot's run counts like any start) */
  maxPendingRuns?: (tenantId: string) => number;
  /** SCHEDULE_BATCH_SIZE: schedules one pass locks */
  batchSize: number;
  /** SCHEDULE_MAX_SLOTS_PER_PASS: slots one pass decides per schedule (the rest next pass) */
  maxSlotsPerPass: number;
  /** SCHEDULE_ON_TIME_MS: a slot at most this late is on time, whatever the catch-up mode */
  onTimeMs: number;
  log: Logger;
  metrics: ScheduleMetrics;
  /** tells the shard owner a run has work now (its wake_at already says so) */
  wake?: (runId: string, tenantId: string) => Promise<void>;
}

const jittered = (s: DueSchedule, spec: CompiledSpec, slotAt: number) => slotAt + slotJitterMs(s.id, slotAt, spec.jitterMs);

/** The due slots of `s` at its pass's clock, oldest first: a prefix (a jittered slot not yet due holds back the later ones). */
function dueSlots(s: DueSchedule, spec: CompiledSpec, now: number, max: number): { due: number[]; truncated: boolean } {
  const after = s.lastSlotAt?.getTime() ?? now;
  const listed = slotsBetween(spec, after, now, max + 1);
  const due: number[] = [];
  for (const t of listed) {
    if (jittered(s, spec, t) > now) break;
    due.push(t);
  }
  return due.length > max ? { due: due.slice(0, max), truncated: true } : { due, truncated: false };
}

/** Decides one due schedule's slots inside the pass's transaction (its row locked). */
async function fireSchedule(tx: Tx, d: ScheduleFireDeps, s: DueSchedule): Promise<SlotDecision[]> {
  const log = d.log.child({ scheduleId: s.id });
  let spec: CompiledSpec;
  try {
    spec = compileScheduleSpec(s.spec);
  } catch (err) {
    await advanceSchedule(tx, s.id, null, null, (err as Error).message);
    log.warn({ err }, 'schedule paused: its spec no longer checks');
    return [];
  }
  const policy = s.policy as SchedulePolicy;
  if (policy.pauseOnFailure) {
    const newest = await newestRunStatus(tx, s.id);
    if (newest?.status === 'Failed') {
      await advanceSchedule(tx, s.id, null, null, `run ${newest.id} failed (pauseOnFailure)`);
      log.info({ runId: newest.id }, 'schedule paused: its last run failed');
      return [];
    }
  }
  const now = s.now.getTime();
  const { due, truncated } = dueSlots(s, spec, now, d.maxSlotsPerPass);
  const window = parseIsoDuration(policy.catchup.window);
  const verdicts = catchupVerdicts(due, truncated ? Number.NaN : (due.at(-1) ?? Number.NaN), now, { windowMs: 'ms' in window ? window.ms : 0, mode: policy.catchup.mode }, d.onTimeMs);
  const live = await liveRunsOfSchedule(tx, s.id);
  let buffered = (await bufferedSlots(tx, s.id)).length;
  const decisions: SlotDecision[] = [];
  for (const v of verdicts) {
    const slotAt = new Date(v.slotAt);
    if (!v.start) {
      decisions.push({ slotAt, source: 'cron', outcome: 'skippedCatchup', runId: null, reason: v.reason });
      continue;
    }
    // a run this slot already started (a pass that died before recording it) is its outcome
    const existing = await findRunByRequestId(tx, s.tenantId, slotRequestId(s.id, v.slotAt));
    if (existing) {
      decisions.push({ slotAt, source: 'cron', outcome: 'started', runId: existing.id, reason: null });
      continue;
    }
    const verdict = overlapVerdict(policy.overlap, live.length, buffered);
    if (verdict === 'skippedOverlap') {
      decisions.push({ slotAt, source: 'cron', outcome: 'skippedOverlap', runId: null, reason: `${live.length} run(s) of the schedule still live (overlap ${policy.overlap})` });
      continue;
    }
    if (verdict === 'buffered') {
      buffered++;
      decisions.push({ slotAt, source: 'cron', outcome: 'buffered', runId: null, reason: `waits for ${live.length} live run(s) to end (overlap ${policy.overlap})` });
      continue;
    }
    let cancelled: string[] = [];
    if (verdict === 'cancelPrevious') {
      cancelled = live.splice(0);
      for (const runId of cancelled) {
        await requestCancel(d.pool, s.tenantId, runId, `cancelled by the next slot of schedule ${s.key} (overlap cancelPrevious)`);
        await d.wake?.(runId, s.tenantId);
      }
    }
    const started = await startSlotRun(d.pool, s, v.slotAt, { shardCount: d.shardCount, ...(d.maxPendingRuns ? { maxPendingRuns: d.maxPendingRuns(s.tenantId) } : {}) });
    if (!started.ok) {
      decisions.push({ slotAt, source: 'cron', outcome: 'failed', runId: null, reason: started.reason });
      continue;
    }
    live.push(started.runId);
    await d.wake?.(started.runId, s.tenantId);
    decisions.push(
      verdict === 'cancelPrevious'
        ? { slotAt, source: 'cron', outcome: 'cancelledPrevious', runId: started.runId, reason: `cancelled ${cancelled.join(', ')}` }
        : { slotAt, source: 'cron', outcome: 'started', runId: started.runId, reason: null },
    );
  }
  const last = due.at(-1) ?? null;
  const next = nextSlot(spec, last ?? s.lastSlotAt?.getTime() ?? now);
  await advanceSchedule(tx, s.id, last === null ? null : new Date(last), next === null ? null : new Date(jittered(s, spec, next)));
  return recordSlots(tx, s.tenantId, s.id, decisions);
}

/** Starts the oldest buffered slot of each locked schedule that has no live run left. */
async function releaseBuffered(tx: Tx, d: ScheduleFireDeps, s: DueSchedule): Promise<SlotOutcome | null> {
  if ((await liveRunsOfSchedule(tx, s.id)).length > 0) return null;
  const [oldest] = await bufferedSlots(tx, s.id);
  if (!oldest) return null;
  const started = await startSlotRun(d.pool, s, oldest.getTime(), { shardCount: d.shardCount, ...(d.maxPendingRuns ? { maxPendingRuns: d.maxPendingRuns(s.tenantId) } : {}) });
  const outcome: SlotOutcome = started.ok ? 'started' : 'failed';
  if (!(await startBufferedSlot(tx, s.id, oldest, outcome, started.ok ? started.runId : null, started.ok ? null : started.reason))) return null;
  if (started.ok) await d.wake?.(started.runId, s.tenantId);
  return outcome;
}

/** What one pass decided. */
export interface FirePassResult {
  schedules: number;
  slots: number;
  released: number;
  /** true when a batch was full: another pass should follow at once */
  more: boolean;
}

/** One firing pass: due schedules, then buffered ones; each batch in its own transaction. */
export async function firePass(d: ScheduleFireDeps): Promise<FirePassResult> {
  const fired = await withTransaction(d.pool, async (tx) => {
    const due = await lockDueSchedules(tx, d.batchSize);
    const decided: SlotDecision[] = [];
    for (const s of due) decided.push(...(await fireSchedule(tx, d, s)));
    return { schedules: due.length, decided };
  });
  const counts = new Map<SlotOutcome, number>();
  for (const x of fired.decided) counts.set(x.outcome, (counts.get(x.outcome) ?? 0) + 1);
  const released = await withTransaction(d.pool, async (tx) => {
    const held = await lockBufferedSchedules(tx, d.batchSize);
    let n = 0;
    for (const s of held) {
      const outcome = await releaseBuffered(tx, d, s);
      if (outcome) {
        n++;
        // a buffered slot was counted when it was buffered; it is counted again under what it became
        counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
      }
    }
    return n;
  });
  for (const [outcome, n] of counts) d.metrics.slots(outcome, n);
  if (fired.decided.length > 0 || released > 0) {
    d.log.info({ schedules: fired.schedules, slots: Object.fromEntries(counts), released }, 'schedules: slots decided');
  }
  return { schedules: fired.schedules, slots: fired.decided.length, released, more: fired.schedules === d.batchSize };
}

/** Starts the firer loop: a pass every `pollMs`, at once again while a batch was full. */
export function startScheduleFirer(d: ScheduleFireDeps & { pollMs: number }): { stop(): Promise<void> } {
  return runPasses(async () => (await firePass(d)).more, { idleMs: d.pollMs, logger: d.log, name: 'schedules', backoff: { initialMs: 500, maxMs: 30_000 } });
}
