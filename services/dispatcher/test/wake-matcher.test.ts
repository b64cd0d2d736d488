import { describe, expect, it, vi } from 'vitest';
import { WakeMatcher } from '../src/wake-matcher';

describe('WakeMatcher', () => {
  it('takes the wake that follows an outcome for the worker echo, once, within the window', () => {
    const m = new WakeMatcher(5, () => undefined);
    expect(m.isWorkerWake('run', 1_000)).toBe(false);
    m.outcome('run', 1_000);
    expect(m.isWorkerWake('run', 1_100)).toBe(true);
    expect(m.isWorkerWake('run', 1_200)).toBe(false);
    m.outcome('run', 1_000);
    expect(m.isWorkerWake('run', 10_000)).toBe(false);
  });

  it('matches a held wake with the outcome that arrives after it, and reports an unmatched one as foreign', () => {
    vi.useFakeTimers();
    try {
      const foreign: string[][] = [];
      const m = new WakeMatcher(5, (ids) => foreign.push(ids));
      m.hold('echoed');
      m.hold('changed');
      m.outcome('echoed');
      vi.advanceTimersByTime(5);
      expect(foreign).toEqual([['changed']]);
      // the held wake was consumed by its outcome: no further wake is expected for it
      expect(m.isWorkerWake('echoed')).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });

  it('reports a wake as foreign at once when holding is off', () => {
    const foreign: string[][] = [];
    const m = new WakeMatcher(0, (ids) => foreign.push(ids));
    m.hold('run');
    expect(foreign).toEqual([['run']]);
  });
});
