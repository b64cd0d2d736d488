import { describe, expect, it } from 'vitest';
import { parseJsonExact } from '../conditions';
import { canonicalJson } from './canonical-json';
import { checkSchema, validateJson } from './ajv';

describe('checkSchema', () => {
  it('accepts a valid object schema', () => {
    expect(checkSchema({ type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] })).toBeNull();
  });

  it('reports an unknown type name', () => {
    expect(checkSchema({ type: 'strng' })).toMatch(/schema is invalid/);
  });

  it('reports an unresolvable $ref and a broken pattern', () => {
    expect(checkSchema({ $ref: '#/definitions/nope' })).toMatch(/resolve reference/);
    expect(checkSchema({ type: 'string', pattern: '(' })).toMatch(/^\/pattern is refused: .*missing closing \)/);
  });

  it('refuses non-schema values', () => {
    expect(checkSchema(42)).toMatch(/must be an object or a boolean/);
    expect(checkSchema(null)).toMatch(/must be an object or a boolean/);
    expect(checkSchema([])).toMatch(/must be an object or a boolean/);
  });

  it('accepts draft-07 documents and unknown keywords (strict mode off)', () => {
    expect(checkSchema({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', 'x-ui': 1 })).toBeNull();
  });

  it('accepts two different schemas declaring the same $id', () => {
    expect(checkSchema({ $id: 'https://example.com/s', type: 'string' })).toBeNull();
    expect(checkSchema({ $id: 'https://example.com/s', type: 'number' })).toBeNull();
    expect(validateJson({ $id: 'https://example.com/s', type: 'number' }, 1)).toEqual({ valid: true });
    expect(validateJson({ $id: 'https://example.com/s', type: 'string' }, 1).valid).toBe(false);
  });
});

describe('validateJson', () => {
  const schema = { type: 'object', properties: { a: { type: 'integer' }, d: { type: 'string', format: 'date' } }, required: ['a'] };

  it('validates a conforming value', () => {
    expect(validateJson(schema, { a: 1, d: '2024-02-29' })).toEqual({ valid: true });
  });

  it('lists every violation with its instance path', () => {
    const r = validateJson(schema, { d: 'not a date' });
    expect(r.valid).toBe(false);
    if (!r.valid) {
      expect(r.errors).toContain("(root) must have required property 'a'");
      expect(r.errors).toContain('/d must match format "date"');
    }
  });

  it('answers the same for a member-reordered copy of a schema (cache by canonical JSON)', () => {
    const reordered = { required: ['a'], properties: { d: { format: 'date', type: 'string' }, a: { type: 'integer' } }, type: 'object' };
    expect(validateJson(reordered, { a: 'x' }).valid).toBe(false);
    expect(validateJson(reordered, { a: 2 })).toEqual({ valid: true });
  });

  it('reports an invalid schema as an error instead of throwing', () => {
    expect(validateJson({ type: 7 }, 1)).toMatchObject({ valid: false });
  });
});

describe('canonicalJson', () => {
  it('sorts members recursively', () => {
    expect(canonicalJson({ b: [1, { z: 1, a: null }], a: 'x' })).toBe('{"a":"x","b":[1,{"a":null,"z":1}]}');
  });

  it('handles nesting far beyond the call stack depth', () => {
    let v: unknown = 1;
    for (let i = 0; i < 200_000; i++) v = [v];
    expect(canonicalJson(v).length).toBe(400_001);
  });
});

describe('exact numbers of the lossless parser', () => {
  it('compile in schemas and validate in values as numbers', () => {
    const schema = parseJsonExact('{"type":"object","properties":{"id":{"type":"integer","maximum":1e400}}}');
    expect(checkSchema(schema)).toBeNull();
    const value = parseJsonExact('{"id":9007199254740993}');
    expect(validateJson(schema, value)).toEqual({ valid: true });
    expect(validateJson({ type: 'object', properties: { id: { type: 'string' } } }, value).valid).toBe(false);
  });

  it('write their token text into canonical JSON', () => {
    expect(canonicalJson(parseJsonExact('{"b":9007199254740993,"a":1}'))).toBe('{"a":1,"b":9007199254740993}');
    expect(canonicalJson({ n: 10n })).toBe('{"n":10}');
  });
});
