import { describe, expect, it } from 'vitest';
import { isDotPath, resolveDotPath } from './dot-path';

describe('dot paths', () => {
  const doc = { a: { b: { c: 3, n: null } }, list: [1, 2], s: 'x' };

  it('resolves nested object members, null included', () => {
    expect(resolveDotPath(doc, 'a.b.c')).toEqual({ found: true, value: 3 });
    expect(resolveDotPath(doc, 'a.b.n')).toEqual({ found: true, value: null });
    expect(resolveDotPath(doc, 'a')).toEqual({ found: true, value: { b: { c: 3, n: null } } });
  });

  it('reports missing members, indexing into arrays and walking through scalars as not found', () => {
    expect(resolveDotPath(doc, 'a.x')).toEqual({ found: false });
    expect(resolveDotPath(doc, 'list.0')).toEqual({ found: false });
    expect(resolveDotPath(doc, 's.length')).toEqual({ found: false });
  });

  it('never walks inherited members', () => {
    expect(resolveDotPath(doc, 'a.constructor')).toEqual({ found: false });
    expect(resolveDotPath(doc, '__proto__')).toEqual({ found: false });
  });

  it('refuses empty segments', () => {
    expect(isDotPath('a..b')).toBe(false);
    expect(isDotPath('')).toBe(false);
    expect(isDotPath('.a')).toBe(false);
    expect(resolveDotPath(doc, 'a.')).toEqual({ found: false });
  });
});
