/**
 * A delayed start (`startAt` RFC 3339 or `delay` ISO-8601 duration on run creation, and
 * `POST /v1/runs/{id}/reschedule`): when the run may start. Pure: the clock is an argument.
 */
import type { Issue } from '../model';
import { parseIsoDuration, parseTimestamp } from '../wait';

/** The longest delay a start may ask for when MAX_START_DELAY_DAYS is not given, days. */
export const DEFAULT_MAX_START_DELAY_DAYS = 366;

export type DelayedStart = { ok: true; notBefore: number | null } | { ok: false; issues: Issue[] };

/**
 * The run's `notBefore` (epoch ms) from `startAt` or `delay` (at most one of them), or null when
 * neither is given. A time already past starts the run at once (null is not returned for it: the
 * store decides against its own clock). Later than `maxDelayDays` from now is refused.
 */
export function delayedStartOf(body: { startAt?: unknown; delay?: unknown }, now: number, maxDelayDays = DEFAULT_MAX_START_DELAY_DAYS): DelayedStart {
  const { startAt, delay } = body;
  if (startAt !== undefined && startAt !== null && delay !== undefined && delay !== null) {
    return { ok: false, issues: [{ key: 'startAt', message: 'give startAt or delay, not both' }] };
  }
  let at: number;
  if (startAt !== undefined && startAt !== null) {
    if (typeof startAt !== 'string') return { ok: false, issues: [{ key: 'startAt', message: 'startAt must be an RFC 3339 timestamp like 2030-01-31T09:00:00Z' }] };
    const t = parseTimestamp(startAt);
    if ('error' in t) return { ok: false, issues: [{ key: 'startAt', message: `startAt ${t.error}` }] };
    at = t.at;
  } else if (delay !== undefined && delay !== null) {
    if (typeof delay !== 'string') return { ok: false, issues: [{ key: 'delay', message: 'delay must be an ISO-8601 duration like PT10M' }] };
    const d = parseIsoDuration(delay);
    if ('error' in d) return { ok: false, issues: [{ key: 'delay', message: `delay ${d.error}` }] };
    at = now + d.ms;
  } else {
    return { ok: true, notBefore: null };
  }
  if (at - now > maxDelayDays * 86_400_000) {
    return { ok: false, issues: [{ key: startAt !== undefined && startAt !== null ? 'startAt' : 'delay', message: `a start may be delayed at most ${maxDelayDays} days (MAX_START_DELAY_DAYS)` }] };
  }
  return { ok: true, notBefore: at };
}
