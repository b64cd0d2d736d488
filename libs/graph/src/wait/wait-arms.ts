/**
 * A Wait node's config read as arms: what can wake it. A plain Wait has one arm (`for` /
 * `until` → timer, `signal`, `token`, `event`); a composite Wait lists its arms under `any`
 * (the first to fire wins, the others are withdrawn in the same commit) or `all` (it fires
 * once every arm holds at the same tick). Filters are the graph's one condition language
 * (`{ path, op, value? }`), evaluated over `{ payload, input }` for a signal and
 * `{ data, input }` for an event (`input`: the run's input).
 */
import { evaluateCondition } from '../conditions';
import type { EdgeCondition, Json, JsonObject, OutputEnvelope } from '../model';
import { parseCondition } from '../parse/condition';
import { schemaObject } from '../parse/member-check';
import { looksLikeTimestamp, parseIsoDuration, parseTimestamp } from './wait-time';
import { isValidPath } from '../conditions';

export type WaitArm =
  | { kind: 'timer'; for: string | null; until: string | null }
  | { kind: 'signal'; channel: string; filter: EdgeCondition | null }
  | { kind: 'token'; timeoutMs: number; timeout: string; schema: JsonObject | null; singleUse: boolean }
  | { kind: 'event'; name: string; filter: EdgeCondition | null };
export type WaitArmKind = WaitArm['kind'];

/** How a Wait's arms combine: `one` (a plain Wait), `any`, `all`. */
export type WaitMode = 'one' | 'any' | 'all';

export interface WaitPlan {
  mode: WaitMode;
  arms: WaitArm[];
}

/** Most arms one composite Wait lists. */
export const MAX_WAIT_ARMS = 16;
/** Longest token timeout (a waitpoint must expire). */
const MAX_TOKEN_TIMEOUT_MS = 366 * 86_400_000;
const EVENT_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.:/-]{0,127}$/;

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

type ArmParse = { ok: true; arm: WaitArm } | { ok: false; errors: string[] };

function parseFilter(raw: unknown, at: string): { ok: true; filter: EdgeCondition | null } | { ok: false; errors: string[] } {
  if (raw === undefined || raw === null) return { ok: true, filter: null };
  const c = parseCondition(raw, undefined);
  return c.ok ? { ok: true, filter: c.condition } : { ok: false, errors: c.errors.map((e) => `${at}.filter: ${e}`) };
}

function timerArm(forText: unknown, until: unknown, at: string): ArmParse {
  const errors: string[] = [];
  if (forText !== undefined && typeof forText !== 'string') errors.push(`${at} must be a string duration`);
  if (typeof forText === 'string') {
    const d = parseIsoDuration(forText);
    if ('error' in d) errors.push(`${at} ${d.error}`);
  }
  if (until !== undefined && typeof until !== 'string') errors.push(`${at} until must be a string`);
  if (typeof until === 'string') {
    if (looksLikeTimestamp(until)) {
      const t = parseTimestamp(until);
      if ('error' in t) errors.push(`${at} ${t.error}`);
    } else if (!isValidPath(until)) {
      errors.push(`${at} '${until}' is neither an RFC 3339 timestamp nor a dot path`);
    }
  }
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, arm: { kind: 'timer', for: typeof forText === 'string' ? forText : null, until: typeof until === 'string' ? until : null } };
}

function tokenArm(raw: unknown, at: string): ArmParse {
  if (!isObj(raw)) return { ok: false, errors: [`${at} must be an object { timeout, schema?, singleUse? }`] };
  const errors: string[] = [];
  for (const k of Object.keys(raw)) if (!['timeout', 'schema', 'singleUse'].includes(k)) errors.push(`${at}: unknown member '${k}'`);
  let timeoutMs = 0;
  if (typeof raw.timeout !== 'string') errors.push(`${at}.timeout is required: an ISO-8601 duration like PT1H (a token must expire)`);
  else {
    const d = parseIsoDuration(raw.timeout);
    if ('error' in d) errors.push(`${at}.timeout ${d.error}`);
    else if (d.ms < 1000 || d.ms > MAX_TOKEN_TIMEOUT_MS) errors.push(`${at}.timeout must be between 1 second and 366 days`);
    else timeoutMs = d.ms;
  }
  if (raw.schema !== undefined && raw.schema !== null) {
    const s = schemaObject(raw.schema);
    if ('error' in s) errors.push(`${at}.schema ${s.error}`);
  }
  if (raw.singleUse !== undefined && typeof raw.singleUse !== 'boolean') errors.push(`${at}.singleUse must be a boolean`);
  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    arm: { kind: 'token', timeoutMs, timeout: raw.timeout as string, schema: isObj(raw.schema) ? (raw.schema as JsonObject) : null, singleUse: raw.singleUse !== false },
  };
}

function namedArm(kind: 'signal' | 'event', name: unknown, filter: unknown, at: string): ArmParse {
  const errors: string[] = [];
  const pattern = kind === 'signal' ? /^[A-Za-z0-9_-]{1,64}$/ : EVENT_NAME;
  if (typeof name !== 'string' || !pattern.test(name)) {
    errors.push(kind === 'signal' ? `${at} must name a channel (1–64 of A-Z a-z 0-9 _ -)` : `${at} must name an event (1–128 of A-Z a-z 0-9 _ . : / -, not starting with a symbol)`);
  }
  const f = parseFilter(filter, at);
  if (!f.ok) errors.push(...f.errors);
  if (errors.length > 0 || !f.ok) return { ok: false, errors };
  return { ok: true, arm: kind === 'signal' ? { kind, channel: name as string, filter: f.filter } : { kind, name: name as string, filter: f.filter } };
}

/** One arm of `any`/`all`: exactly one of signal, token, timer, event (plus a filter for signal/event). */
function parseArm(raw: unknown, at: string): ArmParse {
  if (!isObj(raw)) return { ok: false, errors: [`${at} must be an object with one of signal, token, timer or event`] };
  const given = (['signal', 'token', 'timer', 'event'] as const).filter((k) => raw[k] !== undefined);
  if (given.length !== 1) return { ok: false, errors: [`${at} needs exactly one of signal, token, timer or event${given.length > 1 ? ` (given: ${given.join(', ')})` : ''}`] };
  const kind = given[0]!;
  const allowed = kind === 'signal' || kind === 'event' ? [kind, 'filter'] : [kind];
  const unknown = Object.keys(raw).filter((k) => !allowed.includes(k));
  if (unknown.length > 0) return { ok: false, errors: unknown.map((k) => `${at}: member '${k}' is not read by a ${kind} arm`) };
  if (kind === 'token') return tokenArm(raw.token, `${at}.token`);
  if (kind === 'timer') {
    const t = raw.timer;
    return typeof t === 'string' && looksLikeTimestamp(t) ? timerArm(undefined, t, `${at}.timer`) : timerArm(t, undefined, `${at}.timer`);
  }
  return namedArm(kind, raw[kind], raw['filter'], `${at}.${kind}`);
}

/** The arms of a Wait config, or the reasons it has none. */
export function waitPlanOf(config: JsonObject): { ok: true; plan: WaitPlan } | { ok: false; errors: string[] } {
  const given = (['for', 'until', 'signal', 'token', 'event', 'any', 'all'] as const).filter((m) => config[m] !== undefined);
  if (given.length === 0) return { ok: false, errors: ['config needs one of for (a duration), until (a time), signal (a channel), token, event, any or all for Wait nodes'] };
  if (given.length > 1) return { ok: false, errors: [`config.${given.join(' and config.')} cannot be given together; give one`] };
  const m = given[0]!;
  if (config['filter'] !== undefined && m !== 'signal' && m !== 'event') return { ok: false, errors: ['config.filter is read only beside config.signal or config.event'] };
  if (m === 'any' || m === 'all') {
    const list = config[m];
    if (!Array.isArray(list) || list.length === 0 || list.length > MAX_WAIT_ARMS) {
      return { ok: false, errors: [`config.${m} must be a list of 1–${MAX_WAIT_ARMS} arms ({signal}, {token}, {timer}, {event})`] };
    }
    const arms: WaitArm[] = [];
    const errors: string[] = [];
    list.forEach((raw, i) => {
      const a = parseArm(raw, `config.${m}.${i}`);
      if (a.ok) arms.push(a.arm);
      else errors.push(...a.errors);
    });
    return errors.length > 0 ? { ok: false, errors } : { ok: true, plan: { mode: m, arms } };
  }
  const one = (a: ArmParse): ReturnType<typeof waitPlanOf> => (a.ok ? { ok: true, plan: { mode: 'one', arms: [a.arm] } } : a);
  if (m === 'for') return one(timerArm(config['for'], undefined, 'config.for'));
  if (m === 'until') return one(timerArm(undefined, config['until'], 'config.until'));
  if (m === 'token') return one(tokenArm(config['token'], 'config.token'));
  return one(namedArm(m, config[m], config['filter'], `config.${m}`));
}

/** The scope a signal's or an event's filter reads. */
export function filterScope(kind: 'signal' | 'event', payload: Json, runInput: Json): Json {
  return kind === 'signal' ? { payload, input: runInput } : { data: payload, input: runInput };
}

/** Whether `filter` holds over `scope` (no filter: always). Fails closed like an edge condition. */
export function filterHolds(filter: EdgeCondition | null, scope: Json): boolean {
  return filter === null || evaluateCondition(filter, scope as unknown as OutputEnvelope);
}
