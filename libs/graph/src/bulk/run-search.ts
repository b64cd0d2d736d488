/**
 * Run search: the filters of `GET /v1/runs` and of a bulk action's `filter`,
 * checked once here into a {@link RunSearch} the store turns into SQL. Every refusal is a
 * keyed issue (`status`, `metadata.<key>`, `createdAfter`, …).
 *
 * Ranges are half-open: `…After` is inclusive (at or after), `…Before` exclusive (strictly
 * before). `finishedAfter/Before` match only runs that finished.
 */
import { FAILURE_CLASSES, RUN_STATUSES, type FailureClass, type Issue, type RunStatus } from '../model';
import { metadataKeyProblem, metadataValueProblem, type MetadataLimits, type RunMetadata } from './metadata';
import { readRunSearchText, type RunSearchText } from './run-search-text';

/** The members of a search as they arrive (query strings or a JSON body), unchecked. */
export interface RunSearchInput {
  definitionId?: unknown;
  definitionVersion?: unknown;
  /** one status, a comma-separated list, or an array of them */
  status?: unknown;
  failureClass?: unknown;
  /** `{k: v}` (a JSON body) or `"k:v"` strings (repeated query parameter `metadata=k:v`) */
  metadata?: unknown;
  createdAfter?: unknown;
  createdBefore?: unknown;
  finishedAfter?: unknown;
  finishedBefore?: unknown;
  conversationId?: unknown;
  /** free text: a run id, an id prefix, or text (run-search-text.ts) */
  q?: unknown;
}

/** A checked search: every member optional, all of them ANDed. */
export interface RunSearch {
  definitionId?: string;
  definitionVersion?: number;
  /** any of these statuses */
  statuses?: RunStatus[];
  failureClass?: FailureClass;
  /** every pair present on the run (containment) */
  metadata?: RunMetadata;
  /** RFC 3339 instants (checked; Postgres reads them as timestamptz) */
  createdAfter?: string;
  createdBefore?: string;
  finishedAfter?: string;
  finishedBefore?: string;
  conversationId?: string;
  /** what the free text `q` matches */
  text?: RunSearchText;
}

export type RunSearchCheck = { ok: true; search: RunSearch } | { ok: false; issues: Issue[] };

/** Members of {@link RunSearchInput}, in the order their issues are listed. */
export const RUN_SEARCH_MEMBERS = [
  'definitionId',
  'definitionVersion',
  'status',
  'failureClass',
  'metadata',
  'createdAfter',
  'createdBefore',
  'finishedAfter',
  'finishedBefore',
  'conversationId',
  'q',
] as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** RFC 3339 date-time: a date, `T`, a time with optional fraction, and `Z` or an offset. */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2}))$/;
const MAX_CONVERSATION_ID_CHARS = 128;

const daysIn = (y: number, m: number): number =>
  m === 2 ? (y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(m) ? 30 : 31;

/**
 * `v` when it is an RFC 3339 instant (every field in range), with a space separator turned
 * into `T`; null otherwise. The store hands it to Postgres as a timestamptz.
 */
export function parseInstant(v: unknown): string | null {
  const m = typeof v === 'string' ? RFC3339.exec(v) : null;
  if (!m) return null;
  const [y, mo, d, h, mi, sec] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i]));
  const ok =
    y! >= 1 && mo! >= 1 && mo! <= 12 && d! >= 1 && d! <= daysIn(y!, mo!) && h! <= 23 && mi! <= 59 && sec! <= 59 &&
    (m[9] === undefined || (Number(m[9]) <= 23 && Number(m[10]) <= 59));
  return ok ? (v as string).replace(' ', 'T') : null;
}

/** `"a,b"`, `["a","b"]` or `["a,b"]` → `["a","b"]` (empty parts dropped). */
function listOf(v: unknown): string[] | null {
  const parts = typeof v === 'string' ? [v] : Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : null;
  return parts === null ? null : parts.flatMap((p) => p.split(',')).map((p) => p.trim()).filter((p) => p.length > 0);
}

/** The metadata pairs of a filter: an object, or `k:v` strings (split at the first `:`). */
function metadataPairs(v: unknown, issues: Issue[]): Array<[string, unknown]> {
  if (typeof v === 'string' || Array.isArray(v)) {
    const list = typeof v === 'string' ? [v] : v;
    const pairs: Array<[string, unknown]> = [];
    for (const item of list) {
      const at = typeof item === 'string' ? item.indexOf(':') : -1;
      if (at <= 0) issues.push({ key: 'metadata', message: `'${String(item).slice(0, 80)}' is not key:value` });
      else pairs.push([(item as string).slice(0, at), (item as string).slice(at + 1)]);
    }
    return pairs;
  }
  if (v !== null && typeof v === 'object') return Object.entries(v as Record<string, unknown>);
  issues.push({ key: 'metadata', message: 'must be an object of string values (or key:value strings)' });
  return [];
}

function checkMetadata(v: unknown, limits: MetadataLimits, issues: Issue[]): RunMetadata | undefined {
  const pairs = metadataPairs(v, issues);
  if (pairs.length > limits.maxKeys) issues.push({ key: 'metadata', message: `${pairs.length} pairs, over MAX_RUN_METADATA_KEYS (${limits.maxKeys})` });
  const out: RunMetadata = {};
  for (const [k, val] of pairs) {
    const problem = metadataKeyProblem(k) ?? metadataValueProblem(val, limits);
    if (problem !== null) issues.push({ key: `metadata.${k.slice(0, 64)}`, message: problem });
    else if (out[k] !== undefined && out[k] !== val) issues.push({ key: `metadata.${k}`, message: 'two different values for one key never match' });
    else out[k] = val as string;
  }
  return pairs.length > 0 ? out : undefined;
}

/**
 * Checks a search. Absent (undefined) members do not filter; a present member that is not
 * valid is an issue keyed by its name, so a typo never silently widens a bulk action.
 */
export function checkRunSearch(input: RunSearchInput, limits: MetadataLimits): RunSearchCheck {
  const issues: Issue[] = [];
  const search: RunSearch = {};
  const bad = (key: string, message: string) => issues.push({ key, message });
  if (input.definitionId !== undefined) {
    if (typeof input.definitionId === 'string' && UUID.test(input.definitionId)) search.definitionId = input.definitionId.toLowerCase();
    else bad('definitionId', 'must be a definition id (UUID)');
  }
  if (input.definitionVersion !== undefined) {
    const n = typeof input.definitionVersion === 'string' && /^\d{1,9}$/.test(input.definitionVersion) ? Number(input.definitionVersion) : input.definitionVersion;
    if (typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= 2_147_483_647) search.definitionVersion = n;
    else bad('definitionVersion', 'must be a positive integer');
  }
  if (input.status !== undefined) {
    const list = listOf(input.status);
    const unknown = list?.filter((s) => !(RUN_STATUSES as readonly string[]).includes(s)) ?? [];
    if (list === null || list.length === 0) bad('status', `must be one or more of ${RUN_STATUSES.join(', ')}`);
    else if (unknown.length > 0) bad('status', `unknown status ${unknown.map((s) => `'${s.slice(0, 40)}'`).join(', ')}; one of ${RUN_STATUSES.join(', ')}`);
    else search.statuses = [...new Set(list as RunStatus[])];
  }
  if (input.failureClass !== undefined) {
    if (typeof input.failureClass === 'string' && (FAILURE_CLASSES as readonly string[]).includes(input.failureClass)) search.failureClass = input.failureClass as FailureClass;
    else bad('failureClass', `must be one of ${FAILURE_CLASSES.join(', ')}`);
  }
  if (input.metadata !== undefined) {
    const m = checkMetadata(input.metadata, limits, issues);
    if (m !== undefined) search.metadata = m;
  }
  for (const key of ['createdAfter', 'createdBefore', 'finishedAfter', 'finishedBefore'] as const) {
    if (input[key] === undefined) continue;
    const at = parseInstant(input[key]);
    if (at === null) bad(key, 'must be an RFC 3339 date-time (2026-01-31T12:00:00Z)');
    else search[key] = at;
  }
  if (input.conversationId !== undefined) {
    const c = input.conversationId;
    if (typeof c === 'string' && c.length >= 1 && c.length <= MAX_CONVERSATION_ID_CHARS && !c.includes('\u0000')) search.conversationId = c;
    else bad('conversationId', `must be 1–${MAX_CONVERSATION_ID_CHARS} characters`);
  }
  if (input.q !== undefined) {
    const text = readRunSearchText(input.q);
    if ('problem' in text) bad('q', text.problem);
    else search.text = text;
  }
  return issues.length > 0 ? { ok: false, issues } : { ok: true, search };
}

/** True when the search filters nothing (every run of the tenant matches). */
export function isEmptySearch(s: RunSearch): boolean {
  return Object.values(s).every((v) => v === undefined);
}
