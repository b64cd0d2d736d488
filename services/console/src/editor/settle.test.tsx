// @vitest-environment happy-dom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, renderHook } from '@testing-library/react';
import { SETTLE_MS, isDragging, useSettled } from './use-editor';
import { graphToCanvas } from './model/canvas';

describe('useSettled', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('settles a value once it has been still for SETTLE_MS', () => {
    const { result, rerender } = renderHook(({ v }) => useSettled(v), { initialProps: { v: 1 } });
    rerender({ v: 2 });
    act(() => void vi.advanceTimersByTime(SETTLE_MS - 1));
    expect(result.current).toBe(1);
    act(() => void vi.advanceTimersByTime(1));
    expect(result.current).toBe(2);
  });

  it('settles nothing while held, however long a value rests, then the last value once released', () => {
    const { result, rerender } = renderHook(({ v, hold }) => useSettled(v, hold), { initialProps: { v: 0, hold: false } });
    // a slow drag: each move rests far longer than SETTLE_MS
    for (let v = 1; v <= 5; v++) {
      rerender({ v, hold: true });
      act(() => void vi.advanceTimersByTime(SETTLE_MS * 4));
      expect(result.current).toBe(0);
    }
    rerender({ v: 5, hold: false });
    act(() => void vi.advanceTimersByTime(SETTLE_MS));
    expect(result.current).toBe(5);
  });
});

describe('isDragging', () => {
  it('is true only while a node carries the drag mark', () => {
    const m = graphToCanvas({ schemaVersion: 1, kind: 'Standard', nodes: [{ key: 'a', kind: 'Start' }, { key: 'b', kind: 'End' }], edges: [] });
    expect(isDragging(m)).toBe(false);
    expect(isDragging({ ...m, nodes: m.nodes.map((n, i) => (i === 1 ? { ...n, dragging: true } : n)) })).toBe(true);
    expect(isDragging({ ...m, nodes: m.nodes.map((n) => ({ ...n, dragging: false })) })).toBe(false);
  });
});
