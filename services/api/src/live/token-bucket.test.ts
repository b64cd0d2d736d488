import { describe, expect, it } from 'vitest';
import { createTokenBucket } from './token-bucket';

describe('subscribe admission token bucket', () => {
  it('admits a burst at once, queues the next callers in order and refuses beyond the waiting cap', async () => {
    // a controlled clock: on the real one a slow machine refills a token between the calls
    let now = 0;
    const bucket = createTokenBucket({ ratePerSec: 1000, burst: 3, maxWaiting: 2, now: () => now });
    const first = await Promise.all([bucket.take(), bucket.take(), bucket.take()]);
    expect(first.every((a) => a.admitted)).toBe(true);
    const order: number[] = [];
    const queued = [bucket.take().then((a) => (order.push(1), a)), bucket.take().then((a) => (order.push(2), a))];
    expect(bucket.waiting()).toBe(2);
    const refused = await bucket.take();
    expect(refused.admitted).toBe(false);
    expect(refused.admitted === false && refused.retryAfterMs > 0).toBe(true);
    now += 2; // two tokens: the waiters' drain timer admits both
    const later = await Promise.all(queued);
    expect(later.every((a) => a.admitted)).toBe(true);
    expect(order).toEqual([1, 2]);
    bucket.close();
  });

  it('refills by elapsed time up to the burst size', async () => {
    let now = 0;
    const bucket = createTokenBucket({ ratePerSec: 10, burst: 2, maxWaiting: 0, now: () => now });
    expect((await bucket.take()).admitted).toBe(true);
    expect((await bucket.take()).admitted).toBe(true);
    expect((await bucket.take()).admitted).toBe(false);
    now += 100; // one token
    expect((await bucket.take()).admitted).toBe(true);
    expect((await bucket.take()).admitted).toBe(false);
    now += 10_000; // capped at burst
    expect((await bucket.take()).admitted).toBe(true);
    expect((await bucket.take()).admitted).toBe(true);
    expect((await bucket.take()).admitted).toBe(false);
  });

  it('answers every waiter with a refusal on close', async () => {
    const bucket = createTokenBucket({ ratePerSec: 0.001, burst: 1, maxWaiting: 5 });
    await bucket.take();
    const waiting = bucket.take();
    bucket.close();
    expect((await waiting).admitted).toBe(false);
  });
});
