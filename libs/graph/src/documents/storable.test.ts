import { describe, expect, it } from 'vitest';
import { parseJsonExact } from '../conditions/exact-json';
import { unstorableNumber, unstorableText, unstorableValues } from './storable';

describe('unstorableText', () => {
  it('refuses U+0000 and lone surrogates and accepts paired surrogates and other control characters', () => {
    expect(unstorableText('a\u0000b')).toMatch(/NUL/);
    expect(unstorableText('\ud800')).toMatch(/surrogate/);
    expect(unstorableText('x\udc00')).toMatch(/surrogate/);
    expect(unstorableText('\udc00\ud800')).toMatch(/surrogate/);
    expect(unstorableText('😀 \u0001 \u007f é')).toBeNull();
  });
});

describe('unstorableNumber (the range of Postgres numeric)', () => {
  it.each([
    ['1e131071', null],
    ['123.456e131069', null],
    ['0.00001e131076', null],
    ['1e-16383', null],
    ['-1.5e-16382', null],
    ['0.0e-16382', null],
    ['0e131073', null],
    ['9007199254740993', null],
  ])('stores %s', (token, expected) => {
    expect(unstorableNumber(token)).toBe(expected);
  });

  it.each(['1e131072', '123.456e131070', '0.00001e131077', '1e-16384', '-1.5e-16383', '0e-20000', '0.1e-999999', '1e999999999999'])(
    'refuses %s',
    (token) => {
      expect(unstorableNumber(token)).toMatch(/out of the storable range/);
    },
  );
});

describe('unstorableValues', () => {
  it('names the path of every unstorable string, member name and number of a parsed document', () => {
    const doc = parseJsonExact('{"a":{"b":["ok","x\\u0000"]},"k\\u0000":1,"n":0.1e-999999,"s":"\\ud800","fine":1e400}');
    expect(unstorableValues(doc, 'input')).toEqual([
      { path: 'input.a.b.1', message: expect.stringMatching(/^string contains U\+0000/) },
      { path: 'input.k\\u0000', message: expect.stringMatching(/^member name contains U\+0000/) },
      { path: 'input.n', message: expect.stringMatching(/out of the storable range/) },
      { path: 'input.s', message: expect.stringMatching(/lone UTF-16 surrogate/) },
    ]);
  });

  it('finds nothing in a storable document and stops at the limit', () => {
    expect(unstorableValues(parseJsonExact('{"a":[1,2.5,"x",null,true,{"b":9007199254740993}]}'))).toEqual([]);
    expect(unstorableValues(Array.from({ length: 50 }, () => '\u0000'), '', 3)).toHaveLength(3);
    expect(unstorableValues('\u0000')).toEqual([{ path: '', message: expect.any(String) }]);
  });
});
