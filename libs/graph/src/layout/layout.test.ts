import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canonicalEight } from '../parse/fixtures/canonical-eight';
import { LAYOUT_DEFAULTS, layoutGraph, type GraphLayout, type LayoutGraph } from './layout';

const g = (nodes: string[], edges: Array<[string, string]>): LayoutGraph => ({
  nodes: nodes.map((key) => ({ key })),
  edges: edges.map(([from, to]) => ({ from, to })),
});

/** The invariants every layout of an acyclic graph holds. */
function checkInvariants(graph: LayoutGraph, l: GraphLayout): void {
  const keys = new Set(graph.nodes.map((n) => n.key));
  expect(l.placements.map((p) => p.key).sort()).toEqual([...keys].sort());
  const known = graph.edges.filter((e) => keys.has(e.from) && keys.has(e.to) && e.from !== e.to);
  // every edge points to a higher rank
  for (const e of known) expect(l.byKey.get(e.from)!.rank).toBeLessThan(l.byKey.get(e.to)!.rank);
  // rank = longest path from a source
  for (const k of keys) {
    const preds = known.filter((e) => e.to === k).map((e) => l.byKey.get(e.from)!.rank);
    expect(l.byKey.get(k)!.rank).toBe(preds.length === 0 ? 0 : Math.max(...preds) + 1);
  }
  // orders are 0..n-1 within each rank, and no two boxes overlap
  l.ranks.forEach((row, r) => {
    expect(row.length).toBeGreaterThan(0);
    row.forEach((k, i) => expect(l.byKey.get(k)).toMatchObject({ rank: r, order: i }));
  });
  const boxes = new Set(l.placements.map((p) => `${p.x},${p.y}`));
  expect(boxes.size).toBe(l.placements.length);
}

/** Random DAGs: edges only from a lower to a higher index of a shuffled key list. */
const dagArb = fc
  .uniqueArray(fc.stringMatching(/^[a-z0-9_-]{1,4}$/), { minLength: 0, maxLength: 14 })
  .chain((keys) =>
    fc
      .array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 40 })
      .map((pairs) => {
        const edges: Array<[string, string]> = [];
        if (keys.length > 1) {
          for (const [a, b] of pairs) {
            const i = a % keys.length;
            const j = b % keys.length;
            if (i < j) edges.push([keys[i]!, keys[j]!]);
          }
        }
        return g(keys, edges);
      }),
  );

function shuffled<T>(xs: readonly T[], seed: number): T[] {
  const out = [...xs];
  let s = seed || 1;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) % 2147483648;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe('layoutGraph', () => {
  it('lays out an empty graph as nothing, zero by zero', () => {
    const l = layoutGraph(g([], []));
    expect(l).toMatchObject({ placements: [], ranks: [], width: 0, height: 0 });
  });

  it('ranks the canonical eight-node graph by longest path, left to right', () => {
    const doc = canonicalEight() as unknown as LayoutGraph;
    const l = layoutGraph(doc);
    expect(l.ranks).toEqual([['start'], ['analyze'], ['check'], ['lookup', 'review'], ['fanout'], ['merge'], ['done']]);
    // done is fed by merge (rank 5) and review (rank 3): the longer path wins
    expect(l.byKey.get('done')!.rank).toBe(6);
    checkInvariants(doc, l);
  });

  it('places x by rank and centres each rank on the tallest one', () => {
    const l = layoutGraph(g(['s', 'a', 'b', 'c', 'e'], [['s', 'a'], ['s', 'b'], ['s', 'c'], ['a', 'e'], ['b', 'e'], ['c', 'e']]));
    const { nodeWidth, nodeHeight, rankGap, nodeGap } = LAYOUT_DEFAULTS;
    const pitch = nodeHeight + nodeGap;
    expect(l.byKey.get('s')).toMatchObject({ x: 0, y: pitch });
    expect(l.byKey.get('a')).toMatchObject({ x: nodeWidth + rankGap, y: 0 });
    expect(l.byKey.get('c')).toMatchObject({ x: nodeWidth + rankGap, y: 2 * pitch });
    expect(l.byKey.get('e')).toMatchObject({ x: 2 * (nodeWidth + rankGap), y: pitch });
    expect(l.width).toBe(3 * nodeWidth + 2 * rankGap);
    expect(l.height).toBe(3 * nodeHeight + 2 * nodeGap);
  });

  it('honours the box and gap options', () => {
    const l = layoutGraph(g(['a', 'b', 'c'], [['a', 'b'], ['a', 'c']]), { nodeWidth: 10, nodeHeight: 5, rankGap: 2, nodeGap: 1 });
    expect(l.placements.map((p) => [p.key, p.x, p.y])).toEqual([['a', 0, 3], ['b', 12, 0], ['c', 12, 6]]);
    expect([l.width, l.height]).toEqual([22, 11]);
  });

  it('uncrosses edges with one barycenter pass: a child follows the order of its parent', () => {
    // Kahn visits y (ready second, smaller key) before z; z's parent a sits above y's parent b
    const l = layoutGraph(g(['a', 'b', 'y', 'z'], [['a', 'z'], ['b', 'y']]));
    expect(l.ranks).toEqual([['a', 'b'], ['z', 'y']]);
  });

  it('averages a node over all of its predecessors, whatever rank they sit in', () => {
    // m's parents are p (order 0) and r (order 2): mean 1; n's parent q: 1 too → tie by key
    const l = layoutGraph(g(['p', 'q', 'r', 'n', 'm'], [['p', 'm'], ['r', 'm'], ['q', 'n']]));
    expect(l.ranks[1]).toEqual(['m', 'n']);
    // a long edge: w is ranked 2 (via x) and also fed by rank 0's b
    const l2 = layoutGraph(g(['a', 'b', 'x', 'v', 'w'], [['a', 'x'], ['x', 'v'], ['x', 'w'], ['b', 'w'], ['a', 'v']]));
    expect(l2.ranks[2]).toEqual(['v', 'w']);
  });

  it('breaks ties among equal barycenters by node key', () => {
    const l = layoutGraph(g(['s', 'd', 'b', 'c', 'a'], [['s', 'd'], ['s', 'b'], ['s', 'c'], ['s', 'a']]));
    expect(l.ranks[1]).toEqual(['a', 'b', 'c', 'd']);
  });

  it('orders the sources by key', () => {
    expect(layoutGraph(g(['z', 'm', 'a'], [])).ranks).toEqual([['a', 'm', 'z']]);
  });

  it('ignores self-loops, edges to unknown nodes and repeated edges; places a repeated key once', () => {
    const once = layoutGraph(g(['a', 'b', 'c'], [['a', 'b'], ['b', 'c'], ['a', 'c']]));
    const noisy = layoutGraph({
      nodes: [{ key: 'a' }, { key: 'b' }, { key: 'c' }, { key: 'b' }],
      edges: [
        { from: 'a', to: 'b' }, { from: 'a', to: 'b' }, { from: 'b', to: 'c' }, { from: 'a', to: 'c' },
        { from: 'c', to: 'c' }, { from: 'ghost', to: 'a' }, { from: 'c', to: 'nowhere' },
      ],
    });
    expect(noisy).toEqual(once);
  });

  it('places every node of a cycle after the acyclic part, deterministically, instead of dropping it', () => {
    const cyc = g(['start', 'a', 'b', 'c', 'end'], [['start', 'a'], ['a', 'b'], ['b', 'c'], ['c', 'a'], ['c', 'end']]);
    const l = layoutGraph(cyc);
    expect(l.placements).toHaveLength(5);
    expect(l.byKey.get('start')!.rank).toBe(0);
    expect(l.ranks).toEqual([['start'], ['a'], ['b'], ['c'], ['end']]);
    expect(layoutGraph({ nodes: shuffled(cyc.nodes, 7), edges: shuffled(cyc.edges, 3) })).toEqual(l);
    // a graph that is one cycle has no source at all
    const ring = layoutGraph(g(['x', 'y', 'z'], [['x', 'y'], ['y', 'z'], ['z', 'x']]));
    expect(ring.ranks).toEqual([['x'], ['y'], ['z']]);
  });

  it('holds the invariants on every DAG of five nodes (all 1024 edge sets, keys against the topological order)', () => {
    const keys = ['e', 'c', 'a', 'd', 'b']; // topological order differs from key order, so ties matter
    const pairs: Array<[string, string]> = [];
    for (let i = 0; i < keys.length; i++) for (let j = i + 1; j < keys.length; j++) pairs.push([keys[i]!, keys[j]!]);
    for (let mask = 0; mask < 1 << pairs.length; mask++) {
      const graph = g(keys, pairs.filter((_, i) => mask & (1 << i)));
      checkInvariants(graph, layoutGraph(graph));
    }
  });

  it('holds the invariants on random DAGs', () => {
    fc.assert(fc.property(dagArb, (graph) => checkInvariants(graph, layoutGraph(graph))), { numRuns: 300 });
  });

  it('depends on the node and edge sets only, never on their array order', () => {
    fc.assert(
      fc.property(dagArb, fc.integer({ min: 1, max: 1_000_000 }), (graph, seed) => {
        const again = layoutGraph({ nodes: shuffled(graph.nodes, seed), edges: shuffled(graph.edges, seed + 1) });
        expect(again).toEqual(layoutGraph(graph));
      }),
      { numRuns: 300 },
    );
  });

  it('lays out a 20,000-node chain and a 2,000-wide fan without recursion', () => {
    const chain = Array.from({ length: 20_000 }, (_, i) => `n${String(i).padStart(5, '0')}`);
    const l = layoutGraph(g(chain, chain.slice(1).map((k, i) => [chain[i]!, k])));
    expect(l.ranks).toHaveLength(20_000);
    expect(l.byKey.get(chain.at(-1)!)!.rank).toBe(19_999);
    const leaves = Array.from({ length: 2_000 }, (_, i) => `l${i}`);
    const fan = layoutGraph(g(['root', ...leaves], leaves.map((k) => ['root', k])));
    expect(fan.ranks[1]).toHaveLength(2_000);
    expect(fan.ranks[1]).toEqual([...leaves].sort());
  });
});
