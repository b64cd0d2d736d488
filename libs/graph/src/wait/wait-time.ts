/**
 * When a Wait node's timer fires: `for` (an ISO-8601 duration, counted from the moment the
 * node is reached) or `until` (an RFC 3339 timestamp, or a dot path into the node's input
 * document that holds one). Pure: the clock is an argument.
 */
import { resolvePath } from '../conditions';
import type { Json } from '../model';
import { daysFromCivil, daysInMonth } from './civil-time';

const MS = { W: 604_800_000, D: 86_400_000, H: 3_600_000, M: 60_000, S: 1000 } as const;

/*
 * P[nW][nD][T[nH][nM][nS]]; only the last unit may carry a fraction. Years and months are
 * refused: their length depends on the calendar, and a timer must mean one span of time.
 * A day written after the T ("PT3D") is read as the day it plainly means.
 */
const DURATION = /^P(?:(\d+(?:[.,]\d+)?)W)?(?:(\d+(?:[.,]\d+)?)D)?(?:T(?:(\d+(?:[.,]\d+)?)D)?(?:(\d+(?:[.,]\d+)?)H)?(?:(\d+(?:[.,]\d+)?)M)?(?:(\d+(?:[.,]\d+)?)S)?)?$/;

/** An ISO-8601 duration in ms, or an error sentence. */
export function parseIsoDuration(text: string): { ms: number } | { error: string } {
  if (/^P(?:\d+(?:[.,]\d+)?[YM])/.test(text)) return { error: `'${text}': years and months are not a fixed span of time; give weeks, days, hours, minutes or seconds` };
  const m = DURATION.exec(text);
  if (!m || text === 'P' || text.endsWith('T')) return { error: `'${text}' is not an ISO-8601 duration like PT30S, PT2H or P3D` };
  const parts: Array<[string | undefined, number]> = [
    [m[1], MS.W], [m[2], MS.D], [m[3], MS.D], [m[4], MS.H], [m[5], MS.M], [m[6], MS.S],
  ];
  const given = parts.filter(([v]) => v !== undefined);
  if (given.length === 0) return { error: `'${text}' is not an ISO-8601 duration like PT30S, PT2H or P3D` };
  if (given.slice(0, -1).some(([v]) => /[.,]/.test(v!))) return { error: `'${text}': only the smallest unit may have a fraction` };
  const ms = Math.round(given.reduce((sum, [v, unit]) => sum + Number(v!.replace(',', '.')) * unit, 0));
  if (!Number.isSafeInteger(ms)) return { error: `'${text}' is too long a duration` };
  return { ms };
}

/* RFC 3339 date-time: a full date, T (or t / space), a time, and an offset (Z or ±hh:mm). */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** True when `text` has the shape of an RFC 3339 timestamp (it may still name no real instant). */
export function looksLikeTimestamp(text: string): boolean {
  return RFC3339.test(text);
}

/** An RFC 3339 timestamp as epoch ms, or an error sentence. */
export function parseTimestamp(text: string): { at: number } | { error: string } {
  const m = RFC3339.exec(text);
  if (!m) return { error: `'${text}' is not an RFC 3339 timestamp like 2030-01-31T09:00:00Z` };
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h > 23 || mi > 59 || s > 59) return { error: `'${text}' names no real instant` };
  const fraction = m[7] ? Math.floor(Number(`0${m[7]}`) * 1000) : 0;
  const zone = m[8]!;
  const offsetMin = /^[Zz]$/.test(zone) ? 0 : (zone.startsWith('-') ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));
  const local = daysFromCivil(y, mo, d) * 86_400_000 + ((h * 60 + mi) * 60 + s) * 1000 + fraction;
  return { at: local - offsetMin * 60_000 };
}

/**
 * The wake time of a Wait node's timer config (`for` or `until`) reached at `now`, over its
 * input document (`doc`, as JSON). Null when the config holds no timer.
 */
export function timerWakeAt(config: Record<string, Json | undefined>, doc: Json, now: number): { at: number } | { error: string } | null {
  const forText = config['for'];
  if (typeof forText === 'string') {
    const d = parseIsoDuration(forText);
    return 'error' in d ? { error: `config.for ${d.error}` } : { at: now + d.ms };
  }
  const until = config['until'];
  if (typeof until !== 'string') return null;
  if (looksLikeTimestamp(until)) {
    const t = parseTimestamp(until);
    return 'error' in t ? { error: `config.until ${t.error}` } : t;
  }
  const hit = resolvePath(doc, until);
  if (!hit.found) return { error: `config.until: path '${until}' resolves to nothing in the node's input document` };
  if (typeof hit.value !== 'string') return { error: `config.until: path '${until}' holds ${hit.value === null ? 'null' : typeof hit.value}, not an RFC 3339 timestamp` };
  const t = parseTimestamp(hit.value);
  return 'error' in t ? { error: `config.until: path '${until}' holds ${t.error}` } : t;
}
