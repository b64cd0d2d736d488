/**
 * A small ajv wrapper: JSON Schema draft 2020-12 (draft-07 documents accepted via their
 * `$schema`), formats from ajv-formats, strict mode off so common real-world schemas
 * compile. Every `pattern` / `patternProperties` runs on RE2 (linear time, see
 * linear-regexp.ts); a schema with a pattern RE2 cannot run does not compile, and its
 * error names the pattern's JSON Pointer. Each distinct schema (by canonical JSON) is
 * compiled once and cached; the cache is bounded (least recently used entries are dropped).
 */
import Ajv2020 from 'ajv/dist/2020';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import draft7MetaSchema from 'ajv/dist/refs/json-schema-draft-07.json';
import { canonicalJson, hasExactNumbers } from './canonical-json';
import { findUnsupportedPattern, linearRegExp } from './linear-regexp';

/** Maximum number of compiled schemas kept. */
export const SCHEMA_CACHE_LIMIT = 500;

type Compiled = { ok: true; validate: ValidateFunction } | { ok: false; error: string };

let ajvInstance: Ajv2020 | null = null;
const cache = new Map<string, Compiled>();

function ajv(): Ajv2020 {
  if (ajvInstance === null) {
    const instance = new Ajv2020({ strict: false, allErrors: true, validateFormats: true, code: { regExp: linearRegExp } });
    // keywords:false — the formatMinimum/… keywords need ajv-formats' own ajv copy.
    addFormats(instance, { keywords: false });
    instance.addMetaSchema(draft7MetaSchema);
    ajvInstance = instance;
  }
  return ajvInstance;
}

function compile(schema: unknown): Compiled {
  let key: string;
  try {
    key = canonicalJson(schema);
  } catch (err) {
    return { ok: false, error: messageOf(err) };
  }
  const hit = cache.get(key);
  if (hit !== undefined) {
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  let result: Compiled;
  if (typeof schema !== 'boolean' && (schema === null || typeof schema !== 'object' || Array.isArray(schema))) {
    result = { ok: false, error: 'a JSON Schema must be an object or a boolean' };
  } else {
    const instance = ajv();
    // Compile a private plain copy: exact numbers become doubles, and nothing the caller
    // holds is registered inside ajv.
    let plain: unknown = undefined;
    try {
      plain = JSON.parse(key);
      const unsupported = findUnsupportedPattern(plain);
      result = unsupported
        ? { ok: false, error: `${unsupported.pointer} is refused: patterns run on RE2 (linear time), which cannot run it: ${unsupported.error}` }
        : { ok: true, validate: instance.compile(plain as object) };
    } catch (err) {
      result = { ok: false, error: messageOf(err) };
    } finally {
      // Compiled functions keep working; dropping the registration keeps ajv's own
      // registry from growing and lets another schema reuse the same `$id`.
      try {
        if (typeof plain === 'object' && plain !== null) instance.removeSchema(plain);
      } catch {
        /* not registered */
      }
    }
  }
  cache.set(key, result);
  if (cache.size > SCHEMA_CACHE_LIMIT) {
    const oldest = cache.keys().next();
    if (oldest.done !== true) cache.delete(oldest.value);
  }
  return result;
}

function messageOf(err: unknown): string {
  if (err instanceof RangeError) return 'schema is too deeply nested';
  return err instanceof Error ? err.message : String(err);
}

/** Compile `schema`; the compile error message, or null when it is a valid JSON Schema. */
export function checkSchema(schema: unknown): string | null {
  const c = compile(schema);
  return c.ok ? null : c.error;
}

/** Outcome of {@link validateJson}: errors are `"<instancePath> <message>"` sentences. */
export type JsonValidation = { valid: true } | { valid: false; errors: string[] };

/**
 * Validate `value` against `schema` (compiled once per distinct schema). An invalid schema
 * is reported as an error. Exact numbers of the lossless JSON parser validate as numbers.
 */
export function validateJson(schema: unknown, value: unknown): JsonValidation {
  const c = compile(schema);
  if (!c.ok) return { valid: false, errors: [`invalid schema: ${c.error}`] };
  let ok: boolean;
  try {
    // Exact numbers (lossless parser) are validated as the nearest double.
    const data = hasExactNumbers(value) ? (JSON.parse(canonicalJson(value)) as unknown) : value;
    ok = c.validate(data) === true;
  } catch (err) {
    return { valid: false, errors: [messageOf(err)] };
  }
  if (ok) return { valid: true };
  return { valid: false, errors: (c.validate.errors ?? []).map(formatError) };
}

function formatError(e: ErrorObject): string {
  const where = e.instancePath === '' ? '(root)' : e.instancePath;
  return `${where} ${e.message ?? e.keyword}`;
}
