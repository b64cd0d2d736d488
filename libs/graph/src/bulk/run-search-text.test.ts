import { describe, expect, it } from 'vitest';
import { DEFAULT_METADATA_LIMITS } from './metadata';
import { checkRunSearch } from './run-search';
import { MAX_RUN_SEARCH_TEXT_CHARS, escapeLike, readRunSearchText } from './run-search-text';

const ID = '3f2a91c0-1b2c-4d5e-8f90-a1b2c3d4e5f6';

describe('reading the free text of a run search', () => {
  it('reads a whole run id (any case) as that id', () => {
    expect(readRunSearchText(` ${ID.toUpperCase()} `)).toEqual({ kind: 'id', id: ID });
  });

  it('reads 4 to 35 characters of an id as written as a prefix, padded to the range of ids it starts', () => {
    expect(readRunSearchText('3F2A')).toEqual({
      kind: 'idPrefix',
      prefix: '3f2a',
      low: '3f2a0000-0000-0000-0000-000000000000',
      high: '3f2affff-ffff-ffff-ffff-ffffffffffff',
    });
    expect(readRunSearchText('3f2a91c0-1b')).toMatchObject({ kind: 'idPrefix', low: '3f2a91c0-1b00-0000-0000-000000000000', high: '3f2a91c0-1bff-ffff-ffff-ffffffffffff' });
    // every prefix of an id is read as a prefix from 4 characters on, and contains the id
    for (let n = 4; n < ID.length; n++) {
      const r = readRunSearchText(ID.slice(0, n));
      expect(r).toMatchObject({ kind: 'idPrefix' });
      if ('low' in r) expect(r.low <= ID && ID <= r.high).toBe(true);
    }
  });

  it('reads anything else as text: short hex, hyphens out of place, words, and quoted hex', () => {
    expect(readRunSearchText('3f2')).toMatchObject({ kind: 'text', text: '3f2', pattern: '%3f2%' });
    expect(readRunSearchText('3f2a91c01b')).toMatchObject({ kind: 'text' });
    expect(readRunSearchText('nightly batch')).toEqual({ kind: 'text', text: 'nightly batch', pattern: '%nightly batch%' });
    expect(readRunSearchText('"cafe"')).toEqual({ kind: 'text', text: 'cafe', pattern: '%cafe%' });
    expect(readRunSearchText(`"${ID}"`)).toMatchObject({ kind: 'text', text: ID });
  });

  it('escapes the LIKE wildcards so they match themselves', () => {
    expect(escapeLike('50%_off\\now')).toBe('50\\%\\_off\\\\now');
    expect(readRunSearchText('100%')).toMatchObject({ pattern: '%100\\%%' });
  });

  it('refuses empty text, text over the limit and control characters, keyed q in a search', () => {
    expect(readRunSearchText('   ')).toEqual({ problem: 'must not be empty' });
    expect(readRunSearchText('""')).toEqual({ problem: 'must not be empty' });
    expect(readRunSearchText('x'.repeat(MAX_RUN_SEARCH_TEXT_CHARS))).toMatchObject({ kind: 'text' });
    expect(readRunSearchText('x'.repeat(MAX_RUN_SEARCH_TEXT_CHARS + 1))).toHaveProperty('problem');
    expect(readRunSearchText('a\u0000b')).toHaveProperty('problem');
    expect(readRunSearchText('a\ud800b')).toHaveProperty('problem');
    expect(readRunSearchText(['a'])).toEqual({ problem: 'must be text' });
    expect(checkRunSearch({ q: '' }, DEFAULT_METADATA_LIMITS)).toEqual({ ok: false, issues: [{ key: 'q', message: 'must not be empty' }] });
    expect(checkRunSearch({ q: 'abcd', status: 'Failed' }, DEFAULT_METADATA_LIMITS)).toMatchObject({ ok: true, search: { statuses: ['Failed'], text: { kind: 'idPrefix' } } });
  });
});
