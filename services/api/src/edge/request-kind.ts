/** What the edge's limits tell apart: reads (GET, HEAD) and writes (every other method). */
export type RequestKind = 'read' | 'write';

/** A request's kind by its method. */
export function requestKind(method: string): RequestKind {
  return method === 'GET' || method === 'HEAD' ? 'read' : 'write';
}
