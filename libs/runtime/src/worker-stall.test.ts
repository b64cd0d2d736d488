import { describe, expect, it } from 'vitest';
import { checkStall, stallReason, workerStallOptions } from './worker-stall';
import { z } from 'zod';

describe('stallReason', () => {
  it('names a worker idle for WORKER_STALL_MS while jobs wait as stalled', () => {
    expect(stallReason(10_000, 4_000, 3, 5_000)).toBe('no job taken or finished for 6000 ms while 3 wait (WORKER_STALL_MS=5000)');
  });

  it('does not call a worker stalled when nothing waits, however long its call runs', () => {
    expect(stallReason(1_000_000, 0, 0, 5_000)).toBeNull();
  });

  it('does not call a worker stalled before WORKER_STALL_MS passed, jobs waiting or not', () => {
    expect(stallReason(10_000, 5_001, 7, 5_000)).toBeNull();
  });
});

describe('checkStall', () => {
  it('reads the backlog only once the worker has been idle for WORKER_STALL_MS', async () => {
    let reads = 0;
    const progress = { stallMs: 1_000, lastProgressAt: () => 10_000, waiting: async () => (reads++, 2) };
    expect(await checkStall(progress, 10_500)).toBeNull();
    expect(reads).toBe(0);
    expect(await checkStall(progress, 11_000)).toMatch(/while 2 wait/);
    expect(reads).toBe(1);
  });
});

describe('WORKER_STALL_MS', () => {
  const schema = z.object(workerStallOptions);
  it('defaults to five minutes and refuses values below 100 ms', () => {
    expect(schema.parse({}).WORKER_STALL_MS).toBe(300_000);
    expect(schema.safeParse({ WORKER_STALL_MS: '50' }).success).toBe(false);
    expect(schema.safeParse({ WORKER_STALL_MS: 'soon' }).success).toBe(false);
  });
});
