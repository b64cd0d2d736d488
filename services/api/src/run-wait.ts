/**
 * Run and wait: a start that asks to wait (`?wait=30s`) is answered once the run ends, or as
 * a plain 202 when the wait runs out first. The wait holds no database connection while it
 * sleeps: it wakes on the replica's change feed (the pings the live channel relays), with a
 * re-read every few poll periods in case a ping was lost, and reads the run head only then.
 */
import { getRunHead } from '@flowline/db';
import { TERMINAL_RUN_STATUSES, type RunStatus } from '@flowline/graph';
import type { AppDeps } from './context';
import { sharedChangeFeed } from './live/change-feed';
import { ValidationFailedError } from './errors';

/** The longest wait a start may ask for when MAX_RUN_WAIT_S is not given, seconds. */
export const DEFAULT_MAX_RUN_WAIT_S = 60;

/** Without a ping, the run head is re-read after this many `streamPollMs` (lost-ping bound). */
const FALLBACK_FACTOR = 8;

/**
 * Reads `?wait=`: a duration `30s`, `1500ms`, `2m`, or plain seconds `30`, capped at the
 * `maxSeconds` option (a longer ask waits that long). Absent → null (no wait).
 * @throws ValidationFailedError keyed `wait` for anything else
 */
export function parseWait(raw: string | undefined, maxSeconds: number): number | null {
  if (raw === undefined) return null;
  const m = /^(\d{1,9})(ms|s|m)?$/.exec(raw.trim());
  if (!m) throw new ValidationFailedError('wait is not a duration', [{ key: 'wait', message: 'a duration such as 30s, 1500ms or 2m' }]);
  const n = Number(m[1]);
  const ms = m[2] === 'ms' ? n : m[2] === 'm' ? n * 60_000 : n * 1000;
  return Math.min(ms, maxSeconds * 1000);
}

/**
 * Waits until the run is terminal or `ms` passed (or `signal` aborts: the client went away).
 * @returns true when the run is terminal
 */
export async function waitForRunEnd(deps: AppDeps, tenantId: string, runId: string, ms: number, signal?: AbortSignal): Promise<boolean> {
  const deadline = Date.now() + ms;
  const feed = sharedChangeFeed(deps.redis, deps.queuePrefix, deps.logger);
  let wake: (() => void) | null = null;
  let pinged: boolean;
  const unwatch = feed.watch(runId, () => {
    pinged = true;
    wake?.();
  });
  const onAbort = () => wake?.();
  signal?.addEventListener('abort', onAbort);
  try {
    // subscribed before the first read: an end committed after it is pinged to this wait
    await unwatch.ready.catch(() => undefined);
    for (;;) {
      pinged = false;
      const head = await getRunHead(deps.pool, tenantId, runId);
      if (!head) return false;
      if (TERMINAL_RUN_STATUSES.has(head.status as RunStatus)) return true;
      const left = deadline - Date.now();
      if (left <= 0 || signal?.aborted) return false;
      if (pinged) continue;
      await new Promise<void>((resolve) => {
        const t = setTimeout(done, Math.min(left, deps.limits.streamPollMs * FALLBACK_FACTOR));
        function done() {
          clearTimeout(t);
          wake = null;
          resolve();
        }
        wake = done;
      });
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    unwatch();
  }
}
