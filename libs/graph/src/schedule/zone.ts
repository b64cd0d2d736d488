/**
 * IANA time zone arithmetic for schedule slots, from `Intl` (no Date global): a zone's UTC
 * offset at an instant, and the instant a local wall-clock time names — with the DST rule
 * spelled out: a wall time repeated by a fall-back names its FIRST occurrence, and a wall time
 * that a spring-forward skips names the first valid instant after the gap (the transition).
 * Wall times are epoch-ms numbers read as if the zone were UTC ("floating" local time).
 */
import { daysFromCivil } from '../wait/civil-time';

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterOf(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      era: 'short',
    });
    formatters.set(zone, f);
  }
  return f;
}

/** True when `zone` is an IANA zone name this runtime knows (`UTC` included). */
export function isTimeZone(zone: string): boolean {
  if (zone.length === 0 || zone.length > 64) return false;
  try {
    formatterOf(zone);
    return true;
  } catch {
    return false;
  }
}

/** The wall-clock reading of `zone` at instant `t` (epoch ms, whole seconds kept), as a floating-time number. */
export function wallOf(zone: string, t: number): number {
  const parts = formatterOf(zone).formatToParts(t);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  let year = get('year');
  if (parts.find((p) => p.type === 'era')?.value === 'BC') year = 1 - year;
  const ms = ((t % 1000) + 1000) % 1000;
  return utcMs(year, get('month'), get('day'), get('hour'), get('minute'), get('second')) + ms;
}

/** The UTC offset of `zone` at instant `t`, ms (local = t + offset). */
export function offsetAt(zone: string, t: number): number {
  return wallOf(zone, t) - t;
}

const DAY = 86_400_000;

/**
 * The instant local wall time `wall` names in `zone`. Repeated (fall-back): the first
 * occurrence. Skipped (spring-forward gap): the first valid instant after the gap. Offsets
 * are looked up a day either side, so a zone may change offset at most once in two days.
 */
export function instantOfWall(zone: string, wall: number): number {
  const before = offsetAt(zone, wall - DAY);
  const after = offsetAt(zone, wall + DAY);
  const valid = [wall - before, wall - after].filter((t) => wallOf(zone, t) === wall).sort((a, b) => a - b);
  if (valid.length > 0) return valid[0]!;
  // in a gap: the offset grew from `before` to `after`; find the transition between the two readings
  let lo = wall - Math.max(before, after);
  let hi = wall - Math.min(before, after);
  while (hi - lo > 1000) {
    const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
    if (mid <= lo) break;
    if (wallOf(zone, mid) > wall) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** `±hh:mm` of an offset in ms. */
export function offsetText(offsetMs: number): string {
  const sign = offsetMs < 0 ? '-' : '+';
  const m = Math.round(Math.abs(offsetMs) / 60_000);
  return `${sign}${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
}

function utcMs(y: number, mo: number, d: number, h: number, mi: number, s: number): number {
  return daysFromCivil(y, mo, d) * DAY + ((h * 60 + mi) * 60 + s) * 1000;
}
