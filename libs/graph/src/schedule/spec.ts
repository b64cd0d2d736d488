/**
 * A schedule's `spec` and `policy` (`/v1/schedules`): checked once, compiled for the slot
 * arithmetic of ./slots. Every problem is an Issue keyed by its member (`spec.cron`,
 * `spec.timezone`, `policy.catchup.window`, …), so the API answers 400 naming it.
 */
import { Cron } from 'croner';
import type { Issue } from '../model';
import { parseIsoDuration, parseTimestamp } from '../wait';
import { isTimeZone } from './zone';

export const OVERLAP_POLICIES = ['skip', 'bufferOne', 'bufferAll', 'cancelPrevious', 'allowAll'] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];
export const CATCHUP_MODES = ['latest', 'all', 'none'] as const;
export type CatchupMode = (typeof CATCHUP_MODES)[number];

/** The spec as stored and answered (the request's members, defaults filled in). */
export interface ScheduleSpec {
  cron?: string;
  every?: string;
  timezone: string;
  startAt?: string;
  endAt?: string;
  jitter?: string;
}

export interface SchedulePolicy {
  overlap: OverlapPolicy;
  catchup: { window: string; mode: CatchupMode };
  pauseOnFailure: boolean;
}

/** The default policy: one live run at a time, and after downtime one catch-up run within the last hour. */
export const DEFAULT_SCHEDULE_POLICY: SchedulePolicy = { overlap: 'skip', catchup: { window: 'PT1H', mode: 'latest' }, pauseOnFailure: false };

/** A checked spec ready for slot arithmetic. */
export interface CompiledSpec {
  /** the cron pattern read on the zone's wall clock (croner in UTC: floating local time), or null */
  cron: Cron | null;
  /** a fixed interval, ms, counted from `startMs` (or the epoch), or null */
  everyMs: number | null;
  zone: string;
  startMs: number | null;
  endMs: number | null;
  jitterMs: number;
}

/** Shortest `every` a spec may give, ms (a shorter one would be a loop, not a schedule). */
export const MIN_EVERY_MS = 1000;

type Checked<T> = { ok: true; value: T } | { ok: false; issues: Issue[] };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function cronOf(text: string, issues: Issue[]): Cron | null {
  const fields = text.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) {
    issues.push({ key: 'spec.cron', message: `'${text}' has ${fields.length} fields; give 5 (minute hour day month weekday) or 6 (seconds first)` });
    return null;
  }
  try {
    // no function: croner only computes times, it schedules nothing
    return new Cron(fields.join(' '), { timezone: 'UTC' });
  } catch (err) {
    issues.push({ key: 'spec.cron', message: `'${text}' is not a cron pattern: ${err instanceof Error ? err.message : String(err)}` });
    return null;
  }
}

function durationMember(v: unknown, key: string, issues: Issue[]): number | null {
  if (typeof v !== 'string') {
    issues.push({ key, message: `${key} must be an ISO-8601 duration like PT15M` });
    return null;
  }
  const d = parseIsoDuration(v);
  if ('error' in d) {
    issues.push({ key, message: `${key} ${d.error}` });
    return null;
  }
  return d.ms;
}

function instantMember(v: unknown, key: string, issues: Issue[]): number | null {
  const t = typeof v === 'string' ? parseTimestamp(v) : { error: 'must be an RFC 3339 timestamp' };
  if ('error' in t) {
    issues.push({ key, message: `${key} ${t.error}` });
    return null;
  }
  return t.at;
}

/** Checks a request's `spec`; answers the stored spec (timezone defaulted to UTC) and its compiled form. */
export function checkScheduleSpec(raw: unknown): Checked<{ spec: ScheduleSpec; compiled: CompiledSpec }> {
  if (!isObject(raw)) return { ok: false, issues: [{ key: 'spec', message: 'spec must be an object with cron or every' }] };
  const issues: Issue[] = [];
  for (const k of Object.keys(raw)) {
    if (!['cron', 'every', 'timezone', 'startAt', 'endAt', 'jitter'].includes(k)) issues.push({ key: `spec.${k}`, message: `spec.${k} is not a member of a schedule spec` });
  }
  const spec: ScheduleSpec = { timezone: 'UTC' };
  let cron: Cron | null = null;
  let everyMs: number | null = null;
  if (raw.cron !== undefined && raw.cron !== null) {
    if (typeof raw.cron !== 'string') issues.push({ key: 'spec.cron', message: 'spec.cron must be a string' });
    else {
      spec.cron = raw.cron.trim();
      cron = cronOf(raw.cron, issues);
    }
  }
  if (raw.every !== undefined && raw.every !== null) {
    everyMs = durationMember(raw.every, 'spec.every', issues);
    if (everyMs !== null && everyMs < MIN_EVERY_MS) issues.push({ key: 'spec.every', message: `spec.every must be at least ${MIN_EVERY_MS / 1000} s` });
    if (typeof raw.every === 'string') spec.every = raw.every;
  }
  if (spec.cron === undefined && spec.every === undefined && !issues.some((i) => i.key === 'spec.cron' || i.key === 'spec.every')) {
    issues.push({ key: 'spec.cron', message: 'a spec needs cron or every' });
  }
  if (raw.timezone !== undefined && raw.timezone !== null) {
    if (typeof raw.timezone !== 'string' || !isTimeZone(raw.timezone)) issues.push({ key: 'spec.timezone', message: `spec.timezone ${JSON.stringify(raw.timezone)} is not an IANA time zone like America/New_York` });
    else spec.timezone = raw.timezone;
  }
  const startMs = raw.startAt == null ? null : instantMember(raw.startAt, 'spec.startAt', issues);
  const endMs = raw.endAt == null ? null : instantMember(raw.endAt, 'spec.endAt', issues);
  if (startMs !== null) spec.startAt = raw.startAt as string;
  if (endMs !== null) spec.endAt = raw.endAt as string;
  if (startMs !== null && endMs !== null && endMs <= startMs) issues.push({ key: 'spec.endAt', message: 'spec.endAt must be later than spec.startAt' });
  const jitterMs = raw.jitter == null ? 0 : (durationMember(raw.jitter, 'spec.jitter', issues) ?? 0);
  if (raw.jitter != null && typeof raw.jitter === 'string') spec.jitter = raw.jitter;
  if (issues.length > 0) return { ok: false, issues };
  return { ok: true, value: { spec, compiled: { cron, everyMs, zone: spec.timezone, startMs, endMs, jitterMs } } };
}

/** Checks a request's `policy` (absent members take {@link DEFAULT_SCHEDULE_POLICY}'s). */
export function checkSchedulePolicy(raw: unknown): Checked<SchedulePolicy> {
  if (raw === undefined || raw === null) return { ok: true, value: DEFAULT_SCHEDULE_POLICY };
  if (!isObject(raw)) return { ok: false, issues: [{ key: 'policy', message: 'policy must be an object' }] };
  const issues: Issue[] = [];
  for (const k of Object.keys(raw)) {
    if (!['overlap', 'catchup', 'pauseOnFailure'].includes(k)) issues.push({ key: `policy.${k}`, message: `policy.${k} is not a member of a schedule policy` });
  }
  if (isObject(raw.catchup)) {
    for (const k of Object.keys(raw.catchup)) {
      if (!['window', 'mode'].includes(k)) issues.push({ key: `policy.catchup.${k}`, message: `policy.catchup.${k} is not a member of catchup { window, mode }` });
    }
  }
  const policy: SchedulePolicy = { ...DEFAULT_SCHEDULE_POLICY, catchup: { ...DEFAULT_SCHEDULE_POLICY.catchup } };
  if (raw.overlap !== undefined) {
    if (!OVERLAP_POLICIES.includes(raw.overlap as OverlapPolicy)) issues.push({ key: 'policy.overlap', message: `policy.overlap must be one of ${OVERLAP_POLICIES.join(', ')}` });
    else policy.overlap = raw.overlap as OverlapPolicy;
  }
  if (raw.catchup !== undefined) {
    if (!isObject(raw.catchup)) issues.push({ key: 'policy.catchup', message: 'policy.catchup must be an object { window, mode }' });
    else {
      if (raw.catchup.window !== undefined && durationMember(raw.catchup.window, 'policy.catchup.window', issues) !== null) policy.catchup.window = raw.catchup.window as string;
      if (raw.catchup.mode !== undefined) {
        if (!CATCHUP_MODES.includes(raw.catchup.mode as CatchupMode)) issues.push({ key: 'policy.catchup.mode', message: `policy.catchup.mode must be one of ${CATCHUP_MODES.join(', ')}` });
        else policy.catchup.mode = raw.catchup.mode as CatchupMode;
      }
    }
  }
  if (raw.pauseOnFailure !== undefined) {
    if (typeof raw.pauseOnFailure !== 'boolean') issues.push({ key: 'policy.pauseOnFailure', message: 'policy.pauseOnFailure must be true or false' });
    else policy.pauseOnFailure = raw.pauseOnFailure;
  }
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value: policy };
}

/** Compiles a stored spec again (a dispatcher reading the row); throws if it no longer checks. */
export function compileScheduleSpec(spec: unknown): CompiledSpec {
  const c = checkScheduleSpec(spec);
  if (!c.ok) throw new Error(`stored schedule spec no longer checks: ${c.issues.map((i) => i.message).join('; ')}`);
  return c.value.compiled;
}
