/**
 * What may leave a process in a log line or a boot message: a URL's userinfo
 * (`user:password@`) never, and of an error only its facts — class, code, SQLSTATE, the
 * names Postgres gives (table, column, constraint, routine) and its stack frames — never
 * the fields where Postgres echoes statement text, parameters or row content (`detail`,
 * `where`, `hint`, `internalQuery`, …), and never the message of an error class whose
 * message quotes its input (a Postgres error: `invalid input syntax for type uuid: "…"`;
 * a `SyntaxError` of `JSON.parse`: `Unexpected token … "<the document>" is not valid JSON`).
 */

/** `scheme://userinfo@` anywhere in a text; the userinfo stops at the last `@` before the path. */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]*(?:@[^\s/?#@]*)*@/gi;

/** Replaces every URL's userinfo in `text` with `[redacted]`, so `postgres://u:pw@h/db` reads `postgres://[redacted]@h/db`. */
export function redactUrlUserinfo(text: string): string {
  return text.replace(URL_USERINFO, '$1[redacted]@');
}

/** Fields of errors (Postgres' above all) that carry statement text, parameters or row content. */
const CONTENT_FIELDS = new Set([
  'detail',
  'where',
  'hint',
  'internalQuery',
  'internalPosition',
  'position',
  'query',
  'parameters',
  'params',
  'values',
  'body',
  'input',
  'response',
  'request',
  'config',
]);

/** Postgres error facts that are names chosen by the schema, not content. */
const PG_FACTS = ['code', 'severity', 'schema', 'table', 'column', 'dataType', 'constraint', 'routine'] as const;

/** A Postgres server error (pg's `DatabaseError`): it has a SQLSTATE and the server's routine. */
function isDatabaseError(err: Error): boolean {
  const e = err as Error & { code?: unknown; severity?: unknown };
  return err.constructor?.name === 'DatabaseError' || (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code) && typeof e.severity === 'string');
}

/** True for the errors whose message quotes their input (see the module comment). */
function messageQuotesInput(err: Error): boolean {
  return isDatabaseError(err) || err instanceof SyntaxError;
}

/** The stack without its first line(s) — the message — keeping only `at …` frames. */
function framesOf(stack: string | undefined): string | undefined {
  if (!stack) return undefined;
  const frames = stack.split('\n').filter((l) => /^\s+at /.test(l));
  return frames.length ? frames.join('\n') : undefined;
}

/**
 * The log form of a thrown value (pino's `err` serializer in {@link createLogger}):
 * `{ type, message?, code?, … , stack, cause? }` with the content fields dropped and URL
 * userinfo redacted. A non-error value is logged as its type only: a thrown string or
 * object may be anything, a document included.
 */
export function serializeError(err: unknown, depth = 0): unknown {
  if (!(err instanceof Error)) return { type: err === null ? 'null' : typeof err };
  const type = err.constructor?.name && err.constructor.name !== 'Error' ? err.constructor.name : err.name;
  const out: Record<string, unknown> = { type };
  if (isDatabaseError(err)) {
    const e = err as unknown as Record<string, unknown>;
    for (const k of PG_FACTS) if (typeof e[k] === 'string') out[k === 'code' ? 'sqlState' : k] = e[k];
  } else {
    for (const [k, v] of Object.entries(err)) {
      if (CONTENT_FIELDS.has(k) || k === 'cause') continue;
      if (typeof v === 'number' || typeof v === 'boolean') out[k] = v;
      else if (typeof v === 'string') out[k] = redactUrlUserinfo(v);
    }
  }
  if (messageQuotesInput(err)) {
    out.stack = framesOf(err.stack);
  } else {
    out.message = redactUrlUserinfo(err.message);
    if (err.stack) out.stack = redactUrlUserinfo(err.stack);
  }
  if (err.cause !== undefined && depth < 4) out.cause = serializeError(err.cause, depth + 1);
  return out;
}
