import { describe, expect, it } from 'vitest';
import { formatCursor, parseCursor } from './sse-cursor';

describe('SSE cursor', () => {
  it('round-trips a seq, a seq with activity positions, and the end', () => {
    for (const c of [
      { seq: 7, sent: new Map<string, number>(), ended: false },
      { seq: 12, sent: new Map([['inv-a', 40], ['inv-b', 0]]), ended: false },
      { seq: 30, sent: new Map<string, number>(), ended: true },
    ]) {
      expect(parseCursor(formatCursor(c))).toEqual(c);
    }
    expect(formatCursor({ seq: 7, sent: new Map(), ended: false })).toBe('7');
    expect(formatCursor({ seq: 30, sent: new Map(), ended: true })).toBe('30.end');
  });

  it('reads an empty value as the start and refuses what it never wrote', () => {
    expect(parseCursor('')).toEqual({ seq: 0, sent: new Map(), ended: false });
    for (const bad of ['x', '-1', '1.', '1.!!', `1.${Buffer.from('{"a":1}').toString('base64url')}`, `1.${Buffer.from('[["a",-1]]').toString('base64url')}`]) {
      expect(parseCursor(bad)).toBeNull();
    }
  });
});
