/**
 * User regular expressions (JSON Schema `pattern` and `patternProperties`) run on RE2
 * (re2js, a pure-JS port): matching takes time linear in the input, so no schema can make
 * a validation backtrack for seconds and stall a replica (`^(a+)+$` against `aaa…!`).
 * Patterns are read with ECMAScript syntax (RE2JS.translateRegExp: named groups, `\u`
 * escapes, `\c`); what RE2 cannot run — backreferences, lookahead and lookbehind, a
 * repeat count over 1000 — is refused when the schema is checked, with the pointer of the
 * keyword that holds it.
 */
import type { CodeOptions } from 'ajv/dist/2020';
import { RE2JS } from 're2js';

type RegExpEngine = NonNullable<CodeOptions['regExp']>;

/**
 * The first backreference written in an ECMAScript pattern: `\k<name>` or `\8`/`\9`.
 * RE2JS.translateRegExp drops the backslash of these (it treats them as identity escapes),
 * so without this check `(?<n>a)\k<n>` would compile and quietly match the text "k<n>".
 * `\1`…`\7` need no check: the translation keeps them and RE2 refuses them itself.
 * Escaped backslashes (`\\k`) are skipped pair by pair, so they are not mistaken for one.
 */
function findBackreference(source: string): string | null {
  for (let i = 0; i < source.length - 1; i++) {
    if (source[i] !== '\\') continue;
    const next = source[i + 1];
    if (next === 'k') return `\\k${/^<[^>]{0,40}>/.exec(source.slice(i + 2))?.[0] ?? ''}`;
    if (next === '8' || next === '9') return `\\${next}`;
    i++; // skip the escaped character, whatever it is
  }
  return null;
}

/** A compiled pattern as ajv uses it: `test` searches anywhere in the string, like RegExp#test. */
class LinearPattern {
  private readonly re: RE2JS;
  constructor(readonly source: string) {
    const backreference = findBackreference(source);
    if (backreference !== null) throw new Error(`backreference \`${backreference}\` is not supported by RE2`);
    this.re = RE2JS.compile(RE2JS.translateRegExp(source));
  }
  test(s: string): boolean {
    return this.re.test(s);
  }
  /** ajv keys its generated scope values by this text: it must differ per pattern. */
  toString(): string {
    return `/${this.source}/re2`;
  }
}

/**
 * ajv's `code.regExp` engine: RE2 for every pattern. The flags ajv passes (`u`) need no
 * translation: RE2 always matches by code point. `code` is only read by ajv's standalone
 * code generation, which this package does not use.
 */
export const linearRegExp: RegExpEngine = Object.assign((pattern: string) => new LinearPattern(pattern), {
  code: 'LinearPattern',
});

/** Why RE2 cannot run `pattern`, or null when it can. */
export function patternError(pattern: string): string | null {
  try {
    new LinearPattern(pattern);
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/** A pattern of a schema that RE2 cannot run: where (JSON Pointer into the schema) and why. */
export interface UnsupportedPattern {
  pointer: string;
  error: string;
}

/** Keywords whose value is a subschema. */
const SUBSCHEMA = [
  'additionalItems', 'additionalProperties', 'contains', 'contentSchema', 'else', 'if', 'items', 'not',
  'propertyNames', 'then', 'unevaluatedItems', 'unevaluatedProperties',
];
/** Keywords whose value is an array of subschemas. */
const SUBSCHEMA_LIST = ['allOf', 'anyOf', 'items', 'oneOf', 'prefixItems'];
/** Keywords whose value maps names to subschemas (draft-07 `dependencies` may also hold arrays). */
const SUBSCHEMA_MAP = ['$defs', 'definitions', 'dependencies', 'dependentSchemas', 'patternProperties', 'properties'];

const escapePointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The first `pattern` or `patternProperties` key of `schema` (in document order, through
 * every subschema keyword) that RE2 cannot run; null when there is none. Data keywords
 * (`const`, `enum`, `default`, `examples`) and unknown keywords are not read: ajv runs
 * no pattern found there.
 */
export function findUnsupportedPattern(schema: unknown, pointer = ''): UnsupportedPattern | null {
  if (!isObject(schema)) return null;
  if (typeof schema.pattern === 'string') {
    const error = patternError(schema.pattern);
    if (error !== null) return { pointer: `${pointer}/pattern`, error };
  }
  if (isObject(schema.patternProperties)) {
    for (const key of Object.keys(schema.patternProperties)) {
      const error = patternError(key);
      if (error !== null) return { pointer: `${pointer}/patternProperties/${escapePointer(key)}`, error };
    }
  }
  for (const kw of SUBSCHEMA) {
    const found = findUnsupportedPattern(schema[kw], `${pointer}/${kw}`);
    if (found) return found;
  }
  for (const kw of SUBSCHEMA_LIST) {
    const list = schema[kw];
    if (!Array.isArray(list)) continue;
    for (let i = 0; i < list.length; i++) {
      const found = findUnsupportedPattern(list[i], `${pointer}/${kw}/${i}`);
      if (found) return found;
    }
  }
  for (const kw of SUBSCHEMA_MAP) {
    const map = schema[kw];
    if (!isObject(map)) continue;
    for (const [name, sub] of Object.entries(map)) {
      const found = findUnsupportedPattern(sub, `${pointer}/${kw}/${escapePointer(name)}`);
      if (found) return found;
    }
  }
  return null;
}
