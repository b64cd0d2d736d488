/**
 * Keep-alive safety of answers given before the request body was read (CONTRACT §5: 413
 * before parsing; 401 and 403 come before the body too). An HTTP/1.1 connection carries
 * the next request only after the whole body of this one: a server that answers early and
 * leaves the rest on the wire either desynchronises the connection or drops it under the
 * client's next request ("socket hang up" in Node's keep-alive agent).
 *
 * The guard owns the one reader of the incoming body and hands the app a pass-through
 * copy. When the answer is ready and the app did not read the body to its end, the guard
 * reads and discards the rest, up to `bodyDrainMaxBytes` and `bodyDrainTimeoutMs`; a body
 * that does not end within those bounds gets `Connection: close` on the answer instead, so
 * the server closes the connection after writing it and no client reuses it.
 */
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../context';
import type { EdgeOptions } from './config';

const BODYLESS = new Set(['GET', 'HEAD', 'OPTIONS']);

type Reader = ReadableStreamDefaultReader<Uint8Array>;

/** Reads `reader` to its end, discarding; false when it holds more than `maxBytes` or takes longer than `timeoutMs`. */
async function drain(reader: Reader, maxBytes: number, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  try {
    let bytes = 0;
    for (;;) {
      const next = await Promise.race([reader.read(), timedOut]);
      if (next === 'timeout') return false;
      if (next.done) return true;
      bytes += next.value.byteLength;
      if (bytes > maxBytes) return false;
    }
  } catch {
    // the client went away mid-body: nothing is left to keep alive
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/** Marks the answer `Connection: close` (copying it when its headers are immutable). */
function closeAfter(c: { res: Response }): void {
  try {
    c.res.headers.set('connection', 'close');
  } catch {
    const headers = new Headers(c.res.headers);
    headers.set('connection', 'close');
    c.res = new Response(c.res.body, { status: c.res.status, statusText: c.res.statusText, headers });
  }
}

/** The guard; installed first, so it sees every answer of every route (refusals included). */
export function keepAliveGuard(opts: EdgeOptions): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const raw = c.req.raw;
    if (BODYLESS.has(raw.method) || raw.body === null) return next();
    const reader: Reader = raw.body.getReader();
    let ended = false;
    const passThrough = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const r = await reader.read();
        if (r.done) {
          ended = true;
          controller.close();
        } else {
          controller.enqueue(r.value);
        }
      },
      // a reader that stops early (the body limit) leaves the source to this guard's drain
    });
    c.req.raw = new Request(raw, { body: passThrough, duplex: 'half' } as RequestInit);
    await next();
    if (ended) return;
    // the answer is not sent until the body has been read off the wire (or the connection is given up)
    if (await drain(reader, opts.bodyDrainMaxBytes, opts.bodyDrainTimeoutMs)) return;
    // never cancel the source: on Node that destroys the socket before the answer is written
    closeAfter(c);
  };
}
