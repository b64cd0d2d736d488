/**
 * Run priority and the backlog bounds, pure decisions.
 *
 * Priority: an integer 1–5 given when a run starts, {@link DEFAULT_RUN_PRIORITY} when not.
 * A HIGHER number is MORE urgent (5 first, 1 last), as in Hatchet; BullMQ's own `priority`
 * option runs the other way (1 is its highest), but Flowline never hands it to BullMQ: it
 * orders the run's releases from its tenant's hold in the dispatch window and the admission of
 * the tenant's Pending runs, first in first out within one priority. Child runs (Subworkflow,
 * Loop) inherit their parent's priority.
 *
 * Expiry: with PENDING_RUN_TTL_MS > 0, a top-level run still Pending and never started that
 * many ms after its creation (a delayed start: after its `notBefore`) ends Failed with the class `Expired` (the run statuses of the
 * contract stay as they are).
 */
import type { RunState } from './types';
import { parseTenantList } from '../tenant-list';

export const MIN_RUN_PRIORITY = 1;
export const MAX_RUN_PRIORITY = 5;
export const DEFAULT_RUN_PRIORITY = 3;

/** True for an integer 1–5. */
export function isRunPriority(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= MIN_RUN_PRIORITY && v <= MAX_RUN_PRIORITY;
}

/** A stored priority as the decisions read it: anything outside 1–5 counts as the default. */
export function runPriorityOf(v: unknown): number {
  return isRunPriority(v) ? v : DEFAULT_RUN_PRIORITY;
}

/** What admission orders Pending runs by. */
export interface AdmissionCandidate {
  id: string;
  priority?: number;
  createdAt: number;
}

/**
 * Admission order of a tenant's Pending runs: higher priority first, then older first, then
 * by id (a total order, so every dispatcher agrees).
 */
export function compareAdmission(a: AdmissionCandidate, b: AdmissionCandidate): number {
  return (
    runPriorityOf(b.priority) - runPriorityOf(a.priority) ||
    a.createdAt - b.createdAt ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

/**
 * Hold score of a held item of priority `priority` (the window's per-tenant hold is a sorted
 * set popped lowest score first): the priority band, then the hold order `seq` (a counter
 * shared by the lane, so first in first out within a band). Exact in a double for seq < 10^14.
 */
export const HOLD_BAND = 1e14;
export function holdScore(priority: unknown, seq: number): number {
  return (MAX_RUN_PRIORITY - runPriorityOf(priority)) * HOLD_BAND + (seq % HOLD_BAND);
}

/** The expiry verdict of a run: `expired` now, or the time it will expire (null: never). */
export type ExpiryVerdict = { expired: true; reason: string } | { expired: false; at: number | null };

/**
 * Whether `run` ends `Expired` at `now` with PENDING_RUN_TTL_MS = `ttlMs` (0 or less: never).
 * Only a top-level run that is Pending and was never started expires: a child run is admitted
 * under its parent, and a run that started once (reopened, say) was admitted.
 */
export function pendingExpiry(
  run: Pick<RunState, 'status' | 'startedAt' | 'parentRunId' | 'createdAt' | 'notBefore'>,
  ttlMs: number | undefined,
  now: number,
): ExpiryVerdict {
  if (ttlMs === undefined || !Number.isFinite(ttlMs) || ttlMs <= 0) return { expired: false, at: null };
  if (run.status !== 'Pending' || run.startedAt !== null || run.parentRunId !== null) return { expired: false, at: null };
  // a released delayed start waits from its notBefore, not from when it was booked
  const at = Math.max(run.createdAt, run.notBefore ?? 0) + Math.floor(ttlMs);
  if (now >= at) return { expired: true, reason: `not admitted within PENDING_RUN_TTL_MS (${Math.floor(ttlMs)} ms)` };
  return { expired: false, at };
}

/** The backlog bound's verdict on a start. */
export type BacklogVerdict = { ok: true } | { ok: false; retryAfterSeconds: number };

/**
 * Whether a tenant with `pending` Pending top-level runs may start one more under
 * MAX_PENDING_RUNS = `max` (0: unbounded). Refused, it suggests a retry after `retryAfterSeconds`.
 */
export function backlogVerdict(pending: number, max: number, retryAfterSeconds: number): BacklogVerdict {
  if (!Number.isFinite(max) || max <= 0) return { ok: true };
  if (pending < max) return { ok: true };
  return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(retryAfterSeconds)) };
}

/**
 * Parses a per-tenant override list `tenant=value` separated by commas (`a=50,b=0`), values
 * integers `min`–`max`; empty text: no overrides.
 * @throws Error naming the bad entry
 */
export function parseTenantIntegers(text: string, min: number, max: number): Record<string, number> {
  return parseTenantList(text, {
    valueName: 'value',
    outOfRange: (tenant, value) => (value < min || value > max ? `value of '${tenant}' must be ${min}–${max}` : null),
    fail: (message) => new Error(message),
  });
}
