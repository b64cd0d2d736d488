import { describe, expect, it } from 'vitest';
import { createShutdown } from './shutdown';

describe('createShutdown', () => {
  it('runs releasers in reverse order once and exits 0', async () => {
    const order: string[] = [];
    const codes: number[] = [];
    const s = createShutdown({ exit: (c) => void codes.push(c) });
    s.onShutdown(() => void order.push('pool'));
    s.onShutdown(async () => void order.push('loop'));
    await Promise.all([s.shutdown('test'), s.shutdown('again')]);
    expect(order).toEqual(['loop', 'pool']);
    expect(codes).toEqual([0]);
  });

  it('exits 1 when a releaser fails, after running the others', async () => {
    const order: string[] = [];
    const codes: number[] = [];
    const s = createShutdown({ exit: (c) => void codes.push(c) });
    s.onShutdown(() => void order.push('pool'));
    s.onShutdown(() => {
      throw new Error('stuck');
    });
    await s.shutdown('test');
    expect(order).toEqual(['pool']);
    expect(codes).toEqual([1]);
  });

  it('exits 1 when the grace period runs out', async () => {
    const codes: number[] = [];
    const s = createShutdown({ exit: (c) => void codes.push(c), graceMs: 10 });
    s.onShutdown(() => new Promise<void>(() => {}));
    await s.shutdown('test');
    expect(codes).toEqual([1]);
  });

  it('runs every releaser, then exits with the code a self-requested shutdown asks for', async () => {
    const order: string[] = [];
    const codes: number[] = [];
    const s = createShutdown({ exit: (c) => void codes.push(c) });
    s.onShutdown(() => void order.push('pool'));
    s.onShutdown(() => void order.push('worker'));
    await s.shutdown('a fault the process drained after', 3);
    expect(order).toEqual(['worker', 'pool']);
    expect(codes).toEqual([3]);
  });
});
