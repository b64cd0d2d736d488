import { describe, expect, it } from 'vitest';
import { BUILTIN_TOOLS } from './fixtures/canonical-eight';
import { baseline, edge, errorsOf, node, parse } from './fixtures/builders';

const only = (doc: unknown, key: string | null, re: RegExp, opts?: { maxNodes: number; tools: typeof BUILTIN_TOOLS }) => {
  const errs = errorsOf(doc, opts);
  expect(errs).toHaveLength(1);
  expect(errs[0]!.key).toBe(key);
  expect(errs[0]!.message).toMatch(re);
};

describe('document-level refusals', () => {
  it.each([null, 42, 'graph', [], true])('answers a non-object document %j with one unkeyed error', (doc) => {
    only(doc, null, /must be a JSON object/);
  });

  it('refuses a document whose nodes member is not an array', () => {
    only({ nodes: { a: 1 }, edges: [] }, null, /'nodes' must be an array/);
    only({ edges: [] }, null, /'nodes' must be an array/);
  });

  it('refuses a document whose edges member is not an array', () => {
    const d = baseline() as Record<string, unknown>;
    d.edges = 'e1';
    only(d, null, /'edges' must be an array/);
  });
});

describe('node cap', () => {
  it('checks the declared array length before reading any node (201 nulls, cap 200)', () => {
    only({ nodes: new Array(201).fill(null), edges: 'junk' }, null, /declares 201 nodes; at most 200/, { maxNodes: 200, tools: BUILTIN_TOOLS });
  });

  it('accepts a graph of exactly the cap', () => {
    expect(parse(baseline(), { maxNodes: 3, tools: BUILTIN_TOOLS }).ok).toBe(true);
    only(baseline(), null, /declares 3 nodes; at most 2/, { maxNodes: 2, tools: BUILTIN_TOOLS });
  });
});

describe('structural rules (reported alone)', () => {
  it('refuses a graph without a Start, keyed null, and does not judge reachability', () => {
    const d = baseline();
    node(d, 'start').kind = 'Parallel';
    d.nodes.push({ key: 'island', kind: 'End', config: { outcome: 'x' } });
    only(d, null, /no Start node/);
  });

  it('keys a second Start to itself', () => {
    const d = baseline();
    d.nodes.push({ key: 'start2', kind: 'Start' });
    d.edges.push({ key: 'e3', from: 'start2', to: 'work' });
    only(d, 'start2', /second Start node 'start2'/);
  });

  it('refuses an edge into the Start, keyed to the Start', () => {
    const d = baseline();
    d.nodes.push({ key: 'orphan', kind: 'Parallel' });
    d.edges.push({ key: 'e3', from: 'orphan', to: 'start' });
    const errs = errorsOf(d);
    expect(errs).toEqual([
      { key: 'start', message: expect.stringMatching(/Start node 'start' has an inbound edge \(edge 'e3'\)/) },
      { key: 'orphan', message: expect.stringMatching(/not reachable from Start/) },
    ]);
  });

  it('refuses a graph without an End, keyed null', () => {
    const d = baseline();
    node(d, 'done').kind = 'Parallel';
    only(d, null, /no End node/);
  });

  it('names a cycle in walk order, keyed null, and hides accumulated errors', () => {
    const d = baseline();
    d.nodes.push({ key: 'a', kind: 'Parallel' }, { key: 'b', kind: 'Parallel' }, { key: 'c', kind: 'Parallel', config: { bogus: 1 } });
    edge(d, 'e2').to = 'a';
    d.edges.push({ key: 'ab', from: 'a', to: 'b' }, { key: 'bc', from: 'b', to: 'c' }, { key: 'ca', from: 'c', to: 'a' }, { key: 'cd', from: 'c', to: 'done' });
    only(d, null, /cycle: a -> b -> c -> a$/);
  });

  it('keys a self-loop to its one node', () => {
    const d = baseline();
    d.edges.push({ key: 'loop', from: 'work', to: 'work' });
    only(d, 'work', /cycle: work -> work$/);
  });

  it('keys each unreachable node to itself and hides accumulated errors', () => {
    const d = baseline();
    d.nodes.push({ key: 'island', kind: 'LlmCall', config: { nope: true } });
    d.edges.push({ key: 'e3', from: 'island', to: 'done' });
    only(d, 'island', /'island' is not reachable from Start/);
  });

  it('reports every structural error at once', () => {
    const d = baseline();
    node(d, 'done').kind = 'Parallel';
    d.nodes.push({ key: 'island', kind: 'Parallel' });
    const errs = errorsOf(d);
    expect(errs.map((e) => e.key)).toEqual([null, 'island']);
  });

  it('parses a 100,000-node chain with a huge cap without overflowing the stack', () => {
    const n = 100_000;
    const nodes = Array.from({ length: n }, (_, i) => ({ key: `n${i}`, kind: i === 0 ? 'Start' : i === n - 1 ? 'End' : 'Parallel', ...(i === n - 1 ? { config: { outcome: 'ok' } } : {}) }));
    const edges = Array.from({ length: n - 1 }, (_, i) => ({ key: `e${i}`, from: `n${i}`, to: `n${i + 1}` }));
    const r = parse({ nodes, edges }, { maxNodes: Number.POSITIVE_INFINITY, tools: BUILTIN_TOOLS });
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.graph.nodes).toHaveLength(n);

    edges.push({ key: 'back', from: `n${n - 2}`, to: `n${n - 5}` });
    const errs = errorsOf({ nodes, edges }, { maxNodes: 1e9, tools: BUILTIN_TOOLS });
    expect(errs).toEqual([{ key: null, message: `the graph has a cycle: n${n - 5} -> n${n - 4} -> n${n - 3} -> n${n - 2} -> n${n - 5}` }]);
  });
});
