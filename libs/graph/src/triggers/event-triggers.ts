/**
 * Event triggers: a definition's graph member `triggers: [{ event, filter?, input? }]` starts one
 * run per event it matches (`POST /v1/events`). `event` is a name or a pattern where `*` stands
 * for any run of characters (`order.*`); `filter` is the graph's one condition language over the
 * event (`{ data, name, id, ts }`); `input` is the dot path of the run input in that same
 * document (default `data`).
 *
 * Judging an event never throws: it answers matched (with the run input), notMatched (with why)
 * or filterError (with why). A filter that can never be true of the event's data (it compares a
 * number and the value is a string, or the value is an object) is an error, not a silent miss:
 * senders see it on `GET /v1/events/{id}`.
 */
import type { EdgeCondition, Json } from '../model';
import { compareValues } from '../conditions/evaluate';
import { isExactNumber } from '../conditions/compare';
import { isValidPath, resolvePath } from '../conditions/path';
import { parseCondition } from '../parse/condition';

/** One subscription of a definition. */
export interface EventTrigger {
  /** an event name, or a pattern with `*` */
  event: string;
  filter: EdgeCondition | null;
  /** dot path of the run input in `{ data, name, id, ts }` */
  input: string;
}

/** An event as the intake keeps it. */
export interface TriggerEvent {
  id: string;
  name: string;
  data: Json;
  ts: string | null;
}

/** What a definition's triggers make of one event. */
export type TriggerVerdict =
  | { outcome: 'matched'; trigger: number; input: Json }
  | { outcome: 'notMatched'; reason: string }
  | { outcome: 'filterError'; trigger: number; reason: string };

/** Most triggers one graph declares. */
export const MAX_EVENT_TRIGGERS = 16;

/** A trigger's pattern: the characters of an event name (`A-Z a-z 0-9 . _ - : /`) plus `*`. */
const EVENT_PATTERN = /^[A-Za-z0-9._:/*-]{1,128}$/;

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Parses the `triggers` member; errors name the trigger's index. */
export function parseEventTriggers(raw: unknown): { ok: true; triggers: EventTrigger[] } | { ok: false; errors: string[] } {
  if (!Array.isArray(raw)) return { ok: false, errors: [`'triggers' must be a list of { event, filter?, input? }, not ${raw === null ? 'null' : typeof raw}`] };
  if (raw.length > MAX_EVENT_TRIGGERS) return { ok: false, errors: [`'triggers' lists ${raw.length} triggers; at most ${MAX_EVENT_TRIGGERS}`] };
  const errors: string[] = [];
  const triggers: EventTrigger[] = [];
  raw.forEach((t, i) => {
    const at = `triggers[${i}]`;
    if (!isObj(t)) {
      errors.push(`${at} must be an object { event, filter?, input? }`);
      return;
    }
    const extra = Object.keys(t).filter((k) => k !== 'event' && k !== 'filter' && k !== 'input');
    for (const k of extra) errors.push(`${at} has an unknown member '${k}'`);
    const event = t['event'];
    if (typeof event !== 'string' || !EVENT_PATTERN.test(event)) {
      errors.push(`${at}.event must be an event name or a pattern with '*' (1–128 of A-Z a-z 0-9 . _ - : / *), not ${JSON.stringify(event) ?? 'absent'}`);
    }
    let filter: EdgeCondition | null = null;
    if (t['filter'] !== undefined && t['filter'] !== null) {
      const c = parseCondition(t['filter'], undefined);
      if (c.ok) filter = c.condition;
      else for (const e of c.errors) errors.push(`${at}.filter: ${e}`);
    }
    const input = t['input'] ?? 'data';
    if (typeof input !== 'string' || !isValidPath(input)) errors.push(`${at}.input must be a dot path into { data, name, id, ts } (e.g. data.order), not ${JSON.stringify(input)}`);
    if (extra.length === 0 && typeof event === 'string' && EVENT_PATTERN.test(event) && typeof input === 'string' && isValidPath(input)) {
      triggers.push({ event, filter, input });
    }
  });
  return errors.length > 0 ? { ok: false, errors } : { ok: true, triggers };
}

/** Whether `pattern` (with `*` for any run of characters, dots included) matches the event `name`. */
export function eventNameMatches(pattern: string, name: string): boolean {
  const parts = pattern.split('*');
  if (parts.length === 1) return pattern === name;
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (!name.startsWith(first) || name.length < first.length + last.length || !name.endsWith(last)) return false;
  let at = first.length;
  const end = name.length - last.length;
  for (const mid of parts.slice(1, -1)) {
    const found = name.indexOf(mid, at);
    if (found < 0 || found + mid.length > end) return false;
    at = found + mid.length;
  }
  return true;
}

/** The document filters and input paths read. */
export function triggerScope(event: TriggerEvent): Json {
  return { data: event.data, name: event.name, id: event.id, ts: event.ts };
}

type Kind = 'number' | 'string' | 'boolean' | 'null' | 'object' | 'array';

function kindOf(v: unknown): Kind {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'boolean';
  if (isExactNumber(v)) return 'number';
  return 'object';
}

/** One filter over the scope: holds, fails (with why) or cannot be judged (with why). */
function judgeFilter(filter: EdgeCondition, scope: Json): { holds: true } | { holds: false; reason: string } | { error: string } {
  const r = resolvePath(scope, filter.path);
  if (filter.op === 'NotExists') return r.found ? { holds: false, reason: `${filter.path} is present` } : { holds: true };
  if (!r.found) return { holds: false, reason: `${filter.path} is absent` };
  if (filter.op === 'Exists') return { holds: true };
  const actual = kindOf(r.value);
  const expected = kindOf(filter.value);
  if (actual !== expected) {
    return { error: `${filter.path} is ${actual === 'array' || actual === 'object' ? `an ${actual}` : `a ${actual}`}; the filter compares it ${filter.op} ${JSON.stringify(filter.value)} (a ${expected})` };
  }
  if ((actual === 'boolean' || actual === 'null') && filter.op !== 'Eq' && filter.op !== 'Ne') {
    return { error: `${filter.path} is a ${actual}; only Eq and Ne compare ${actual}s, not ${filter.op}` };
  }
  return compareValues(filter.op, r.value, filter.value) ? { holds: true } : { holds: false, reason: `${filter.path} ${filter.op} ${JSON.stringify(filter.value)} is false` };
}

/**
 * What `triggers` make of `event`: the first trigger whose pattern matches the name and whose
 * filter holds starts the run (its input read at `input`); a filter error is reported unless a
 * later trigger matches.
 */
export function judgeEvent(triggers: readonly EventTrigger[], event: TriggerEvent): TriggerVerdict {
  const scope = triggerScope(event);
  let error: TriggerVerdict | null = null;
  const misses: string[] = [];
  for (const [i, t] of triggers.entries()) {
    if (!eventNameMatches(t.event, event.name)) {
      misses.push(`triggers[${i}] listens for '${t.event}'`);
      continue;
    }
    const f = t.filter === null ? ({ holds: true } as const) : judgeFilter(t.filter, scope);
    if ('error' in f) {
      error ??= { outcome: 'filterError', trigger: i, reason: `triggers[${i}].filter: ${f.error}` };
      continue;
    }
    if (!f.holds) {
      misses.push(`triggers[${i}].filter: ${f.reason}`);
      continue;
    }
    const input = resolvePath(scope, t.input);
    return { outcome: 'matched', trigger: i, input: input.found && input.value !== undefined ? (input.value as Json) : null };
  }
  return error ?? { outcome: 'notMatched', reason: misses.length > 0 ? misses.join('; ') : 'the graph declares no triggers' };
}

/** The patterns of `triggers`, as the store indexes them to find subscribers by name. */
export function triggerPatterns(triggers: readonly EventTrigger[]): string[] {
  return [...new Set(triggers.map((t) => t.event))];
}
