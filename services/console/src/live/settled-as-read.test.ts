import { describe, expect, it } from 'vitest';
import type { RunDetail } from '@flowline/client';
import { settledAsRead } from './use-run-live';

const read = (status: string, lastSeq: number) => ({ run: { status, lastSeq } }) as unknown as RunDetail;
const snapshot = (watermark: number, events: unknown[] = []) => ({ events, watermark, snapshot: { watermark } });

describe('whether a live change needs the run read again', () => {
  it('needs no re-read for the first snapshot of a run already read as ended at or past its last event', () => {
    expect(settledAsRead(read('Completed', 40), snapshot(40))).toBe(true);
    expect(settledAsRead(read('Failed', 41), snapshot(40))).toBe(true);
  });

  it('re-reads a live run, a read older than the snapshot, a change with events, a later change, or nothing read yet', () => {
    expect(settledAsRead(read('Running', 40), snapshot(40))).toBe(false);
    expect(settledAsRead(read('Cancelling', 40), snapshot(40))).toBe(false);
    expect(settledAsRead(read('Completed', 39), snapshot(40))).toBe(false);
    expect(settledAsRead(read('Completed', 40), snapshot(41, [{ seq: 41 }]))).toBe(false);
    expect(settledAsRead(read('Completed', 40), { events: [], watermark: 40 })).toBe(false);
    expect(settledAsRead(undefined, snapshot(40))).toBe(false);
  });
});
