import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Graph } from '../model';
import { edge, graphOf, node } from '../planner/test-kit';
import { diffGraphs } from './graph-diff';

const v6 = graphOf(
  [node('s', 'Start'), node('t', 'Tool', { config: { toolName: 'echo', arguments: { a: 1 } } }), node('p', 'Pause', { config: { prompt: 'ok?', allowedDecisions: ['Approve'] } }), node('done', 'End')],
  [edge('e1', 's', 't'), edge('e2', 't', 'p'), edge('e3', 'p', 'done')],
);

describe('diffGraphs', () => {
  it('names nodes and edges added, removed and changed member by member, and the schema changes', () => {
    const v7: Graph = {
      ...graphOf(
        [
          node('s', 'Start'),
          node('t', 'Tool', { maxAttempts: 5, config: { toolName: 'echo', arguments: { a: 2 } } }),
          node('p', 'Pause', { config: { prompt: 'ok?', allowedDecisions: ['Approve'] } }),
          node('after', 'Tool', { config: { toolName: 'echo' } }),
          node('done', 'End'),
        ],
        [edge('e1', 's', 't'), edge('e2', 't', 'p', { label: 'go' }), edge('e4', 'p', 'after'), edge('e5', 'after', 'done')],
      ),
      inputSchema: { type: 'object' },
      state: { schema: { type: 'object' }, reducers: { n: 'sum' }, initial: {} },
    };
    const d = diffGraphs(v6, v7);
    expect(d.identical).toBe(false);
    expect(d.nodes).toEqual({
      added: [{ key: 'after', kind: 'Tool' }],
      removed: [],
      changed: [{ key: 't', kind: 'Tool', changes: [{ member: 'maxAttempts', from: 3, to: 5 }, { member: 'config.arguments', from: { a: 1 }, to: { a: 2 } }] }],
    });
    expect(d.edges).toEqual({
      added: [{ key: 'e4', from: 'p', to: 'after' }, { key: 'e5', from: 'after', to: 'done' }],
      removed: [{ key: 'e3', from: 'p', to: 'done' }],
      changed: [{ key: 'e2', changes: [{ member: 'label', from: null, to: 'go' }] }],
    });
    expect(d.inputSchema).toEqual({ changed: true, from: null, to: { type: 'object' } });
    expect(d.stateSchema).toEqual({ changed: true, from: null, to: { type: 'object' } });
    expect(d.graph).toEqual([{ member: 'state.reducers', from: null, to: { n: 'sum' } }, { member: 'state.initial', from: null, to: {} }]);
  });

  it('says a config member added or removed, and a kind change, by member', () => {
    const b = graphOf([node('s', 'Start'), node('t', 'LlmCall', { config: { prompt: 'hi' } }), node('p', 'Pause', { config: { prompt: 'ok?', allowedDecisions: ['Approve'] } }), node('done', 'End')], v6.edges);
    const changed = diffGraphs(v6, b).nodes.changed;
    expect(changed).toEqual([
      {
        key: 't',
        kind: 'LlmCall',
        changes: [
          { member: 'kind', from: 'Tool', to: 'LlmCall' },
          { member: 'config.toolName', from: 'echo', to: null },
          { member: 'config.arguments', from: { a: 1 }, to: null },
          { member: 'config.prompt', from: null, to: 'hi' },
        ],
      },
    ]);
  });

  it('finds nothing between a graph and a copy of it, and swaps added and removed when reversed', () => {
    fc.assert(
      fc.property(fc.subarray(['a', 'b', 'c', 'd']), fc.subarray(['a', 'b', 'c', 'd']), (xs, ys) => {
        const build = (keys: string[]) => graphOf([node('s', 'Start'), ...keys.map((k) => node(k, 'Tool', { config: { toolName: 'echo' } })), node('done', 'End')], keys.map((k) => edge(`e${k}`, 's', k)));
        const a = build(xs);
        const b = build(ys);
        expect(diffGraphs(a, structuredClone(a)).identical).toBe(true);
        const ab = diffGraphs(a, b);
        const ba = diffGraphs(b, a);
        expect(ab.nodes.added).toEqual(ba.nodes.removed);
        expect(ab.edges.removed).toEqual(ba.edges.added);
        expect(ab.identical).toBe(xs.join() === ys.join());
      }),
    );
  });
});
