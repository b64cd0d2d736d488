import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareExactNumbers } from './compare';
import {
  DEFAULT_MAX_JSON_DEPTH,
  JsonNumber,
  JsonSyntaxError,
  mayHoldInexactNumber,
  parseJson,
  parseJsonExact,
  stringifyJson,
  stringifyJsonExact,
} from './exact-json';

function syntaxError(text: string): JsonSyntaxError {
  try {
    parseJsonExact(text);
  } catch (e) {
    if (e instanceof JsonSyntaxError) return e;
    throw new Error(`threw ${String(e)} instead of JsonSyntaxError`, { cause: e });
  }
  throw new Error(`accepted ${JSON.stringify(text)}`);
}

/** Replaces every JsonNumber by its nearest double, as JSON.parse would have read it. */
function lossy(v: unknown): unknown {
  if (v instanceof JsonNumber) return Number(v.text);
  if (Array.isArray(v)) return v.map(lossy);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) Object.defineProperty(out, k, { value: lossy(x), writable: true, enumerable: true, configurable: true });
    return out;
  }
  return v;
}

/** JSON text, sometimes damaged by splicing a few characters in. */
const almostJson = fc.oneof(
  fc.string(),
  fc.string({ unit: fc.constantFrom(...'{}[]:,"\\ -+.0123456789eEtrufalsn\t\n'.split('')) }),
  fc.tuple(fc.json(), fc.nat(), fc.nat({ max: 3 }), fc.string({ maxLength: 3 })).map(
    ([t, at, cut, ins]) => t.slice(0, at % (t.length + 1)) + ins + t.slice((at % (t.length + 1)) + cut),
  ),
);

/** thousands of generated documents per property: seconds on an idle host, far more on a loaded 2-core one */
const PROPERTY_TIMEOUT_MS = 180_000;

describe('parseJsonExact', { timeout: PROPERTY_TIMEOUT_MS }, () => {
  it('parses what JSON.parse parses, to the same values, for any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const text = JSON.stringify(v);
        expect(parseJsonExact(text)).toStrictEqual(JSON.parse(text));
      }),
      { numRuns: 500 },
    );
  });

  it('agrees with JSON.parse on acceptance of arbitrary text and throws nothing but JsonSyntaxError', () => {
    fc.assert(
      fc.property(almostJson, (text) => {
        let expected: { ok: true; value: unknown } | { ok: false };
        try {
          expected = { ok: true, value: JSON.parse(text) };
        } catch {
          expected = { ok: false };
        }
        if (expected.ok) {
          // a token no double equals is a JsonNumber here and the nearest double there
          expect(lossy(parseJsonExact(text))).toStrictEqual(expected.value);
        } else {
          expect(() => parseJsonExact(text)).toThrow(JsonSyntaxError);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps unsafe integers and over-long decimals as JsonNumber with their exact text', () => {
    const v = parseJsonExact('[9007199254740993, -123456789012345678901234567890, 0.1000000000000000055511151231257827, 1e400]');
    expect(v).toEqual([
      new JsonNumber('9007199254740993'),
      new JsonNumber('-123456789012345678901234567890'),
      new JsonNumber('0.1000000000000000055511151231257827'),
      new JsonNumber('1e400'),
    ]);
  });

  it('returns plain numbers for tokens that only spell a double differently', () => {
    const v = parseJsonExact('[9007199254740992, 1.0, 1e2, 1E+2, 0.10, -0, 0.1, 1e21, 5e-324, 12.5e-1]');
    expect(v).toStrictEqual([9007199254740992, 1, 100, 100, 0.1, -0, 0.1, 1e21, 5e-324, 1.25]);
  });

  it('compares a parsed integer exactly with a bigint of the same value', () => {
    fc.assert(
      fc.property(fc.bigInt(), (n) => {
        const parsed = parseJsonExact(n.toString()) as number | JsonNumber;
        expect(compareExactNumbers(parsed, n)).toBe(0);
        expect(compareExactNumbers(parsed, n + 1n)).toBe(-1);
        expect(compareExactNumbers(n - 1n, parsed)).toBe(-1);
      }),
    );
  });

  it('orders parsed decimals exactly as their scaled integer values order', () => {
    const decimal = fc.tuple(fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }), fc.nat({ max: 30 }));
    const text = ([m, scale]: [bigint, number]): string => {
      const digits = (m < 0n ? -m : m).toString().padStart(scale + 1, '0');
      const body = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
      return (m < 0n ? '-' : '') + body;
    };
    fc.assert(
      fc.property(decimal, decimal, (a, b) => {
        const scale = Math.max(a[1], b[1]);
        const ia = a[0] * 10n ** BigInt(scale - a[1]);
        const ib = b[0] * 10n ** BigInt(scale - b[1]);
        const want = ia < ib ? -1 : ia > ib ? 1 : 0;
        const pa = parseJsonExact(text(a)) as number | JsonNumber;
        const pb = parseJsonExact(text(b)) as number | JsonNumber;
        expect(compareExactNumbers(pa, pb)).toBe(want);
      }),
      { numRuns: 500 },
    );
  });

  it('keeps a plain decimal token as a number exactly when its value equals the double\'s shortest text', () => {
    const token = fc
      .tuple(fc.boolean(), fc.stringMatching(/^(0|[1-9][0-9]{0,19})$/), fc.stringMatching(/^[0-9]{0,20}$/))
      .map(([neg, int, frac]) => `${neg ? '-' : ''}${int}${frac === '' ? '' : `.${frac}`}`)
      .filter((t) => !/e/.test(String(Number(t))));
    fc.assert(
      fc.property(token, (t) => {
        const parsed = parseJsonExact(t);
        const exact = compareExactNumbers(new JsonNumber(t), Number(t)) === 0;
        expect(typeof parsed === 'number').toBe(exact);
        if (!exact) expect(parsed).toEqual(new JsonNumber(t));
      }),
      { numRuns: 2000 },
    );
  });

  it('parses strings with every escape, and keeps lone surrogates as JSON.parse does', () => {
    const text = '"a\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\uD83D\\uDE00\\uD800z"';
    expect(parseJsonExact(text)).toBe(JSON.parse(text));
  });

  it('makes "__proto__" an own data property, never the prototype', () => {
    const v = parseJsonExact('{"__proto__":{"polluted":true},"a":1}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(Object.keys(v)).toEqual(['__proto__', 'a']);
    expect((v as { polluted?: boolean }).polluted).toBeUndefined();
    expect(v).toStrictEqual(JSON.parse('{"__proto__":{"polluted":true},"a":1}'));
  });

  it('keeps the last value of a repeated key', () => {
    expect(parseJsonExact('{"a":1,"a":2}')).toStrictEqual({ a: 2 });
  });

  it.each([
    '', ' ', '{', '}', '[1,]', '{"a":1,}', '{"a" 1}', '{1:2}', '[1 2]', '01', '1.', '.5', '+1', '-', '1e', '1e+',
    'NaN', 'Infinity', "'a'", '"\\x"', '"\u0001"', '"abc', 'tru', 'nul', 'True', '1 2', '"\\u12G4"', '\uFEFF1', '[]]',
  ])('refuses %j with a JsonSyntaxError carrying code and offset', (text) => {
    const e = syntaxError(text);
    expect(e).toBeInstanceOf(SyntaxError);
    expect(e.code).toBe('InvalidJson');
    expect(e.offset).toBeGreaterThanOrEqual(0);
    expect(e.offset).toBeLessThanOrEqual(text.length);
  });

  it('refuses 100k unclosed brackets with a JsonSyntaxError instead of overflowing the stack', () => {
    expect(syntaxError('['.repeat(100_000)).message).toContain(`deeper than ${DEFAULT_MAX_JSON_DEPTH}`);
    expect(syntaxError('{"a":'.repeat(100_000)).code).toBe('InvalidJson');
  });

  it('accepts nesting up to the depth limit and refuses one level more', () => {
    const nest = (n: number): string => '['.repeat(n) + ']'.repeat(n);
    expect(() => parseJsonExact(nest(DEFAULT_MAX_JSON_DEPTH))).not.toThrow();
    expect(syntaxError(nest(DEFAULT_MAX_JSON_DEPTH + 1)).code).toBe('InvalidJson');
  });

  it('parses 100k levels iteratively when the limit is lifted', () => {
    let v = parseJsonExact('['.repeat(100_000) + '1' + ']'.repeat(100_000), { maxDepth: Infinity });
    let depth = 0;
    while (Array.isArray(v)) {
      v = v[0];
      depth++;
    }
    expect({ depth, v }).toEqual({ depth: 100_000, v: 1 });
  });
});

describe('stringifyJsonExact', { timeout: PROPERTY_TIMEOUT_MS }, () => {
  it('writes what JSON.stringify writes for any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(stringifyJsonExact(v)).toBe(JSON.stringify(v));
      }),
      { numRuns: 500 },
    );
  });

  it('writes JsonNumber tokens and bigints verbatim, so parse and stringify round-trip losslessly', () => {
    const text = '{"big":9007199254740993,"d":0.1000000000000000055511151231257827,"e":1e400,"a":[1,-0.5,"x"]}';
    expect(stringifyJsonExact(parseJsonExact(text))).toBe(text);
    expect(stringifyJsonExact({ n: 2n ** 64n })).toBe('{"n":18446744073709551616}');
  });

  it('makes plain JSON.stringify write the nearest double for a JsonNumber (the lossy fallback)', () => {
    expect(JSON.stringify({ n: new JsonNumber('9007199254740993') })).toBe('{"n":9007199254740992}');
  });

  it('follows JSON.stringify for toJSON, undefined members and non-finite numbers', () => {
    const v = { d: new Date(0), u: undefined, f: () => 1, arr: [undefined, Number.NaN, Infinity], s: 'é"\n' };
    expect(stringifyJsonExact(v)).toBe(JSON.stringify(v));
  });

  it('refuses a cycle and a top-level undefined with a TypeError', () => {
    const a: Record<string, unknown> = {};
    a.self = a;
    expect(() => stringifyJsonExact(a)).toThrow(TypeError);
    expect(() => stringifyJsonExact(undefined)).toThrow(TypeError);
  });

  it('indents as JSON.stringify does for any JSON value and indent', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: -2, max: 12 }), (v, indent) => {
        expect(stringifyJsonExact(v, indent)).toBe(JSON.stringify(v, null, indent));
      }),
      { numRuns: 500 },
    );
    expect(stringifyJsonExact({ a: [new JsonNumber('9007199254740993'), {}], b: [] }, 2)).toBe(
      '{\n  "a": [\n    9007199254740993,\n    {}\n  ],\n  "b": []\n}',
    );
  });
});

/** `digits` with a decimal point after the first `point` of them (none at 0 or past the end). */
const withPoint = (digits: string, point: number): string =>
  point <= 0 || point >= digits.length ? digits : `${digits.slice(0, point)}.${digits.slice(point)}`;

/**
 * A JSON number token: up to 30 integer digits with an optional fraction and exponent, or
 * 15 to 18 digits with an optional point, about where a double stops being exact.
 */
const numberToken = fc.oneof(
  fc
    .tuple(
      fc.boolean(),
      fc.stringMatching(/^(0|[1-9][0-9]{0,29})$/),
      fc.option(fc.stringMatching(/^[0-9]{1,25}$/)),
      fc.option(fc.stringMatching(/^[eE][+-]?[0-9]{1,3}$/)),
    )
    .map(([neg, int, frac, exp]) => `${neg ? '-' : ''}${int}${frac === null ? '' : `.${frac}`}${exp ?? ''}`),
  fc
    .tuple(
      fc.boolean(),
      fc.integer({ min: 15, max: 18 }).chain((n) => fc.stringMatching(new RegExp(`^[1-9][0-9]{${n - 1}}$`))),
      fc.option(fc.nat({ max: 17 })),
    )
    .map(([neg, digits, point]) => `${neg ? '-' : ''}${withPoint(digits, point ?? 0)}`),
);

/** JSON text of a document whose numbers are arbitrary tokens (several of them beyond a double). */
const documentWithNumberTokens = fc
  .tuple(fc.array(fc.tuple(fc.string(), numberToken), { maxLength: 6 }), fc.jsonValue())
  .map(
    ([members, rest]) =>
      `{${members.map(([k, t], i) => `${JSON.stringify(`${k}${i}`)}: ${t}, `).join('')}"rest": ${JSON.stringify(rest)}, "list": [${members.map(([, t]) => t).join(',')}]}`,
  );

describe('parseJson and stringifyJson (the native fast paths)', { timeout: PROPERTY_TIMEOUT_MS }, () => {
  it('parses any one number token, alone or among strings, to exactly what parseJsonExact returns', () => {
    fc.assert(
      fc.property(numberToken, fc.string(), (token, s) => {
        for (const text of [token, `{"s": ${JSON.stringify(s)}, "n": ${token}}`, `[${JSON.stringify(s)},\n ${token}]`]) {
          expect(parseJson(text)).toStrictEqual(parseJsonExact(text));
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('parses any document to exactly what parseJsonExact returns, whatever its number tokens', () => {
    fc.assert(
      fc.property(documentWithNumberTokens, (text) => {
        expect(parseJson(text)).toStrictEqual(parseJsonExact(text));
      }),
      { numRuns: 1000 },
    );
  });

  it('flags every text that holds a token no double equals (the scan never lets JSON.parse round one)', () => {
    for (const text of ['9007199254740993', '{"a": 9007199254740993}', '[1,\n  -12345678901234567]', '{"x":1e400}', '[0.1000000000000000055511151231257827]']) {
      expect(mayHoldInexactNumber(text), text).toBe(true);
      expect(parseJson(text)).toStrictEqual(parseJsonExact(text));
    }
  });

  it('leaves documents of ordinary numbers, ids, dates and digit-laden strings to JSON.parse', () => {
    const doc = {
      id: '3e4f0c2a-1b2c-4d5e-8f90-123456789012',
      at: '2024-05-01T12:34:56.789Z',
      phone: 'call 12345678901234567',
      counts: [0, -1, 2.5, 123456789012345, -0.000001],
      nested: { ratio: 0.3333333333333, ok: true, none: null },
    };
    expect(mayHoldInexactNumber(JSON.stringify(doc))).toBe(false);
    expect(mayHoldInexactNumber(JSON.stringify(doc, null, 2))).toBe(false);
  });

  it('leaves computed doubles written as their shortest text (17 digits, exponents) to JSON.parse', () => {
    const doc = { sum: 0.1 + 0.2, big: 1e21, tiny: 5e-324, max: Number.MAX_VALUE, list: [1 / 3, -2 / 3] };
    expect(mayHoldInexactNumber(JSON.stringify(doc))).toBe(false);
    expect(parseJson(JSON.stringify(doc))).toStrictEqual(doc);
    // the same values spelled otherwise need the exact parser's judgement
    expect(mayHoldInexactNumber('{"big":1e21}')).toBe(true);
    expect(mayHoldInexactNumber('[0.300000000000000040]')).toBe(true);
  });

  it('throws a SyntaxError for malformed text on either path', () => {
    expect(() => parseJson('{"a": 1')).toThrow(SyntaxError);
    expect(() => parseJson('{"a": 12345678901234567')).toThrow(SyntaxError);
  });

  it('writes exactly what stringifyJsonExact writes, with or without exact numbers and indentation', () => {
    fc.assert(
      fc.property(fc.oneof(documentWithNumberTokens, numberToken), fc.constantFrom(undefined, 0, 2), (text, indent) => {
        const value = parseJsonExact(text);
        expect(stringifyJson(value, indent)).toBe(stringifyJsonExact(value, indent));
      }),
      { numRuns: 1000 },
    );
  });

  it('writes plain values as JSON.stringify does and bigints verbatim', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(stringifyJson(v)).toBe(JSON.stringify(v));
      }),
      { numRuns: 300 },
    );
    expect(stringifyJson({ n: 2n ** 64n, m: [new JsonNumber('1e400')] })).toBe('{"n":18446744073709551616,"m":[1e400]}');
  });

  it('round-trips a document with big numbers through stringifyJson and parseJson unchanged', () => {
    const text = '{"big":9007199254740993,"neg":-9007199254740997,"d":0.1000000000000000055511151231257827,"small":[1,2.5]}';
    expect(stringifyJson(parseJson(text))).toBe(text);
  });

  it('refuses a cycle and a top-level undefined with a TypeError', () => {
    const a: Record<string, unknown> = {};
    a.self = a;
    expect(() => stringifyJson(a)).toThrow(TypeError);
    expect(() => stringifyJson(undefined)).toThrow(TypeError);
  });
});
