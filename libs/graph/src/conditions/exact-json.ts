/**
 * Lossless JSON: a pure parser that keeps number tokens a double cannot hold, and a
 * writer that puts them back verbatim.
 *
 * - `parseJsonExact(text)` returns the same plain values as `JSON.parse`, except that a
 *   number token whose value differs from the value of the double's shortest text
 *   (`String(Number(token))`) becomes a {@link JsonNumber} holding the token text:
 *   unsafe integers (`9007199254740993`), over-long decimals
 *   (`0.1000000000000000055511151231257827`), and out-of-range tokens (`1e400`).
 *   Tokens that only spell a double's value differently (`1.0`, `1e2`, `-0`) stay numbers.
 * - Nesting is parsed iteratively (no recursion), and refused beyond `maxDepth`
 *   (default {@link DEFAULT_MAX_JSON_DEPTH}) so that consumers which recurse (JSON.stringify,
 *   ajv, `stringifyJsonExact`) never overflow the stack. 100k `[` is a typed error, not a crash.
 * - Malformed input throws {@link JsonSyntaxError} (a `SyntaxError` with `code`
 *   `"InvalidJson"` and the UTF-16 `offset` of the problem); nothing else is thrown.
 * - Objects are ordinary objects (`Object.prototype`), keys in document order, a repeated
 *   key keeps its last value, and `"__proto__"` becomes an own data property, exactly
 *   like `JSON.parse`.
 */

/** Deepest array/object nesting `parseJsonExact` accepts unless told otherwise. */
export const DEFAULT_MAX_JSON_DEPTH = 1000;

/**
 * A JSON number token kept as written because no double equals it. `toJSON()` makes
 * plain `JSON.stringify` write the nearest double (LOSSY fallback); use
 * {@link stringifyJsonExact} to write the text back verbatim.
 */
export class JsonNumber {
  /** @param text a valid JSON number token */
  constructor(readonly text: string) {}
  /** The nearest double (lossy). */
  toJSON(): number {
    return Number(this.text);
  }
  /** The nearest double (lossy). */
  valueOf(): number {
    return Number(this.text);
  }
  toString(): string {
    return this.text;
  }
}

/** Malformed JSON (or nesting beyond the depth limit). The API maps it to 400. */
export class JsonSyntaxError extends SyntaxError {
  readonly code = 'InvalidJson' as const;
  /**
   * @param message what is wrong
   * @param offset UTF-16 offset in the text where the problem was found
   */
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(`${message} at offset ${offset}`);
    this.name = 'JsonSyntaxError';
  }
}

/** Options of {@link parseJsonExact}. */
export interface ParseJsonExactOptions {
  /** deepest nesting of arrays/objects accepted (default {@link DEFAULT_MAX_JSON_DEPTH}) */
  maxDepth?: number;
}

// Decimal normalisation: value = sign * 0.D * 10^e, D without leading/trailing zeros.
interface Decimal {
  neg: boolean;
  digits: string;
  exp: number;
}

/** Normalises a valid JSON/JS number text (`-12.50e+3`, `1e-7`); zero has digits "". */
function toDecimal(text: string): Decimal {
  let i = 0;
  let neg = false;
  if (text[0] === '-') {
    neg = true;
    i = 1;
  }
  let end = text.length;
  let e = 0;
  const ePos = text.search(/[eE]/);
  if (ePos >= 0) {
    e = Number(text.slice(ePos + 1));
    end = ePos;
  }
  const body = text.slice(i, end);
  const dot = body.indexOf('.');
  const intPart = dot >= 0 ? body.slice(0, dot) : body;
  const frac = dot >= 0 ? body.slice(dot + 1) : '';
  let all = intPart + frac;
  let pointAt = intPart.length;
  let lead = 0;
  while (lead < all.length && all.charCodeAt(lead) === 48) lead++;
  all = all.slice(lead);
  pointAt -= lead;
  let trail = all.length;
  while (trail > 0 && all.charCodeAt(trail - 1) === 48) trail--;
  all = all.slice(0, trail);
  if (all === '') return { neg: false, digits: '', exp: 0 };
  return { neg, digits: all, exp: pointAt + e };
}

/** True when the token's exact value equals that of the double's shortest text. */
function roundTrips(token: string, n: number): boolean {
  if (!Number.isFinite(n)) return false;
  const canonical = String(n);
  if (canonical === token) return true;
  const a = toDecimal(token);
  const b = toDecimal(canonical);
  return a.digits === b.digits && a.exp === b.exp && (a.neg === b.neg || a.digits === '');
}

const NUMBER_RE = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const ESCAPES: Record<string, string> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

type Frame = { arr: unknown[] } | { obj: Record<string, unknown>; key: string };

function setKey(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    obj[key] = value;
  }
}

/**
 * Parses JSON text losslessly (see the module comment).
 * @throws JsonSyntaxError on malformed input or nesting deeper than `maxDepth`
 */
export function parseJsonExact(text: string, options: ParseJsonExactOptions = {}): unknown {
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_JSON_DEPTH;
  const len = text.length;
  let pos = 0;
  const stack: Frame[] = [];

  const fail = (message: string, at = pos): never => {
    throw new JsonSyntaxError(message, at);
  };
  const skipWs = (): void => {
    while (pos < len) {
      const c = text.charCodeAt(pos);
      if (c === 32 || c === 10 || c === 13 || c === 9) pos++;
      else break;
    }
  };
  const readString = (): string => {
    // pos is at the opening quote
    const start = ++pos;
    let out = '';
    let chunk = start;
    while (pos < len) {
      const c = text.charCodeAt(pos);
      if (c === 34) {
        out += text.slice(chunk, pos);
        pos++;
        return out;
      }
      if (c < 0x20) fail('Control character in string');
      if (c === 92) {
        out += text.slice(chunk, pos);
        const e = text[pos + 1];
        if (e === 'u') {
          const hex = text.slice(pos + 2, pos + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail('Bad unicode escape');
          out += String.fromCharCode(parseInt(hex, 16));
          pos += 6;
        } else {
          const r = e === undefined ? undefined : ESCAPES[e];
          if (r === undefined) fail('Bad escape');
          out += r;
          pos += 2;
        }
        chunk = pos;
      } else {
        pos++;
      }
    }
    return fail('Unterminated string', start - 1);
  };
  const readScalar = (): unknown => {
    const c = text[pos];
    if (c === '"') return readString();
    if (c === 't' && text.startsWith('true', pos)) {
      pos += 4;
      return true;
    }
    if (c === 'f' && text.startsWith('false', pos)) {
      pos += 5;
      return false;
    }
    if (c === 'n' && text.startsWith('null', pos)) {
      pos += 4;
      return null;
    }
    NUMBER_RE.lastIndex = pos;
    const m = NUMBER_RE.exec(text);
    if (m === null) return fail(pos >= len ? 'Unexpected end of input' : 'Unexpected token');
    const token = m[0];
    pos += token.length;
    const n = Number(token);
    return roundTrips(token, n) ? n : new JsonNumber(token);
  };

  let result: unknown;
  skipWs();
  // Each iteration reads one value (opening a container pushes a frame), then closes
  // whatever containers end after it.
  for (;;) {
    let value: unknown;
    let opened = false;
    const c = text[pos];
    if (c === '[' || c === '{') {
      if (stack.length >= maxDepth) fail(`Nesting deeper than ${maxDepth}`);
      pos++;
      skipWs();
      if (c === '[') {
        if (text[pos] === ']') {
          pos++;
          value = [];
        } else {
          stack.push({ arr: [] });
          opened = true;
        }
      } else if (text[pos] === '}') {
        pos++;
        value = {};
      } else {
        if (text[pos] !== '"') fail('Expected a string key');
        const key = readString();
        skipWs();
        if (text[pos] !== ':') fail("Expected ':'");
        pos++;
        stack.push({ obj: {}, key });
        opened = true;
      }
    } else {
      value = readScalar();
    }
    if (opened) {
      skipWs();
      continue;
    }
    // deliver `value` to the enclosing containers, closing those that end
    for (;;) {
      const top = stack[stack.length - 1];
      if (top === undefined) {
        result = value;
        skipWs();
        if (pos < len) fail('Unexpected data after JSON value');
        return result;
      }
      if ('arr' in top) top.arr.push(value);
      else setKey(top.obj, top.key, value);
      skipWs();
      const d = text[pos];
      if (d === ',') {
        pos++;
        skipWs();
        if ('obj' in top) {
          if (text[pos] !== '"') fail('Expected a string key');
          top.key = readString();
          skipWs();
          if (text[pos] !== ':') fail("Expected ':'");
          pos++;
          skipWs();
        }
        break;
      }
      if ((d === ']' && 'arr' in top) || (d === '}' && 'obj' in top)) {
        pos++;
        stack.pop();
        value = 'arr' in top ? top.arr : top.obj;
        continue;
      }
      fail(pos >= len ? 'Unexpected end of input' : 'Expected \',\' or a closing bracket');
    }
    skipWs();
  }
}

/**
 * `JSON.stringify(value)` without indentation, except that {@link JsonNumber}s are
 * written as their token text and bigints as their decimal digits (both verbatim).
 * Everything else follows `JSON.stringify` (toJSON, undefined/function members
 * dropped, non-finite numbers as null). Recursive: refuses nesting deeper than
 * {@link DEFAULT_MAX_JSON_DEPTH} and cycles with a TypeError.
 * @throws TypeError for a cycle, too deep a value, or a top-level value JSON cannot hold
 */
export function stringifyJsonExact(value: unknown): string {
  const seen = new Set<object>();
  const write = (v: unknown, key: string, depth: number): string | undefined => {
    if (v instanceof JsonNumber) return v.text;
    if (typeof v === 'bigint') return v.toString();
    if (v !== null && typeof v === 'object') {
      const toJSON = (v as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function') v = (toJSON as (k: string) => unknown).call(v, key);
      if (v instanceof JsonNumber) return v.text;
    }
    switch (typeof v) {
      case 'string':
      case 'boolean':
        return JSON.stringify(v);
      case 'number':
        return Number.isFinite(v) ? String(v) : 'null';
      case 'bigint':
        return v.toString();
      case 'object': {
        if (v === null) return 'null';
        if (v instanceof Number || v instanceof String || v instanceof Boolean) return JSON.stringify(v);
        if (depth >= DEFAULT_MAX_JSON_DEPTH) throw new TypeError('Value nested too deeply to stringify');
        if (seen.has(v)) throw new TypeError('Converting circular structure to JSON');
        seen.add(v);
        let out: string;
        if (Array.isArray(v)) {
          const parts: string[] = [];
          for (let i = 0; i < v.length; i++) parts.push(write(v[i], String(i), depth + 1) ?? 'null');
          out = `[${parts.join(',')}]`;
        } else {
          const parts: string[] = [];
          const o = v as Record<string, unknown>;
          for (const k of Object.keys(o)) {
            const s = write(o[k], k, depth + 1);
            if (s !== undefined) parts.push(`${JSON.stringify(k)}:${s}`);
          }
          out = `{${parts.join(',')}}`;
        }
        seen.delete(v);
        return out;
      }
      default:
        return undefined;
    }
  };
  const out = write(value, '', 0);
  if (out === undefined) throw new TypeError(`Cannot serialise a top-level ${typeof value} as JSON`);
  return out;
}
