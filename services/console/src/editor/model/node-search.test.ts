import { describe, expect, it } from 'vitest';
import { matchNodes } from './node-search';

const nodes = [
  { key: 'start', label: 'start', kind: 'Start' },
  { key: 'fetch-orders', label: 'Fetch the orders', kind: 'Tool' },
  { key: 'review', label: 'Order review', kind: 'Pause' },
  { key: 'orders', label: 'orders', kind: 'Map' },
  { key: 'end', label: 'Done', kind: 'End' },
];
const keys = (q: string, limit?: number) => matchNodes(nodes, q, limit).map((n) => n.key);

describe('finding a node', () => {
  it('puts the exact key first, then keys and labels starting with the query, then those holding it', () => {
    expect(keys('orders')).toEqual(['orders', 'fetch-orders']);
    expect(keys('ORDER')).toEqual(['orders', 'review', 'fetch-orders']);
    expect(keys('done')).toEqual(['end']);
  });

  it('matches every node for an empty query, and nothing for a query no node holds', () => {
    expect(keys('  ')).toEqual(nodes.map((n) => n.key));
    expect(keys('zzz')).toEqual([]);
  });

  it('answers at most the limit', () => {
    expect(keys('', 2)).toEqual(['start', 'fetch-orders']);
    const many = Array.from({ length: 150 }, (_, i) => ({ key: `n${i}`, label: `node ${i}`, kind: 'Tool' }));
    expect(matchNodes(many, 'n1')).toHaveLength(20);
    expect(matchNodes(many, 'n149')[0]!.key).toBe('n149');
  });
});
