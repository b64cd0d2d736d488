import { describe, expect, it } from 'vitest';
import { createdRangeOf, parseRunsSearch } from './search';

describe('the runs list’s search in the address', () => {
  it('keeps a search text and well-formed days, drops malformed ones', () => {
    expect(parseRunsSearch({ q: '  shipping ', from: '2026-03-01', to: '2026-13-40' })).toEqual({ q: 'shipping', from: '2026-03-01' });
    expect(parseRunsSearch({ from: 'yesterday' })).toEqual({});
  });

  it('turns the days into the API’s created range, the last day included', () => {
    const r = createdRangeOf({ from: '2026-03-01', to: '2026-03-02' });
    expect(Date.parse(r.createdAfter!)).toBe(new Date('2026-03-01T00:00').getTime());
    expect(Date.parse(r.createdBefore!)).toBe(new Date('2026-03-03T00:00').getTime());
    expect(createdRangeOf({})).toEqual({});
  });
});
