/**
 * Slot arithmetic of a schedule, pure (times are epoch-ms arguments): the next slot after an
 * instant, the slots of a span, a slot's deterministic jitter, what catch-up makes of the slots
 * that came due while nothing fired, and what the overlap policy makes of one slot.
 *
 * The DST rule: a cron pattern is read on the schedule zone's wall clock. A wall time that a
 * spring-forward skips runs at the first valid instant after the gap (`30 2 * * *` in
 * America/New_York on 2026-03-08 runs at 03:00 EDT), several such times collapse into that one
 * run, and a wall time a fall-back repeats runs once, at its first occurrence.
 */
import { instantOfWall, offsetAt, offsetText, wallOf } from './zone';
import { isoOf } from '../wait/civil-time';
import type { CatchupMode, CompiledSpec, OverlapPolicy } from './spec';

/** Wall times tried per next-slot question before giving up (a pattern like `0 0 30 2 *` never matches). */
const MAX_WALL_STEPS = 1000;

function nextCronInstant(spec: CompiledSpec, cron: NonNullable<CompiledSpec['cron']>, after: number): number | null {
  let wall = wallOf(spec.zone, after);
  for (let i = 0; i < MAX_WALL_STEPS; i++) {
    // croner runs in UTC over floating local time: it answers the next matching wall time
    const next = cron.nextRun(isoOf(wall));
    if (!next) return null;
    wall = next.getTime();
    const at = instantOfWall(spec.zone, wall);
    // a wall time whose (first) instant is not after `after` was a repeat of a time already run
    if (at > after) return at;
  }
  return null;
}

function nextEveryInstant(spec: CompiledSpec, every: number, after: number): number {
  const anchor = spec.startMs ?? 0;
  if (after < anchor) return anchor;
  return anchor + (Math.floor((after - anchor) / every) + 1) * every;
}

/** The first slot strictly after `after`, within the spec's startAt/endAt, or null when none is left. */
export function nextSlot(spec: CompiledSpec, after: number): number | null {
  const from = spec.startMs !== null && after < spec.startMs ? spec.startMs - 1 : after;
  const cands: number[] = [];
  if (spec.cron) {
    const c = nextCronInstant(spec, spec.cron, from);
    if (c !== null) cands.push(c);
  }
  if (spec.everyMs !== null) cands.push(nextEveryInstant(spec, spec.everyMs, from));
  if (cands.length === 0) return null;
  const at = Math.min(...cands);
  return spec.endMs !== null && at > spec.endMs ? null : at;
}

/** The slots in (`after`, `until`], oldest first, at most `limit` of them. */
export function slotsBetween(spec: CompiledSpec, after: number, until: number, limit: number): number[] {
  const out: number[] = [];
  let t = after;
  while (out.length < limit) {
    const s = nextSlot(spec, t);
    if (s === null || s > until) break;
    out.push(s);
    t = s;
  }
  return out;
}

/** One slot as a preview lists it: the instant in UTC, the zone's wall clock then, and its offset. */
export interface SlotView {
  at: string;
  local: string;
  utcOffset: string;
}

export function slotView(zone: string, at: number): SlotView {
  const off = offsetAt(zone, at);
  const utcOffset = offsetText(off);
  return { at: isoOf(at), local: isoOf(at + off).replace(/\.\d{3}Z$/, utcOffset), utcOffset };
}

/** The next `count` slots after `after`, for a preview. */
export function previewSlots(spec: CompiledSpec, after: number, count: number): SlotView[] {
  return slotsBetween(spec, after, Number.MAX_SAFE_INTEGER, count).map((at) => slotView(spec.zone, at));
}

/**
 * The jitter of one slot: a fixed offset in [0, jitterMs) from the schedule id and the slot (FNV-1a),
 * so every replica, and every retry of the same slot, fires it at the same instant.
 */
export function slotJitterMs(scheduleId: string, slotAt: number, jitterMs: number): number {
  if (jitterMs <= 0) return 0;
  let h = 0x811c9dc5;
  for (const ch of `${scheduleId}:${slotAt}`) {
    h ^= ch.charCodeAt(0);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % Math.floor(jitterMs);
}

/** What catch-up decided for one due slot. */
export type CatchupVerdict = { slotAt: number; start: true } | { slotAt: number; start: false; reason: string };

/**
 * Catch-up over the slots that came due (`due`, oldest first, each at or before `now`; `newestDue`
 * the newest due slot overall, which a bounded pass may not have listed). A slot at most
 * `onTimeMs` old is on time and starts whatever the mode. A later one within `windowMs`: `all`
 * starts it; `latest` starts it only when it is the newest due slot; `none` never. Older than the
 * window: skipped.
 */
export function catchupVerdicts(due: readonly number[], newestDue: number, now: number, catchup: { windowMs: number; mode: CatchupMode }, onTimeMs: number): CatchupVerdict[] {
  return due.map((slotAt): CatchupVerdict => {
    const late = now - slotAt;
    if (late <= onTimeMs) return { slotAt, start: true };
    if (late > catchup.windowMs) return { slotAt, start: false, reason: `missed by ${Math.round(late / 1000)} s, past the catch-up window (${Math.round(catchup.windowMs / 1000)} s)` };
    if (catchup.mode === 'all') return { slotAt, start: true };
    if (catchup.mode === 'latest' && slotAt === newestDue) return { slotAt, start: true };
    return { slotAt, start: false, reason: catchup.mode === 'none' ? 'missed, and catch-up mode is none' : 'superseded by a later slot (catch-up mode latest)' };
  });
}

/** What the overlap policy makes of a slot that may start. */
export type OverlapVerdict = 'start' | 'skippedOverlap' | 'buffered' | 'cancelPrevious';

/**
 * A slot's start under the overlap policy, given the schedule's live runs and the slots already
 * buffered. `skip` never lets two runs be live; `bufferOne` keeps at most one slot waiting;
 * `bufferAll` queues every slot (in order: nothing overtakes a buffered slot); `cancelPrevious`
 * cancels the live runs and starts; `allowAll` starts.
 */
export function overlapVerdict(policy: OverlapPolicy, live: number, buffered: number): OverlapVerdict {
  if (policy === 'allowAll') return 'start';
  if (policy === 'cancelPrevious') return live > 0 ? 'cancelPrevious' : 'start';
  if (policy === 'skip') return live > 0 ? 'skippedOverlap' : 'start';
  if (policy === 'bufferOne') return live === 0 && buffered === 0 ? 'start' : buffered === 0 ? 'buffered' : 'skippedOverlap';
  return live === 0 && buffered === 0 ? 'start' : 'buffered';
}

/** The run's request id for a slot: run creation dedupes on it, so a slot starts one run however often it is decided. */
export function slotRequestId(scheduleId: string, slotAt: number): string {
  return `schedule:${scheduleId}:${isoOf(slotAt)}`;
}
