import { describe, expect, it } from 'vitest';
import { createErrorHandler, type RJSFSchema } from '@rjsf/utils';
import { formValidator, inputProblems, schemaErrors } from './schema-validator';

const order: RJSFSchema = {
  type: 'object',
  required: ['customer', 'items'],
  properties: {
    customer: { type: 'string', minLength: 2 },
    items: { type: 'array', items: { type: 'object', required: ['sku'], properties: { sku: { type: 'string' }, qty: { type: 'integer', minimum: 1 } } } },
    'ship to': { type: 'string' },
  },
};

describe('the run input validator', () => {
  it('places each error on its field: a missing required member on that member, an item by index', () => {
    const errs = schemaErrors(order, { customer: 'x', items: [{ sku: 'a', qty: 0 }, {}], 'ship to': 3 });
    expect(errs.map((e) => `${e.name} ${e.property}`).sort()).toEqual(['minLength .customer', 'minimum .items[0].qty', "required .items[1].sku", "type ['ship to']"].sort());
  });

  it('names every missing required member', () => {
    expect(schemaErrors(order, {}).map((e) => e.property)).toEqual(['.customer', '.items']);
    expect(schemaErrors(order, undefined).map((e) => e.property)).toEqual(['.customer', '.items']);
  });

  it('finds no error in a valid input', () => {
    expect(schemaErrors(order, { customer: 'acme', items: [{ sku: 'a', qty: 2 }] })).toEqual([]);
    expect(schemaErrors(null, { anything: 1 })).toEqual([]);
  });

  it('applies both schemas of allOf, with each required list read where it stands', () => {
    const both = { allOf: [{ type: 'object', required: ['a'] }, { type: 'object', required: ['b'], properties: { b: { type: 'number' } } }] };
    expect(schemaErrors(both, { b: 'x' }).map((e) => `${e.name} ${e.property}`)).toEqual(['required .a', 'type .b']);
  });

  it('resolves references to the root schema', () => {
    const root: RJSFSchema = { $defs: { qty: { type: 'integer' } }, type: 'object', properties: { n: { $ref: '#/$defs/qty' } } };
    expect(formValidator.isValid({ $ref: '#/$defs/qty' }, 2, root)).toBe(true);
    expect(formValidator.isValid({ $ref: '#/$defs/qty' }, 'two', root)).toBe(false);
  });

  it('says so when a schema cannot be used', () => {
    expect(schemaErrors({ $ref: '#/nowhere' }, {})[0]?.message).toMatch(/cannot be used/);
  });

  it('gives the form an error schema per field, merged with its own checks', () => {
    const d = formValidator.validateFormData({ customer: 'x', items: [] }, order, (data, errors) => {
      errors.items?.addError('at least one item');
      return errors;
    });
    expect(d.errorSchema.customer?.__errors).toHaveLength(1);
    expect(d.errorSchema.items?.__errors).toEqual(['at least one item']);
    expect(createErrorHandler).toBeTypeOf('function');
  });

  it('lists each schema’s problems as lines for the raw JSON input', () => {
    expect(inputProblems({ customer: 'x', items: [] }, [['inputSchema', order], ['start.config.inputSchema', { type: 'object', required: ['note'] }]])).toEqual([
      'inputSchema: .customer: String is too short (1 < 2).',
      'start.config.inputSchema: .note is required',
    ]);
  });
});
