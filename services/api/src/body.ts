/**
 * Request bodies: refused over {@link MAX_BODY_BYTES} before parsing (413), then parsed
 * once with the lossless parser so big integers survive into stored documents.
 */
import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { parseJsonExact, stringifyJson, unstorableValues } from '@flowline/graph';
import { MalformedJsonError, PayloadTooLargeError, ValidationFailedError } from './errors';
import type { AppEnv } from './context';

/** Largest accepted request body, bytes (1 MiB). */
export const MAX_BODY_BYTES = 1024 * 1024;

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

/**
 * Memory an upload holds at once while it streams to the file store (about one store chunk),
 * bytes: what admission weighs it at, whatever its size.
 */
export const UPLOAD_BUFFER_BYTES = 256 * 1024;

/**
 * True for the file upload (`POST /v1/files`): its body streams into the file store under
 * its own cap (MAX_UPLOAD_BYTES), so neither the 1 MiB cap nor the JSON parse applies to it,
 * and admission weighs it by {@link UPLOAD_BUFFER_BYTES} instead of its length.
 */
export function isStreamedUpload(c: { req: { method: string; path: string } }): boolean {
  return c.req.method === 'POST' && c.req.path === '/v1/files';
}

/** 413 for bodies over the limit, whether announced by Content-Length or streamed. */
export function limitBody(): MiddlewareHandler<AppEnv> {
  const limit = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: () => {
      throw new PayloadTooLargeError(MAX_BODY_BYTES);
    },
  });
  return async (c, next) => (METHODS_WITH_BODY.has(c.req.method) && !isStreamedUpload(c) ? limit(c, next) : next());
}

/**
 * Parses a JSON body with `parseJsonExact` into the `body` variable; malformed JSON → 400.
 * An empty body reads as `{}` so that bodiless POSTs sent with a JSON content type pass
 * the route validators. A body holding anything Postgres cannot store (U+0000 or a lone
 * surrogate in a string or member name, a number beyond `numeric`'s range) → 400
 * `ValidationFailed` naming each such value's path: every body member ends up in a
 * `jsonb` or `text` column, so it is refused here, before any route reads it.
 */
export function parseBody(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const type = c.req.header('content-type') ?? '';
    if (!METHODS_WITH_BODY.has(c.req.method) || !/json/i.test(type) || isStreamedUpload(c)) return next();
    const text = await c.req.text();
    if (text.trim() === '') {
      c.set('body', {});
      c.req.bodyCache.text = Promise.resolve('{}') as never;
      return next();
    }
    let parsed: unknown;
    try {
      parsed = parseJsonExact(text);
    } catch {
      throw new MalformedJsonError();
    }
    const unstorable = unstorableValues(parsed);
    if (unstorable.length > 0) {
      throw new ValidationFailedError(
        'the body holds values that cannot be stored',
        unstorable.map((u) => ({ key: u.path === '' ? null : u.path, message: u.message })),
      );
    }
    c.set('body', parsed);
    await next();
  };
}

/** A member of the losslessly parsed body (undefined when absent). */
export function bodyMember(c: { get(key: 'body'): unknown }, key: string): unknown {
  const b = c.get('body');
  return b !== null && typeof b === 'object' && !Array.isArray(b) ? (b as Record<string, unknown>)[key] : undefined;
}

/** JSON text of a value, lossless for big numbers (native JSON.stringify when it holds none). */
export function jsonText(value: unknown): string {
  return stringifyJson(value);
}

/**
 * A JSON response written with the lossless writer. Typed `never` because it bypasses
 * Hono's typed `c.json` (the route's zod response schema still documents the shape).
 */
export function sendJson(status: number, body: unknown, headers?: Record<string, string>): never {
  return new Response(jsonText(body), {
    status,
    headers: { 'content-type': 'application/json; charset=UTF-8', ...headers },
  }) as never;
}
