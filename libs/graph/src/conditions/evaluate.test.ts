import { describe, expect, it } from 'vitest';
import type { ConditionOp, EdgeCondition, Json, OutputEnvelope, Scalar } from '../model';
import { CONDITION_OPS } from '../model';
import { compareExactNumbers } from './compare';
import { evaluateCondition } from './evaluate';
import { JsonNumber, parseJsonExact } from './exact-json';

const envelope = (output: unknown, extra: Partial<OutputEnvelope> = {}): OutputEnvelope => ({
  status: 'succeeded',
  attempt: 1,
  branch: null,
  output: output as Json,
  ...extra,
});

/** Evaluates `x <op> value` where x is the envelope's output.json.x. */
const test = (x: unknown, op: ConditionOp, value: unknown): boolean =>
  evaluateCondition({ path: 'output.json.x', op, value: value as Scalar }, envelope({ json: { x } }));

const verdicts = (x: unknown, value: unknown): Record<ConditionOp, boolean> =>
  Object.fromEntries(CONDITION_OPS.map((op) => [op, test(x, op, value)])) as Record<ConditionOp, boolean>;

const ORDER = {
  less: { Eq: false, Ne: true, Gt: false, Gte: false, Lt: true, Lte: true, Exists: true, NotExists: false },
  equal: { Eq: true, Ne: false, Gt: false, Gte: true, Lt: false, Lte: true, Exists: true, NotExists: false },
  greater: { Eq: false, Ne: true, Gt: true, Gte: true, Lt: false, Lte: false, Exists: true, NotExists: false },
};
const MISMATCH = { Eq: false, Ne: false, Gt: false, Gte: false, Lt: false, Lte: false, Exists: true, NotExists: false };
const MISSING = { Eq: false, Ne: false, Gt: false, Gte: false, Lt: false, Lte: false, Exists: false, NotExists: true };

describe('evaluateCondition: operators by type', () => {
  it.each([
    ['numbers', 1, 2, 2, 3],
    ['negative decimals', -2.5, -1.25, -1.25, 0],
    ['strings', 'apple', 'banana', 'banana', 'cherry'],
    ['exact integers', new JsonNumber('9007199254740992'), 9007199254740993n, 9007199254740993n, new JsonNumber('9007199254740994')],
  ])('orders %s with every operator', (_name, lo, mid1, mid2, hi) => {
    expect(verdicts(lo, mid1)).toEqual(ORDER.less);
    expect(verdicts(mid2, mid1)).toEqual(ORDER.equal);
    expect(verdicts(hi, mid1)).toEqual(ORDER.greater);
  });

  it('compares booleans only with Eq and Ne', () => {
    expect(verdicts(true, true)).toEqual({ ...MISMATCH, Eq: true });
    expect(verdicts(true, false)).toEqual({ ...MISMATCH, Ne: true });
  });

  it('compares null only with Eq and Ne, and a present null Exists', () => {
    expect(verdicts(null, null)).toEqual({ ...MISMATCH, Eq: true });
  });

  it.each([
    ['a string and a number', '1', 1],
    ['a number and a string', 1, '1'],
    ['a boolean and a number', true, 1],
    ['null and false', null, false],
    ['null and zero', null, 0],
    ['a string and null', 'null', null],
    ['an object and a string', { a: 1 }, '[object Object]'],
    ['an array and a number', [1], 1],
    ['NaN and NaN', Number.NaN, Number.NaN],
    ['Infinity and a number', Number.POSITIVE_INFINITY, 1],
  ])('treats %s as a type mismatch: false for every comparison, Ne included', (_name, x, value) => {
    expect(verdicts(x, value)).toEqual(MISMATCH);
  });

  it('answers a missing path false for every op except NotExists', () => {
    expect(verdicts(undefined, 1)).not.toEqual(MISSING); // an own member holding undefined is present
    expect(
      Object.fromEntries(
        CONDITION_OPS.map((op) => [op, evaluateCondition({ path: 'output.json.x', op, value: 1 }, envelope({ json: {} }))]),
      ),
    ).toEqual(MISSING);
    const e = envelope({ json: {} });
    for (const op of CONDITION_OPS) {
      for (const value of [1, 'x', true, null] as Scalar[]) {
        expect(evaluateCondition({ path: 'output.json.x', op, value }, e)).toBe(op === 'NotExists');
      }
    }
  });

  it('treats a path through a scalar or null as missing', () => {
    expect(verdicts(undefined, 1)).toEqual(MISMATCH); // an own property holding undefined exists
    const e = envelope({ json: { x: 5, n: null } });
    expect(evaluateCondition({ path: 'output.json.x.y', op: 'NotExists', value: null }, e)).toBe(true);
    expect(evaluateCondition({ path: 'output.json.n.y', op: 'Exists', value: null }, e)).toBe(false);
  });
});

describe('evaluateCondition: paths', () => {
  it('reads status, branch and attempt from the envelope root', () => {
    const e = envelope({}, { status: 'failed', branch: 'yes', attempt: 2 });
    expect(evaluateCondition({ path: 'status', op: 'Eq', value: 'failed' }, e)).toBe(true);
    expect(evaluateCondition({ path: 'branch', op: 'Eq', value: 'yes' }, e)).toBe(true);
    expect(evaluateCondition({ path: 'attempt', op: 'Gte', value: 2 }, e)).toBe(true);
    expect(evaluateCondition({ path: 'branch', op: 'Eq', value: null }, envelope({}))).toBe(true);
  });

  it('does not index arrays', () => {
    const e = envelope({ items: [{ id: 1 }], 0: 'zero' });
    expect(evaluateCondition({ path: 'output.items.0.id', op: 'Exists', value: null }, e)).toBe(false);
    expect(evaluateCondition({ path: 'output.items.length', op: 'Eq', value: 1 }, e)).toBe(false);
    expect(evaluateCondition({ path: 'output.0', op: 'Eq', value: 'zero' }, e)).toBe(true);
  });

  it('never finds inherited members or walks into class instances', () => {
    const e = envelope({ n: new JsonNumber('1'), d: new Date(0) });
    for (const path of ['output.toString', 'output.constructor', 'output.__proto__', 'output.n.text', 'output.d.getTime']) {
      expect(evaluateCondition({ path, op: 'Exists', value: null }, e)).toBe(false);
    }
  });

  it('finds an own "__proto__" member as parsed from JSON', () => {
    const e = parseJsonExact('{"status":"succeeded","attempt":1,"branch":null,"output":{"__proto__":{"x":7}}}');
    expect(evaluateCondition({ path: 'output.__proto__.x', op: 'Eq', value: 7 }, e as OutputEnvelope)).toBe(true);
  });

  it('never fires on an invalid path, NotExists included', () => {
    const e = envelope({ a: { b: 1 } });
    for (const path of ['', 'output..a', '.output', 'output.', 'output.*', 'output.a[0]', 'output.a.*.b']) {
      for (const op of CONDITION_OPS) expect(evaluateCondition({ path, op, value: 1 }, e)).toBe(false);
    }
  });

  it('never fires on an unknown operator', () => {
    const c = { path: 'output.a', op: 'Contains', value: 1 } as unknown as EdgeCondition;
    expect(evaluateCondition(c, envelope({ a: 1 }))).toBe(false);
  });
});

describe('evaluateCondition: strings compare ordinally by UTF-16 code unit', () => {
  it('puts upper case before lower case ("Z" < "a"), unlike localeCompare', () => {
    expect(test('Z', 'Lt', 'a')).toBe(true);
    expect(test('B', 'Lt', 'a')).toBe(true);
    expect('B'.localeCompare('a')).toBe(1); // what a locale comparison would say
  });

  it('orders a surrogate pair by its code units, below U+FFFF', () => {
    const emoji = '\u{1F600}'; // U+D83D U+DE00
    expect(test(emoji, 'Lt', '\uFFFF')).toBe(true);
    expect(test(emoji, 'Gt', '\uD7FF')).toBe(true);
  });

  it('orders a prefix before its extensions and compares case-sensitively', () => {
    expect(test('abc', 'Lt', 'abcd')).toBe(true);
    expect(test('a', 'Eq', 'A')).toBe(false);
    expect(test('', 'Lt', ' ')).toBe(true);
  });
});

describe('evaluateCondition: exact numbers', () => {
  it('orders 9007199254740993 above 9007199254740992 with both sides from parseJsonExact', () => {
    const x = parseJsonExact('9007199254740993');
    const v = parseJsonExact('9007199254740992');
    expect(x).toBeInstanceOf(JsonNumber);
    expect(v).toBe(9007199254740992);
    expect(verdicts(x, v)).toEqual(ORDER.greater);
    expect(verdicts(x, parseJsonExact('9007199254740993'))).toEqual(ORDER.equal);
  });

  it('orders integers far beyond doubles and bigints exactly', () => {
    const big = '123456789012345678901234567890123456789';
    expect(verdicts(parseJsonExact(big), BigInt(big) - 1n)).toEqual(ORDER.greater);
    expect(verdicts(parseJsonExact(`-${big}`), -BigInt(big))).toEqual(ORDER.equal);
    expect(verdicts(2n ** 53n + 1n, 2 ** 53)).toEqual(ORDER.greater);
  });

  it('equals a decimal written 0.3 in the output and the literal 0.3, while the computed 0.1 + 0.2 is not', () => {
    expect(test(parseJsonExact('0.3'), 'Eq', 0.3)).toBe(true);
    expect(test(parseJsonExact('0.30'), 'Eq', 0.3)).toBe(true);
    expect(test(0.1 + 0.2, 'Eq', 0.3)).toBe(false);
    expect(test(0.1 + 0.2, 'Gt', 0.3)).toBe(true);
  });

  it('orders 0.1000000000000000055511151231257827 (the double nearest 0.1, written out) above 0.1', () => {
    const x = parseJsonExact('0.1000000000000000055511151231257827');
    expect(x).toBeInstanceOf(JsonNumber);
    expect(Number((x as JsonNumber).text)).toBe(0.1); // a double comparison would call them equal
    expect(verdicts(x, 0.1)).toEqual(ORDER.greater);
    expect(verdicts(x, new JsonNumber('0.10000000000000000555111512312578270'))).toEqual(ORDER.equal);
  });

  it('compares long decimals digit by digit in both directions', () => {
    expect(verdicts(new JsonNumber('-0.00000000000000000001'), 0)).toEqual(ORDER.less);
    expect(verdicts(new JsonNumber('1.99999999999999999999'), 2)).toEqual(ORDER.less);
    expect(verdicts(new JsonNumber('12345678901234567890.5'), new JsonNumber('12345678901234567890.49'))).toEqual(
      ORDER.greater,
    );
    expect(verdicts(-0, 0)).toEqual(ORDER.equal);
  });

  it('falls back to doubles for exponent forms', () => {
    expect(verdicts(new JsonNumber('1.00000000000000000001e5'), 100000)).toEqual(ORDER.equal);
    expect(verdicts(new JsonNumber('1e400'), Number.MAX_VALUE)).toEqual(ORDER.greater);
    expect(verdicts(1e21, new JsonNumber('1000000000000000000001'))).toEqual(ORDER.equal); // 1e21 prints "1e+21"
    expect(verdicts(1e-7, new JsonNumber('1.0000000000000000001e-7'))).toEqual(ORDER.equal);
    expect(verdicts(parseJsonExact('1E2'), 100)).toEqual(ORDER.equal); // spells a double: kept as 100
  });

  it('orders exponent forms beyond a double by their written digits and exponent, never spelling them out', () => {
    const n = (t: string) => new JsonNumber(t);
    // both sides overflow a double (Infinity) or underflow it (0): the written forms decide
    expect(verdicts(n('1e131071'), n('1e131072'))).toEqual(ORDER.less);
    expect(verdicts(n('1e131071'), n('10e131070'))).toEqual(ORDER.equal);
    expect(verdicts(n('1.5e131071'), n('15E+131070'))).toEqual(ORDER.equal);
    expect(verdicts(n('-1e131071'), n('-2e131071'))).toEqual(ORDER.greater);
    expect(verdicts(n('-1e131071'), n('1e131071'))).toEqual(ORDER.less);
    expect(verdicts(n('1e-131071'), n('2e-131071'))).toEqual(ORDER.less);
    expect(verdicts(n('1e-131071'), 0)).toEqual(ORDER.greater);
    expect(verdicts(n('-1e-131071'), 0)).toEqual(ORDER.less);
    expect(verdicts(n('0e-131071'), 0)).toEqual(ORDER.equal);
    expect(verdicts(n('1e131071'), Number.MAX_VALUE)).toEqual(ORDER.greater);
  });

  it('returns null from compareExactNumbers for a non-finite number', () => {
    expect(compareExactNumbers(Number.NaN, 1)).toBeNull();
    expect(compareExactNumbers(1, Number.NEGATIVE_INFINITY)).toBeNull();
  });
});
