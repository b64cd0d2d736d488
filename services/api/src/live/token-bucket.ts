/**
 * Admission of `subscribeRun` calls per replica: a token bucket (`burst` tokens, refilled
 * at `ratePerSec`). A call without a token waits in FIFO order; once `maxWaiting` calls
 * wait, further ones are refused with the delay after which a retry would likely pass.
 * A reconnect storm is thereby admitted gradually instead of hitting Postgres at once.
 */

/** Outcome of {@link TokenBucket.take}. */
export type Admission = { admitted: true } | { admitted: false; retryAfterMs: number };

export interface TokenBucket {
  /** resolves when a token is taken, or at once with a refusal when too many wait */
  take(): Promise<Admission>;
  /** waiting callers (for metrics and tests) */
  waiting(): number;
  /** refuses every waiter (shutdown) */
  close(): void;
}

export interface TokenBucketOptions {
  ratePerSec: number;
  burst: number;
  maxWaiting: number;
  now?: () => number;
}

/** Creates a {@link TokenBucket}. */
export function createTokenBucket(o: TokenBucketOptions): TokenBucket {
  const now = o.now ?? (() => performance.now());
  let tokens = o.burst;
  let at = now();
  const queue: Array<(a: Admission) => void> = [];
  let timer: NodeJS.Timeout | null = null;

  const refill = () => {
    const t = now();
    tokens = Math.min(o.burst, tokens + ((t - at) * o.ratePerSec) / 1000);
    at = t;
  };
  const msPerToken = 1000 / o.ratePerSec;

  const drain = () => {
    timer = null;
    refill();
    while (queue.length > 0 && tokens >= 1) {
      tokens -= 1;
      queue.shift()!({ admitted: true });
    }
    if (queue.length > 0) timer = setTimeout(drain, Math.max(1, Math.ceil((1 - tokens) * msPerToken)));
  };

  return {
    take() {
      refill();
      if (queue.length === 0 && tokens >= 1) {
        tokens -= 1;
        return Promise.resolve({ admitted: true });
      }
      if (queue.length >= o.maxWaiting) {
        return Promise.resolve({ admitted: false, retryAfterMs: Math.ceil((queue.length + 1) * msPerToken) });
      }
      return new Promise<Admission>((resolve) => {
        queue.push(resolve);
        timer ??= setTimeout(drain, Math.max(1, Math.ceil((1 - tokens) * msPerToken)));
      });
    },
    waiting: () => queue.length,
    close() {
      if (timer) clearTimeout(timer);
      timer = null;
      for (const r of queue.splice(0)) r({ admitted: false, retryAfterMs: 1000 });
    },
  };
}
