import { describe, expect, it } from 'vitest';
import { parsePairLines } from './PairLinesField';

describe('key: value lines', () => {
  it('reads one key: value per line, blank lines ignored, the value may hold colons', () => {
    expect(parsePairLines('')).toEqual({ ok: true, value: undefined });
    expect(parsePairLines('customer: acme\n\n batch : nightly-42 \nurl: https://x.test/a')).toEqual({
      ok: true,
      value: { customer: 'acme', batch: 'nightly-42', url: 'https://x.test/a' },
    });
  });

  it('names the first line that is not a pair', () => {
    expect(parsePairLines('a: 1\nnope\nb: 2')).toEqual({ ok: false, line: 2 });
    expect(parsePairLines(': v')).toEqual({ ok: false, line: 1 });
    expect(parsePairLines('k:')).toEqual({ ok: false, line: 1 });
  });
});
