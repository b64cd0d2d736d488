import { describe, it } from 'vitest';
import type { JsonObject } from '../model';
import { only, valid, type Doc } from './fixtures/builders';

/** start → w0 … w(n-1) (Tool echo) → done, and a shortcut start → cheap (one Tool) → done2 when asked. */
function chain(n: number, shortcut = false): Doc {
  const nodes: JsonObject[] = [{ key: 'start', kind: 'Start' }];
  const edges: JsonObject[] = [];
  let prev = 'start';
  for (let i = 0; i < n; i++) {
    nodes.push({ key: `w${i}`, kind: 'Tool', config: { toolName: 'echo' } });
    edges.push({ key: `e${i}`, from: prev, to: `w${i}` });
    prev = `w${i}`;
  }
  nodes.push({ key: 'done', kind: 'End', config: { outcome: 'ok' } });
  edges.push({ key: 'eEnd', from: prev, to: 'done' });
  if (shortcut) {
    nodes.push({ key: 'cheap', kind: 'Tool', config: { toolName: 'echo' } }, { key: 'done2', kind: 'End', config: { outcome: 'ok' } });
    edges.push({ key: 'sc1', from: 'start', to: 'cheap' }, { key: 'sc2', from: 'cheap', to: 'done2' });
  }
  return { nodes, edges };
}

describe('a graph its own budget can never let finish', () => {
  it('refuses budget.maxAttempts below the work nodes on the only way from Start to an End', () => {
    only({ ...chain(5), budget: { maxAttempts: 4 } }, null, /budget\.maxAttempts \(4\) is below the 5 attempts .* no run of this graph could complete/);
  });

  it('accepts a budget that covers the way exactly', () => {
    valid({ ...chain(5), budget: { maxAttempts: 5 } });
  });

  it('judges the cheapest way: a short path to another End is enough', () => {
    valid({ ...chain(5, true), budget: { maxAttempts: 1 } });
  });

  it('accepts a 148-node chain without a graph budget at the default node cap', () => {
    valid(chain(146));
  });
});
