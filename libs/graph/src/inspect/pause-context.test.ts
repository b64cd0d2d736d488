import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pauseContextEdges, starvedSuccessors, type ContextGraph } from './pause-context';

type N = { key: string; kind: string; joinPolicy?: unknown };
const g = (nodes: N[], edges: Array<[string, string]>): ContextGraph => ({ nodes, edges: edges.map(([from, to]) => ({ from, to })) });
const n = (key: string, kind: string, joinPolicy?: unknown): N => (joinPolicy === undefined ? { key, kind } : { key, kind, joinPolicy });

describe('pauseContextEdges', () => {
  it('wires the content around a Pause when the author connects out of it', () => {
    const graph = g([n('s', 'Start'), n('x', 'Tool'), n('p', 'Pause'), n('y', 'Agent')], [['s', 'x'], ['x', 'p'], ['p', 'y']]);
    expect(pauseContextEdges(graph, { from: 'p', to: 'y' })).toEqual([{ from: 'x', to: 'y' }]);
  });

  it('treats a ChatInput like a Pause, and the Start as content', () => {
    const graph = g([n('s', 'Start'), n('c', 'ChatInput'), n('y', 'End')], [['s', 'c'], ['c', 'y']]);
    expect(pauseContextEdges(graph, { from: 'c', to: 'y' })).toEqual([{ from: 's', to: 'y' }]);
  });

  it('walks consecutive pauses both ways when wiring into one: A → P1 → P2 → B wired last at A → P1', () => {
    const graph = g([n('a', 'Tool'), n('p1', 'Pause'), n('p2', 'Pause'), n('b', 'End')], [['p1', 'p2'], ['p2', 'b'], ['a', 'p1']]);
    expect(pauseContextEdges(graph, { from: 'a', to: 'p1' })).toEqual([
      { from: 'a', to: 'p2' },
      { from: 'a', to: 'b' },
    ]);
  });

  it('adds nothing for a successor another node already feeds', () => {
    const graph = g([n('x', 'Tool'), n('p', 'Pause'), n('z', 'Tool'), n('y', 'End')], [['x', 'p'], ['p', 'y'], ['z', 'y']]);
    expect(pauseContextEdges(graph, { from: 'p', to: 'y' })).toEqual([]);
  });

  it('never feeds a successor that does not join All: an Any one would be admitted though every approval was rejected', () => {
    for (const policy of ['Any', 'First', { quorum: 1 }]) {
      const graph = g([n('x', 'Tool'), n('p', 'Pause'), n('y', 'End', policy)], [['x', 'p'], ['p', 'y']]);
      expect(pauseContextEdges(graph, { from: 'p', to: 'y' })).toEqual([]);
    }
    const all = g([n('x', 'Tool'), n('p', 'Pause'), n('y', 'End', 'All')], [['x', 'p'], ['p', 'y']]);
    expect(pauseContextEdges(all, { from: 'p', to: 'y' })).toEqual([{ from: 'x', to: 'y' }]);
  });

  it('never wires from a Condition, nor when the nearest non-wait ancestor is not unique', () => {
    const fromCondition = g([n('c', 'Condition'), n('p', 'Pause'), n('y', 'End')], [['c', 'p'], ['p', 'y']]);
    expect(pauseContextEdges(fromCondition, { from: 'p', to: 'y' })).toEqual([]);
    const twoBranches = g([n('a', 'Tool'), n('b', 'Tool'), n('p', 'Pause'), n('y', 'End')], [['a', 'p'], ['b', 'p'], ['p', 'y']]);
    expect(pauseContextEdges(twoBranches, { from: 'p', to: 'y' })).toEqual([]);
    // A → P1 → P2 → B plus X → P2: B's ancestors through P2 are {A, X}
    const joined = g([n('a', 'Tool'), n('x', 'Tool'), n('p1', 'Pause'), n('p2', 'Pause'), n('b', 'End')], [['a', 'p1'], ['p1', 'p2'], ['x', 'p2'], ['p2', 'b']]);
    expect(pauseContextEdges(joined, { from: 'p2', to: 'b' })).toEqual([]);
  });

  it('adds nothing for a gesture that touches no wait, and survives a wait in a self-loop', () => {
    const plain = g([n('x', 'Tool'), n('y', 'End')], [['x', 'y']]);
    expect(pauseContextEdges(plain, { from: 'x', to: 'y' })).toEqual([]);
    const loop = g([n('x', 'Tool'), n('p', 'Pause'), n('y', 'End')], [['x', 'p'], ['p', 'p'], ['p', 'y']]);
    expect(pauseContextEdges(loop, { from: 'p', to: 'y' })).toEqual([{ from: 'x', to: 'y' }]);
  });
});

/** Random graphs of a few nodes of the kinds that matter, and a gesture that is one of their edges. */
const KINDS = ['Start', 'Tool', 'Pause', 'ChatInput', 'Condition', 'End'];
const POLICIES = [undefined, 'All', 'Any', 'First'];
const arbGraph = fc
  .tuple(fc.array(fc.tuple(fc.constantFrom(...KINDS), fc.constantFrom(...POLICIES)), { minLength: 2, maxLength: 7 }), fc.array(fc.tuple(fc.nat(), fc.nat()), { minLength: 1, maxLength: 14 }))
  .map(([kinds, pairs]) => {
    const nodes = kinds.map(([kind, policy], i) => n(`n${i}`, kind, policy));
    const edges: Array<[string, string]> = pairs.map(([a, b]) => [`n${a % nodes.length}`, `n${b % nodes.length}`]);
    return { graph: g(nodes, edges), gestures: edges };
  });

describe('pauseContextEdges (properties)', () => {
  it('adds only unconditional edges from a unique non-wait, non-Condition node into a starved All successor, each once and never over a wired pair', () => {
    fc.assert(
      fc.property(arbGraph, fc.nat(), ({ graph, gestures }, i) => {
        const [from, to] = gestures[i % gestures.length]!;
        const added = pauseContextEdges(graph, { from, to });
        const kind = new Map(graph.nodes.map((x) => [x.key, x] as const));
        const starved = starvedSuccessors(graph);
        const wired = new Set(graph.edges.map((e) => `${e.from}>${e.to}`));
        expect(new Set(added.map((e) => `${e.from}>${e.to}`)).size).toBe(added.length);
        for (const e of added) {
          expect(['Pause', 'ChatInput', 'Condition']).not.toContain(kind.get(e.from)!.kind);
          expect([undefined, 'All']).toContain(kind.get(e.to)!.joinPolicy);
          expect(wired.has(`${e.from}>${e.to}`)).toBe(false);
          expect(e.from).not.toBe(e.to);
          // the validator names the same edge in its warning
          expect(starved.get(e.to)?.ancestor).toBe(e.from);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('is settled once applied: the same gesture on the graph with the added edges adds nothing more', () => {
    fc.assert(
      fc.property(arbGraph, fc.nat(), ({ graph, gestures }, i) => {
        const [from, to] = gestures[i % gestures.length]!;
        const added = pauseContextEdges(graph, { from, to });
        const after: ContextGraph = { nodes: graph.nodes, edges: [...graph.edges, ...added] };
        const again = pauseContextEdges(after, { from, to });
        // an added content edge feeds its successor, which is no longer starved
        for (const e of added) expect(starvedSuccessors(after).has(e.to)).toBe(false);
        expect(again.filter((e) => added.some((a) => a.to === e.to))).toEqual([]);
      }),
      { numRuns: 3000 },
    );
  });
});
