/**
 * What a stored document may hold. Documents live in Postgres `jsonb` (and ids, names and
 * messages in `text`), which refuse three things JSON and JavaScript allow: U+0000 in a
 * string or a member name, a lone UTF-16 surrogate (`"\ud800"`), and numbers outside
 * `numeric`'s range (more than {@link MAX_STORED_INTEGER_DIGITS} digits before the point
 * or {@link MAX_STORED_SCALE} after it, e.g. `1e200000`, `0.1e-999999`). Callers refuse
 * such a value where it enters (the API answers 400 naming its path) instead of letting
 * the database refuse it later.
 */
import { JsonNumber } from '../conditions/exact-json';

/** Most digits before the decimal point Postgres `numeric` (and so `jsonb`) stores. */
export const MAX_STORED_INTEGER_DIGITS = 131_072;
/** Most digits after the decimal point Postgres `numeric` stores (its display scale). */
export const MAX_STORED_SCALE = 16_383;

/** One value that cannot be stored: where (dot path from the root, '' for the root) and why. */
export interface UnstorableValue {
  path: string;
  message: string;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why `text` cannot be stored as text, or null when it can. */
export function unstorableText(text: string): string | null {
  if (text.includes('\u0000')) return 'contains U+0000 (NUL), which cannot be stored';
  if (LONE_SURROGATE.test(text)) return 'contains a lone UTF-16 surrogate (not valid Unicode), which cannot be stored';
  return null;
}

// eslint-disable-next-line no-control-regex -- U+0000 is exactly what it finds
const UNSTORABLE_CHARACTERS = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * `text` with each U+0000 and lone surrogate replaced by U+FFFD, so it can be stored: for
 * messages (failure reasons) that are shown, never parsed. Unchanged when storable.
 */
export function storableText(text: string): string {
  return unstorableText(text) === null ? text : text.replace(UNSTORABLE_CHARACTERS, '\ufffd');
}

const NUMBER_TOKEN = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/** Why the JSON number token `text` is outside Postgres `numeric`'s range, or null when it fits. */
export function unstorableNumber(text: string): string | null {
  const m = NUMBER_TOKEN.exec(text);
  if (!m) return null;
  const intPart = m[1] ?? '';
  const fraction = m[2] ?? '';
  const exponent = Number(m[3] ?? '0');
  const significant = (intPart + fraction).replace(/^0+/, '');
  const scale = Math.max(0, fraction.length - exponent);
  const integerDigits = significant === '' ? 0 : significant.length - fraction.length + exponent;
  if (integerDigits > MAX_STORED_INTEGER_DIGITS || scale > MAX_STORED_SCALE) {
    return `number is out of the storable range (at most ${MAX_STORED_INTEGER_DIGITS} digits before the decimal point and ${MAX_STORED_SCALE} after it)`;
  }
  return null;
}

/** A path segment as shown in a path: unstorable characters escaped, never echoed raw. */
function segment(key: string): string {
  return unstorableText(key) === null ? key : JSON.stringify(key).slice(1, -1);
}

const join = (path: string, key: string) => (path === '' ? segment(key) : `${path}.${segment(key)}`);

/**
 * The values of a parsed JSON document (plain values and {@link JsonNumber}s, as
 * `parseJsonExact` returns them) that cannot be stored, in document order, at most
 * `limit` of them. Empty when the whole document can be stored.
 * @param root the path prefix of the document (e.g. `input`)
 */
export function unstorableValues(value: unknown, root = '', limit = 10): UnstorableValue[] {
  const found: UnstorableValue[] = [];
  const visit = (v: unknown, path: string): void => {
    if (found.length >= limit) return;
    if (typeof v === 'string') {
      const why = unstorableText(v);
      if (why !== null) found.push({ path, message: `string ${why}` });
    } else if (v instanceof JsonNumber) {
      const why = unstorableNumber(v.text);
      if (why !== null) found.push({ path, message: why });
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length && found.length < limit; i++) visit(v[i], join(path, String(i)));
    } else if (v !== null && typeof v === 'object') {
      for (const [k, member] of Object.entries(v)) {
        if (found.length >= limit) return;
        const why = unstorableText(k);
        if (why !== null) found.push({ path: join(path, k), message: `member name ${why}` });
        else visit(member, join(path, k));
      }
    }
  };
  visit(value, root);
  return found;
}

/*
 * Numbers as written. jsonb keeps a number as `numeric` and gives it back spelled out in
 * full digits: `1e131071` (8 characters) comes back as 131,072, `1e-300` as 302. Exactness
 * never needs that expansion, so a document holding a number written with an exponent is
 * stored as its own JSON text, verbatim, in a jsonb envelope `{"$json":"v1","text":"…"}`:
 * the number keeps the form it was written in, and what is stored stays the size of what
 * was sent. Every other document is stored as itself. A document that could be mistaken for
 * such an envelope (it holds a `"$json"` member) is stored in one too, so it reads back as
 * itself. The size caps count this stored form ({@link storedDocumentText}).
 */

/** The member that marks a document stored verbatim (its value `"v1"`, its text in `text`). */
export const VERBATIM_MARK = '$json';

/** A number token written with an exponent: it follows `[`, `,`, `:` or the start of the text. */
const EXPONENT_NUMBER = /(?:^|[:,[])\s*-?[0-9]+(?:\.[0-9]+)?[eE]/;

/**
 * True when jsonb would not give the JSON text `text` back as written (it holds a number
 * token with an exponent), or when the text could read as a verbatim envelope. A string
 * that merely looks like such a token only costs the envelope.
 */
export function needsVerbatimStorage(text: string): boolean {
  return EXPONENT_NUMBER.test(text) || text.includes(`"${VERBATIM_MARK}"`);
}

/** The verbatim envelope of the JSON text `text` (`extra` members, e.g. a clear skeleton, beside it). */
export function verbatimEnvelope(text: string, extra?: Record<string, unknown>): { $json: 'v1'; text: string } {
  return { ...extra, $json: 'v1', text };
}

/** The JSON text stored for the document written as `text`: itself, or its verbatim envelope. */
export function storedDocumentText(text: string, extra?: Record<string, unknown>): string {
  return needsVerbatimStorage(text) ? JSON.stringify(verbatimEnvelope(text, extra)) : text;
}

/** True when `v` is a verbatim envelope as stored (see {@link verbatimEnvelope}). */
export function isVerbatimEnvelope(v: unknown): v is { $json: 'v1'; text: string } {
  return v !== null && typeof v === 'object' && (v as { $json?: unknown }).$json === 'v1' && typeof (v as { text?: unknown }).text === 'string';
}

/**
 * Whether a parsed document (plain values and {@link JsonNumber}s) would be written with a
 * number token jsonb rewrites, or holds a `$json` member: true when its stored form is the
 * verbatim envelope. A walk without serialising (iterative: any depth).
 */
export function holdsVerbatimTrigger(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'number') {
      // JSON.stringify writes a double with an exponent below 1e-6 and from 1e21 on
      const a = Math.abs(v);
      if (Number.isFinite(v) && a !== 0 && (a < 1e-6 || a >= 1e21)) return true;
    } else if (v instanceof JsonNumber) {
      if (/[eE]/.test(v.text)) return true;
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push(v[i]);
    } else if (v !== null && typeof v === 'object') {
      for (const k of Object.keys(v)) {
        if (k === VERBATIM_MARK) return true;
        stack.push((v as Record<string, unknown>)[k]);
      }
    }
  }
  return false;
}
