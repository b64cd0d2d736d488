import { describe, expect, it } from 'vitest';
import { parseJsonExact } from '../conditions/exact-json';
import { JsonNumber, stringifyJson } from '../conditions/exact-json';
import { holdsVerbatimTrigger, needsVerbatimStorage, storedDocumentText, unstorableNumber, unstorableText, unstorableValues } from './storable';
import { utf8ByteLength } from './envelope';

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

describe('the stored form of a document (numbers kept as written)', () => {
  it('keeps a document holding a number written with an exponent as its own text, any other as itself', () => {
    for (const text of ['{"x":1e131071}', '[1E-7]', '{"a":[0,-2.5e+3]}', '1e5', '{"$json":"v1","text":"1"}']) {
      expect(needsVerbatimStorage(text)).toBe(true);
      expect(JSON.parse(storedDocumentText(text))).toEqual({ $json: 'v1', text });
    }
    for (const text of ['{"x":100000}', '[1.5,"e5"]', '{"a":"no exponent here"}', '12345678901234567890']) {
      expect(needsVerbatimStorage(text)).toBe(false);
      expect(storedDocumentText(text)).toBe(text);
    }
  });

  it('finds in a parsed document what its written text would show, without writing it', () => {
    expect(holdsVerbatimTrigger({ a: [1, 2, { b: new JsonNumber('1e131071') }] })).toBe(true);
    expect(holdsVerbatimTrigger([1e21])).toBe(true);
    expect(holdsVerbatimTrigger([1e-7])).toBe(true);
    expect(holdsVerbatimTrigger({ deep: { $json: 'x' } })).toBe(true);
    expect(holdsVerbatimTrigger({ a: [1, 1e20, 0.000001, -0, new JsonNumber('9007199254740993'), 'e5'] })).toBe(false);
    for (const v of [{ a: new JsonNumber('1e131071') }, [1e21], [1e-7], { a: 1 }, [0.000001]]) {
      expect(holdsVerbatimTrigger(v)).toBe(needsVerbatimStorage(stringifyJson(v)));
    }
  });

  it('counts what is stored in the size caps: the verbatim envelope, escapes included', () => {
    const quotes = { s: '"'.repeat(100) };
    expect(utf8ByteLength(quotes)).toBe(JSON.stringify(quotes).length);
    const kept = { s: '"'.repeat(100), n: new JsonNumber('1e400') };
    expect(utf8ByteLength(kept as never)).toBe(JSON.stringify({ $json: 'v1', text: '{"s":"' + '\\"'.repeat(100) + '","n":1e400}' }).length);
  });
});
