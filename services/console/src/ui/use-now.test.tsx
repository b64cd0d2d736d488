// @vitest-environment happy-dom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, renderHook } from '@testing-library/react';
import { useNow } from './primitives';

describe('useNow', () => {
  beforeEach(() => vi.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => vi.useRealTimers());

  it('advances every second while ticking, and stands still when not', () => {
    const { result, rerender } = renderHook(({ ticking }) => useNow(ticking), { initialProps: { ticking: true } });
    expect(result.current).toBe(1_000_000);
    act(() => void vi.advanceTimersByTime(3_000));
    expect(result.current).toBe(1_003_000);
    rerender({ ticking: false });
    act(() => void vi.advanceTimersByTime(5_000));
    expect(result.current).toBe(1_003_000);
  });
});
