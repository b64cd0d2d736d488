/**
 * What the edge's limits read off a request before its body: its kind (reads — GET, HEAD — and
 * writes, every other method) and the body length it announces.
 */
export type RequestKind = 'read' | 'write';

/** A request's kind by its method. */
export function requestKind(method: string): RequestKind {
  return method === 'GET' || method === 'HEAD' ? 'read' : 'write';
}

/** The body's announced length (Content-Length); null when it streams without one (chunked) or has none. */
export function announcedLength(req: Request): number | null {
  const length = req.headers.get('content-length');
  if (length === null || req.headers.has('transfer-encoding')) return null;
  const n = Number(length);
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}
