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
 *
 * Documents travel through {@link parseJson} / {@link stringifyJson}: the same results as
 * the exact pair, but native `JSON.parse` / `JSON.stringify` do the work whenever the text
 * (a cheap scan) or the value (a JsonNumber met while writing) holds no number a double
 * cannot carry, so the JS parser and writer run only for the rare document that needs them.
 */

/** Deepest array/object nesting `parseJsonExact` accepts unless told otherwise. */
export const DEFAULT_MAX_JSON_DEPTH = 1000;

/**
 * How many times a {@link JsonNumber} was written by plain `JSON.stringify`: a change
 * across one synchronous `JSON.stringify` call tells {@link stringifyJson} that its text
 * is lossy and must be written again exactly.
 */
let lossyWrites = 0;

/**
 * A JSON number token kept as written because no double equals it. `toJSON()` makes
 * plain `JSON.stringify` write the nearest double (LOSSY fallback); use
 * {@link stringifyJson} or {@link stringifyJsonExact} to write the text back verbatim.
 */
export class JsonNumber {
  /** @param text a valid JSON number token */
  constructor(readonly text: string) {}
  /** The nearest double (lossy). */
  toJSON(): number {
    lossyWrites++;
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

// a backslash or a raw control character (U+0000–U+001F) needs the escaping reader
// eslint-disable-next-line no-control-regex
const NEEDS_SLOW_STRING = /[\\\u0000-\u001f]/;
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

/** An open container: an array (`key` null) or an object with the key awaiting its value. */
class Frame {
  constructor(
    readonly arr: unknown[] | null,
    readonly obj: Record<string, unknown> | null,
    public key: string,
  ) {}
}

function setKey(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    obj[key] = value;
  }
}

/** Reads JSON text left to right; one instance per call. */
class Parser {
  pos = 0;
  readonly len: number;
  constructor(readonly text: string) {
    this.len = text.length;
  }

  fail(message: string, at = this.pos): never {
    throw new JsonSyntaxError(message, at);
  }

  skipWs(): void {
    const { text, len } = this;
    let pos = this.pos;
    while (pos < len) {
      const c = text.charCodeAt(pos);
      if (c === 32 || c === 10 || c === 13 || c === 9) pos++;
      else break;
    }
    this.pos = pos;
  }

  /** At an opening quote: reads the string and the closing quote. */
  readString(): string {
    const { text } = this;
    const start = this.pos + 1;
    const q = text.indexOf('"', start);
    if (q < 0) this.fail('Unterminated string', start - 1);
    const plain = text.slice(start, q);
    if (!NEEDS_SLOW_STRING.test(plain)) {
      this.pos = q + 1;
      return plain;
    }
    return this.readEscapedString(start);
  }

  readEscapedString(start: number): string {
    const { text, len } = this;
    let pos = start;
    let out = '';
    let chunk = start;
    while (pos < len) {
      const c = text.charCodeAt(pos);
      if (c === 34) {
        this.pos = pos + 1;
        return out + text.slice(chunk, pos);
      }
      if (c < 0x20) this.fail('Control character in string', pos);
      if (c === 92) {
        out += text.slice(chunk, pos);
        const e = text[pos + 1];
        if (e === 'u') {
          const hex = text.slice(pos + 2, pos + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail('Bad unicode escape', pos);
          out += String.fromCharCode(parseInt(hex, 16));
          pos += 6;
        } else {
          const r = e === undefined ? undefined : ESCAPES[e];
          if (r === undefined) this.fail('Bad escape', pos);
          out += r;
          pos += 2;
        }
        chunk = pos;
      } else {
        pos++;
      }
    }
    return this.fail('Unterminated string', start - 1);
  }

  readNumber(): number | JsonNumber {
    const { text, len } = this;
    const start = this.pos;
    let pos = start;
    let c = text.charCodeAt(pos);
    if (c === 45) c = text.charCodeAt(++pos); // '-'
    if (c === 48) {
      c = text.charCodeAt(++pos);
    } else if (c >= 49 && c <= 57) {
      do c = text.charCodeAt(++pos);
      while (c >= 48 && c <= 57);
    } else {
      this.fail(pos >= len ? 'Unexpected end of input' : 'Unexpected token', pos);
    }
    let plain = true;
    if (c === 46) {
      // '.'
      c = text.charCodeAt(++pos);
      if (!(c >= 48 && c <= 57)) this.fail('Expected a digit after the decimal point', pos);
      do c = text.charCodeAt(++pos);
      while (c >= 48 && c <= 57);
    }
    if (c === 101 || c === 69) {
      // 'e' | 'E'
      plain = false;
      c = text.charCodeAt(++pos);
      if (c === 43 || c === 45) c = text.charCodeAt(++pos);
      if (!(c >= 48 && c <= 57)) this.fail('Expected a digit in the exponent', pos);
      do c = text.charCodeAt(++pos);
      while (c >= 48 && c <= 57);
    }
    this.pos = pos;
    const token = text.slice(start, pos);
    const n = Number(token);
    // ≤ 15 significant digits without exponent always name the double's shortest value
    if (plain && token.length <= 15) return n;
    return roundTrips(token, n) ? n : new JsonNumber(token);
  }

  /** A scalar at `pos` (the caller has ruled out `[` and `{`). */
  readScalar(): unknown {
    const { text } = this;
    const c = text.charCodeAt(this.pos);
    if (c === 34) return this.readString();
    if (c === 116 && text.startsWith('true', this.pos)) {
      this.pos += 4;
      return true;
    }
    if (c === 102 && text.startsWith('false', this.pos)) {
      this.pos += 5;
      return false;
    }
    if (c === 110 && text.startsWith('null', this.pos)) {
      this.pos += 4;
      return null;
    }
    return this.readNumber();
  }

  /** After `{` or `,` in an object: `"key"` and `:`, leaving `pos` at the value. */
  readKey(): string {
    if (this.text.charCodeAt(this.pos) !== 34) this.fail('Expected a string key');
    const key = this.readString();
    this.skipWs();
    if (this.text.charCodeAt(this.pos) !== 58) this.fail("Expected ':'");
    this.pos++;
    this.skipWs();
    return key;
  }

  parse(maxDepth: number): unknown {
    const { text } = this;
    const stack: Frame[] = [];
    this.skipWs();
    // Each iteration reads one value (opening a container pushes a frame), then closes
    // whatever containers end after it.
    for (;;) {
      let value: unknown;
      const c = text.charCodeAt(this.pos);
      if (c === 91 || c === 123) {
        if (stack.length >= maxDepth) this.fail(`Nesting deeper than ${maxDepth}`);
        this.pos++;
        this.skipWs();
        const close = text.charCodeAt(this.pos);
        if (c === 91) {
          if (close === 93) {
            this.pos++;
            value = [];
          } else {
            stack.push(new Frame([], null, ''));
            continue;
          }
        } else if (close === 125) {
          this.pos++;
          value = {};
        } else {
          stack.push(new Frame(null, {}, this.readKey()));
          continue;
        }
      } else {
        value = this.readScalar();
      }
      // deliver `value` to the enclosing containers, closing those that end
      for (;;) {
        const top = stack[stack.length - 1];
        if (top === undefined) {
          this.skipWs();
          if (this.pos < this.len) this.fail('Unexpected data after JSON value');
          return value;
        }
        if (top.arr !== null) top.arr.push(value);
        else setKey(top.obj as Record<string, unknown>, top.key, value);
        this.skipWs();
        const d = text.charCodeAt(this.pos);
        if (d === 44) {
          this.pos++;
          this.skipWs();
          if (top.obj !== null) top.key = this.readKey();
          break;
        }
        if (top.arr !== null ? d === 93 : d === 125) {
          this.pos++;
          stack.pop();
          value = top.arr ?? top.obj;
          continue;
        }
        this.fail(this.pos >= this.len ? 'Unexpected end of input' : "Expected ',' or a closing bracket");
      }
    }
  }
}

/**
 * Parses JSON text losslessly (see the module comment).
 * @throws JsonSyntaxError on malformed input or nesting deeper than `maxDepth`
 */
export function parseJsonExact(text: string, options: ParseJsonExactOptions = {}): unknown {
  return new Parser(text).parse(options.maxDepth ?? DEFAULT_MAX_JSON_DEPTH);
}

/*
 * A number token (it follows the start of the text, `:`, `,` or `[`, then whitespace)
 * spelled with 16 or more digits-or-points, or with an exponent; the group is the whole
 * token. Any token of at most 15 significant digits without exponent names its double's
 * value exactly (a double holds every 15-digit decimal), and so does a longer one that is
 * the double's shortest text (`0.30000000000000004`, as JSON.stringify writes computed
 * doubles): JSON.parse reads those right. A string that happens to contain such a pattern
 * only costs the exact parser.
 */
const LONG_NUMBER_TOKEN = /(?:^|[:,[])\s*(-?(?:[0-9.]{16}|[0-9]+(?:\.[0-9]+)?[eE])[0-9.eE+-]*)/g;

/**
 * True when JSON text may hold a number token a double cannot carry exactly (see
 * {@link parseJson}); false guarantees `JSON.parse(text)` equals `parseJsonExact(text)`.
 */
export function mayHoldInexactNumber(text: string): boolean {
  LONG_NUMBER_TOKEN.lastIndex = 0;
  for (let m = LONG_NUMBER_TOKEN.exec(text); m !== null; m = LONG_NUMBER_TOKEN.exec(text)) {
    const token = m[1]!;
    if (String(Number(token)) !== token) return true;
  }
  return false;
}

/**
 * Parses JSON text losslessly, as {@link parseJsonExact} does, through native `JSON.parse`
 * when a scan finds no number token that could need a {@link JsonNumber} (16+ digits or an
 * exponent, unless the token is its double's shortest text). Malformed text throws a `SyntaxError` (a {@link JsonSyntaxError} from the
 * exact parser, the engine's own from `JSON.parse`).
 */
export function parseJson(text: string): unknown {
  return mayHoldInexactNumber(text) ? parseJsonExact(text) : JSON.parse(text);
}

/**
 * Writes `value` as {@link stringifyJsonExact} does (JsonNumbers and bigints verbatim),
 * through native `JSON.stringify` unless the value holds one of them: the native text is
 * kept when writing it met no JsonNumber, and is written again by the exact writer
 * otherwise (or when `JSON.stringify` refuses a bigint). `indent` as `JSON.stringify`'s
 * space argument, in spaces.
 * @throws TypeError for a cycle, too deep a value, or a top-level value JSON cannot hold
 */
export function stringifyJson(value: unknown, indent?: number): string {
  const before = lossyWrites;
  let text: string | undefined;
  try {
    text = JSON.stringify(value, null, indent);
  } catch (err) {
    if (!(err instanceof TypeError)) throw err;
  }
  return text !== undefined && lossyWrites === before ? text : stringifyJsonExact(value, indent);
}

/**
 * `JSON.stringify(value, null, indent)`, except that {@link JsonNumber}s are written as
 * their token text and bigints as their decimal digits (both verbatim). Everything else
 * follows `JSON.stringify` (toJSON, undefined/function members dropped, non-finite numbers
 * as null, `indent` spaces per level, at most 10). Recursive: refuses nesting deeper than
 * {@link DEFAULT_MAX_JSON_DEPTH} and cycles with a TypeError.
 * @throws TypeError for a cycle, too deep a value, or a top-level value JSON cannot hold
 */
export function stringifyJsonExact(value: unknown, indent = 0): string {
  const step = ' '.repeat(Math.min(10, Math.max(0, Math.floor(indent))));
  const seen = new Set<object>();
  // one container's members joined as JSON.stringify lays them out at `depth`
  const layout = (open: string, parts: string[], close: string, depth: number): string => {
    if (parts.length === 0) return open + close;
    if (step === '') return `${open}${parts.join(',')}${close}`;
    const inner = `\n${step.repeat(depth + 1)}`;
    return `${open}${inner}${parts.join(`,${inner}`)}\n${step.repeat(depth)}${close}`;
  };
  const colon = step === '' ? ':' : ': ';
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
          out = layout('[', parts, ']', depth);
        } else {
          const parts: string[] = [];
          const o = v as Record<string, unknown>;
          for (const k of Object.keys(o)) {
            const s = write(o[k], k, depth + 1);
            if (s !== undefined) parts.push(`${JSON.stringify(k)}${colon}${s}`);
          }
          out = layout('{', parts, '}', depth);
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
