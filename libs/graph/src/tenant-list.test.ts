import { describe, expect, it } from 'vitest';
import { parseTenantList } from './tenant-list';

const rules = {
  valueName: 'n',
  outOfRange: (tenant: string, n: number) => (n > 9 ? `n of '${tenant}' is over 9` : null),
  fail: (message: string) => new RangeError(message),
};

describe('parseTenantList', () => {
  it('reads trimmed tenant=integer entries and skips empty ones', () => {
    expect(parseTenantList(' a = 1 ,, b=0 ,', rules)).toEqual({ a: 1, b: 0 });
    expect(parseTenantList('', rules)).toEqual({});
  });

  it('throws the rules’ error for a malformed entry, a value out of range and a tenant listed twice', () => {
    expect(() => parseTenantList('a=x', rules)).toThrow(new RangeError("'a=x' is not tenant=n"));
    expect(() => parseTenantList('a=10', rules)).toThrow(new RangeError("n of 'a' is over 9"));
    expect(() => parseTenantList('a=1,a=2', rules)).toThrow(new RangeError("tenant 'a' is listed twice"));
  });

  it('takes a tenant named like an Object member as any other name', () => {
    expect(parseTenantList('constructor=2,toString=3', rules)).toEqual({ constructor: 2, toString: 3 });
  });
});
