/** The graph's `concurrency` block (an addition to CONTRACT §1, issue #16): parsed, closed, bounded. */
import { describe, expect, it } from 'vitest';
import { baseline, errorsOf, only, parse, warningsOf } from './fixtures/builders';

describe('graph concurrency', () => {
  it('is carried on the parsed graph as given, and absent when the document has none', () => {
    const d = { ...baseline(), concurrency: { key: 'input.customerId', limit: 2 } };
    const r = parse(d);
    expect(r.ok && r.graph.concurrency).toEqual({ key: 'input.customerId', limit: 2 });
    expect(warningsOf(d)).toEqual([]);
    const plain = parse(baseline());
    expect(plain.ok && 'concurrency' in plain.graph).toBe(false);
    // null reads as absent, like the other optional graph members
    const nulled = parse({ ...baseline(), concurrency: null });
    expect(nulled.ok && 'concurrency' in nulled.graph).toBe(false);
  });

  it.each([
    [{ key: 'input.a' }, /concurrency.limit must be an integer 1–10000/],
    [{ key: 'input.a', limit: 0 }, /concurrency.limit must be an integer 1–10000, not 0/],
    [{ key: 'input.a', limit: 2.5 }, /concurrency.limit must be an integer/],
    [{ key: 'input.a', limit: 10_001 }, /concurrency.limit must be an integer/],
    [{ limit: 2 }, /concurrency.key must be a dot path/],
    [{ key: 'input.a[0]', limit: 2 }, /concurrency.key must be a dot path/],
    [{ key: 'input..a', limit: 2 }, /concurrency.key must be a dot path/],
    [{ key: 'input.a', limit: 2, scope: 'tenant' }, /'concurrency' has an unknown member 'scope'/],
    ['input.a', /'concurrency' must be an object, not a string/],
  ])('refuses %j', (concurrency, re) => {
    only({ ...baseline(), concurrency }, null, re);
  });

  it('reports every problem of the block at once', () => {
    expect(errorsOf({ ...baseline(), concurrency: { key: 3, limit: -1 } })).toHaveLength(2);
  });
});
