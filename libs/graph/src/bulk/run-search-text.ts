/**
 * The free-text member of a run search (`q`), read into one of three matches so the store
 * can answer each with an index it has:
 *
 * - a whole run id (a UUID) matches that run only — a primary-key lookup;
 * - a prefix of a run id as it is written (4 to 35 characters of hex digits and the hyphens
 *   at their places, `3f2a`, `3f2a91c0-1b`) matches the runs whose id starts with it — a range
 *   on the primary key, from the prefix padded with `0` to the prefix padded with `f`;
 * - anything else is text, matched case-insensitively as a substring of the definition's
 *   name or id, the run's reason or failure class, or a metadata pair written `key:value`.
 *   Text wrapped in double quotes (`"1234"`) is always text, so a value that looks like hex
 *   can still be searched as text.
 *
 * Text has no index of its own: the store reads the tenant's runs newest first (the tenant +
 * created index, narrowed by any other member) and filters them, stopping once a page is full.
 */

/** Most characters of `q` (after trimming). */
export const MAX_RUN_SEARCH_TEXT_CHARS = 200;
/** Fewest characters of an id prefix: fewer would be read as text. */
export const MIN_RUN_ID_PREFIX_CHARS = 4;

/** What `q` matches. */
export type RunSearchText =
  | { kind: 'id'; id: string }
  /** ids from `low` to `high` inclusive: the prefix padded with 0 and with f */
  | { kind: 'idPrefix'; prefix: string; low: string; high: string }
  /** a case-insensitive LIKE pattern (`%…%`, with `%`, `_` and `\` escaped by `\`) and the text it was made of */
  | { kind: 'text'; text: string; pattern: string };

const UUID_TEMPLATE = 'xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx';

/** True when `s` is the start of a UUID as written: hex where the template has digits, hyphens where it has them. */
function isIdPrefix(s: string): boolean {
  if (s.length > UUID_TEMPLATE.length) return false;
  for (let i = 0; i < s.length; i++) {
    const ok = UUID_TEMPLATE[i] === '-' ? s[i] === '-' : /[0-9a-f]/.test(s[i]!);
    if (!ok) return false;
  }
  return true;
}

const pad = (prefix: string, digit: string): string => prefix + UUID_TEMPLATE.slice(prefix.length).replace(/x/g, digit);

/** `\`, `%` and `_` escaped for LIKE (its default escape character is `\`). */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * Reads `q` (see the module comment), or answers why it cannot be searched: empty, longer
 * than {@link MAX_RUN_SEARCH_TEXT_CHARS}, or holding a control character.
 */
export function readRunSearchText(q: unknown): RunSearchText | { problem: string } {
  if (typeof q !== 'string') return { problem: 'must be text' };
  const t = q.trim();
  if (t.length === 0) return { problem: 'must not be empty' };
  if (t.length > MAX_RUN_SEARCH_TEXT_CHARS) return { problem: `${t.length} characters, over ${MAX_RUN_SEARCH_TEXT_CHARS}` };
  // eslint-disable-next-line no-control-regex -- control characters are what this refuses
  if (/[\u0000-\u001f\u007f]/.test(t) || /[\uD800-\uDFFF]/.test(t.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, ''))) {
    return { problem: 'must not hold control characters or lone surrogates' };
  }
  const quoted = t.length >= 2 && t.startsWith('"') && t.endsWith('"');
  const text = quoted ? t.slice(1, -1) : t;
  if (text.length === 0) return { problem: 'must not be empty' };
  const lower = text.toLowerCase();
  if (!quoted && lower.length === UUID_TEMPLATE.length && isIdPrefix(lower)) return { kind: 'id', id: lower };
  if (!quoted && lower.length >= MIN_RUN_ID_PREFIX_CHARS && isIdPrefix(lower)) {
    return { kind: 'idPrefix', prefix: lower, low: pad(lower, '0'), high: pad(lower, 'f') };
  }
  return { kind: 'text', text, pattern: `%${escapeLike(text)}%` };
}
