/**
 * The `id:` of an SSE frame, which a client sends back as `Last-Event-ID` to resume exactly
 * where it dropped. A stream interleaves two orders: the run's events (by seq) and the live
 * activity of each model invocation in flight (by its entries' positions). So an id is the seq
 * of the last event sent, and, while activity is being relayed, how many entries of each
 * invocation were sent: `<seq>` alone, `<seq>.<base64url of [[invocationId, sent], …]>`, or
 * `<seq>.end` once the final `run.result` frame went out.
 */

/** Where a stream resumes. */
export interface SseCursor {
  seq: number;
  /** activity entries already sent, by invocation id */
  sent: Map<string, number>;
  /** the `run.result` frame was sent: nothing follows */
  ended: boolean;
}

/** A Last-Event-ID this stream could have written (an empty value means none). */
export const LAST_EVENT_ID_PATTERN = /^\s*(\d{0,10})(?:\.(end|[A-Za-z0-9_-]{1,8000}))?\s*$/;

export function formatCursor(c: SseCursor): string {
  if (c.ended) return `${c.seq}.end`;
  if (c.sent.size === 0) return String(c.seq);
  return `${c.seq}.${Buffer.from(JSON.stringify([...c.sent]), 'utf8').toString('base64url')}`;
}

/** Reads a Last-Event-ID; null when it is not one this stream writes. */
export function parseCursor(raw: string): SseCursor | null {
  const m = LAST_EVENT_ID_PATTERN.exec(raw);
  if (!m) return null;
  const seq = m[1] === '' ? 0 : Number(m[1]);
  if (m[2] === undefined) return { seq, sent: new Map(), ended: false };
  if (m[2] === 'end') return { seq, sent: new Map(), ended: true };
  try {
    const list: unknown = JSON.parse(Buffer.from(m[2], 'base64url').toString('utf8'));
    if (!Array.isArray(list)) return null;
    const sent = new Map<string, number>();
    for (const pair of list) {
      if (!Array.isArray(pair) || typeof pair[0] !== 'string' || pair[0].length > 200 || !Number.isSafeInteger(pair[1]) || pair[1] < 0) return null;
      sent.set(pair[0], pair[1] as number);
    }
    return { seq, sent, ended: false };
  } catch {
    return null;
  }
}
