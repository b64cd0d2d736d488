import { describe, expect, it } from 'vitest';
import { around, baseline, errorsOf, node, only, valid } from '../parse/fixtures/builders';
import { checkSchema, validateJson } from './ajv';
import { findUnsupportedPattern, patternError } from './linear-regexp';

/**
 * Milliseconds `f` takes, the fastest of three calls (a liveness bound, not a speed claim:
 * the backtracking engine takes minutes on every call; the best of three keeps a busy
 * machine's scheduling out of it).
 */
function elapsedMs(f: () => void): number {
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    f();
    best = Math.min(best, performance.now() - t);
  }
  return best;
}

const EXPONENTIAL = '^(a+)+$';

describe('user patterns run in linear time', () => {
  it.each([30, 3000])('validates an exponential pattern against %i characters in at most 10 ms', (n) => {
    const schema = { type: 'object', properties: { name: { type: 'string', pattern: EXPONENTIAL } } };
    expect(checkSchema(schema)).toBeNull(); // compiled once, outside the measured calls
    const evil = { name: `${'a'.repeat(n)}!` };
    let r: ReturnType<typeof validateJson> = { valid: true };
    expect(elapsedMs(() => (r = validateJson(schema, evil)))).toBeLessThanOrEqual(10);
    expect(r).toEqual({ valid: false, errors: [`/name must match pattern "${EXPONENTIAL}"`] });
    expect(validateJson(schema, { name: 'a'.repeat(n) })).toEqual({ valid: true });
  });

  it('matches a patternProperties key against an exponential pattern in at most 10 ms', () => {
    const schema = { type: 'object', patternProperties: { [EXPONENTIAL]: { type: 'integer' } } };
    expect(checkSchema(schema)).toBeNull();
    const key = `${'a'.repeat(3000)}`;
    let r: ReturnType<typeof validateJson> = { valid: true };
    expect(elapsedMs(() => (r = validateJson(schema, { [key]: 'not an integer', [`${key}!`]: 'unmatched' })))).toBeLessThanOrEqual(10);
    expect(r.valid).toBe(false);
  });

  it('reads ECMAScript syntax and answers as RegExp does on patterns both engines run', () => {
    const cases: [string, string[]][] = [
      ['^[a-z0-9_-]+$', ['abc_1', 'ABC', '']],
      ['^\\d{3}-\\d{4}$', ['555-1234', '5551234']],
      ['^(?<year>\\d{4})-(?<month>\\d{2})$', ['2024-02', '24-02']],
      ['caf\\u00e9', ['un café', 'cafe']],
      ['^\\S+@\\S+\\.\\w+$', ['a@b.io', 'a @b.io']],
      ['^\\/api\\/v\\d+', ['/api/v1/runs', 'api/v1']],
      ['colou?r', ['the colour', 'the color', 'colr']],
      ['^\\p{Lu}', ['Émile', 'émile']],
    ];
    for (const [pattern, inputs] of cases) {
      const schema = { type: 'string', pattern };
      for (const s of inputs) expect(validateJson(schema, s).valid, `${pattern} on ${JSON.stringify(s)}`).toBe(new RegExp(pattern, 'u').test(s));
    }
  });

  it('keeps each pattern of one schema apart', () => {
    const schema = { type: 'object', properties: { a: { type: 'string', pattern: '^a+$' }, b: { type: 'string', pattern: '^b+$' } } };
    expect(validateJson(schema, { a: 'aa', b: 'bb' })).toEqual({ valid: true });
    expect(validateJson(schema, { a: 'bb', b: 'aa' }).valid).toBe(false);
  });
});

describe('patterns RE2 cannot run', () => {
  it.each([
    ['a backreference', '(a)\\1'],
    ['a named backreference', '(?<n>a)\\k<n>'],
    ['a named backreference inside a class', '(?<n>a)[\\k<n>]'],
    ['a backreference past the seventh group', '(a)(b)(c)(d)(e)(f)(g)(h)\\8'],
    ['a lookahead', 'a(?=b)'],
    ['a negative lookahead', '^(?!x)'],
    ['a lookbehind', '(?<=a)b'],
    ['a repeat count over 1000', 'a{2000}'],
    ['a syntax error', '('],
  ])('are refused: %s', (_what, pattern) => {
    expect(patternError(pattern)).toEqual(expect.any(String));
    expect(checkSchema({ type: 'string', pattern })).toMatch(/^\/pattern is refused: patterns run on RE2/);
  });

  it('tell an escaped backslash followed by k or a digit from a backreference', () => {
    expect(patternError('\\\\k<n>')).toBeNull();
    expect(patternError('^a\\\\8$')).toBeNull();
    expect(patternError('(?<n>a)\\\\\\k<n>')).toMatch(/backreference/);
  });

  it('are found with their JSON Pointer through every subschema keyword', () => {
    const bad = '(a)\\1';
    expect(findUnsupportedPattern({ properties: { name: { pattern: bad } } })).toMatchObject({ pointer: '/properties/name/pattern' });
    expect(findUnsupportedPattern({ patternProperties: { [bad]: {} } })).toMatchObject({ pointer: '/patternProperties/(a)\\1' });
    expect(findUnsupportedPattern({ patternProperties: { '^x': { properties: { 'a/b': { pattern: bad } } } } })).toMatchObject({
      pointer: '/patternProperties/^x/properties/a~1b/pattern',
    });
    expect(findUnsupportedPattern({ items: { pattern: bad } })).toMatchObject({ pointer: '/items/pattern' });
    expect(findUnsupportedPattern({ prefixItems: [{}, { pattern: bad }] })).toMatchObject({ pointer: '/prefixItems/1/pattern' });
    expect(findUnsupportedPattern({ anyOf: [{ allOf: [{ not: { pattern: bad } }] }] })).toMatchObject({ pointer: '/anyOf/0/allOf/0/not/pattern' });
    expect(findUnsupportedPattern({ $defs: { s: { pattern: bad } }, $ref: '#/$defs/s' })).toMatchObject({ pointer: '/$defs/s/pattern' });
    expect(findUnsupportedPattern({ if: {}, then: {}, else: { additionalProperties: { pattern: bad } } })).toMatchObject({
      pointer: '/else/additionalProperties/pattern',
    });
    expect(findUnsupportedPattern({ propertyNames: { pattern: bad } })).toMatchObject({ pointer: '/propertyNames/pattern' });
    expect(checkSchema({ type: 'object', properties: { name: { type: 'string', pattern: bad } } })).toMatch(/^\/properties\/name\/pattern is refused/);
  });

  it('are not looked for in data keywords, where no pattern runs', () => {
    const schema = { const: { pattern: '(a)\\1' }, enum: [{ pattern: '(?=a)' }], default: { pattern: '(a)\\1' }, examples: [{ pattern: '(a)\\1' }] };
    expect(findUnsupportedPattern(schema)).toBeNull();
    expect(checkSchema(schema)).toBeNull();
    // a property that happens to be named "pattern" is a subschema, not a pattern
    expect(checkSchema({ type: 'object', properties: { pattern: { type: 'string', pattern: '^ok$' } } })).toBeNull();
  });

  it('are refused at graph validation, keyed to the node and naming the schema path', () => {
    const bad = { type: 'object', properties: { name: { type: 'string', pattern: '(a)\\1' } } };
    const start = baseline();
    node(start, 'start').config = { inputSchema: bad };
    only(start, 'start', /: config\.inputSchema is not a valid JSON Schema: \/properties\/name\/pattern is refused/);

    const nodeSchema = baseline();
    node(nodeSchema, 'work').outputSchema = { type: 'object', patternProperties: { '^(?!x)': {} } };
    only(nodeSchema, 'work', /: outputSchema is not a valid JSON Schema: \/patternProperties\/\^\(\?!x\) is refused/);

    const response = around({ kind: 'LlmCall', config: { prompt: 'p', responseJsonSchema: { type: 'object', items: bad } } });
    only(response, 'work', /: config\.responseJsonSchema is not a valid JSON Schema: \/items\/properties\/name\/pattern is refused/);

    const graphLevel = { ...baseline(), inputSchema: bad };
    only(graphLevel, null, /^graph inputSchema is not a valid JSON Schema: \/properties\/name\/pattern is refused/);

    const fine = { ...baseline(), inputSchema: { type: 'object', properties: { name: { type: 'string', pattern: EXPONENTIAL } } } };
    valid(fine);
    expect(errorsOf(fine)).toEqual([]);
  });
});
