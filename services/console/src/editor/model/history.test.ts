import { describe, expect, it } from 'vitest';
import { canRedo, canUndo, record, redo, startHistory, undo } from './history';

const same = (a: string, b: string) => a === b;

describe('the undo history', () => {
  it('steps back and forth through recorded states', () => {
    let h = startHistory('a');
    h = record(h, 'b', same);
    h = record(h, 'c', same);
    expect(canUndo(h)).toBe(true);
    expect(canRedo(h)).toBe(false);
    h = undo(h);
    expect(h.present).toBe('b');
    h = undo(h);
    expect(h.present).toBe('a');
    expect(canUndo(h)).toBe(false);
    h = redo(h);
    expect(h.present).toBe('b');
    h = redo(h);
    expect(h.present).toBe('c');
    expect(canRedo(h)).toBe(false);
  });

  it('records nothing for a state the same as the present', () => {
    const h = record(startHistory('a'), 'b', same);
    expect(record(h, 'b', same)).toBe(h);
  });

  it('drops what was undone once a new state is recorded', () => {
    let h = record(record(startHistory('a'), 'b', same), 'c', same);
    h = undo(undo(h));
    h = record(h, 'x', same);
    expect(h).toEqual({ past: ['a'], present: 'x', future: [] });
    expect(redo(h)).toBe(h);
  });

  it('answers the same history when there is nothing to undo or redo', () => {
    const h = startHistory('a');
    expect(undo(h)).toBe(h);
    expect(redo(h)).toBe(h);
  });

  it('keeps at most the limit of past states, dropping the oldest', () => {
    let h = startHistory(0);
    for (let i = 1; i <= 10; i++) h = record(h, i, (a, b) => a === b, 3);
    expect(h.past).toEqual([7, 8, 9]);
    expect(h.present).toBe(10);
  });

  it('compares states with the given sameness, not identity', () => {
    const byText = (a: { t: string }, b: { t: string }) => a.t === b.t;
    const h = startHistory({ t: 'doc', measured: 1 });
    expect(record(h, { t: 'doc', measured: 2 }, byText)).toBe(h);
  });
});
