import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseGraph, type NodeKind } from '@flowline/graph';
import { SAMPLES } from '../samples';
import { arrange, canvasToGraph, graphToCanvas, withoutMember, type Doc } from './canvas';

const TOOLS = new Map([
  ['echo', { requiresAllowedUrls: false }],
  ['json_extract', { requiresAllowedUrls: false }],
]);
const valid = (doc: unknown) => parseGraph(doc, { maxNodes: 200, tools: TOOLS });

/** Round trip through the canvas, and again through JSON text (what a save sends). */
const roundTrip = (doc: unknown) => JSON.parse(JSON.stringify(canvasToGraph(graphToCanvas(doc)))) as unknown;

const position = fc.record({ x: fc.double({ min: -1e6, max: 1e6, noNaN: true }), y: fc.double({ min: -1e6, max: 1e6, noNaN: true }) });
const MIDDLE_KINDS: NodeKind[] = ['LlmCall', 'Tool', 'Parallel', 'Agent'];
const middleConfig: Partial<Record<NodeKind, Doc>> = {
  LlmCall: { prompt: 'Summarise.', inputBindings: { text: 'run.input.text' } },
  Tool: { toolName: 'echo', arguments: { n: 1, nested: { list: [1, 'two', null] } } },
  Agent: { instructions: 'Do it.', tools: ['echo'] },
};

/** Random valid graphs: Start → a chain of work nodes → End, extra forward edges, positions, labels, extra members. */
const validGraph = fc
  .record({
    kinds: fc.array(fc.constantFrom(...MIDDLE_KINDS), { minLength: 0, maxLength: 12 }),
    positions: fc.array(position, { minLength: 14, maxLength: 14 }),
    labels: fc.array(fc.option(fc.string({ maxLength: 12 }), { nil: undefined }), { minLength: 14, maxLength: 14 }),
    extra: fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 10 }),
    kind: fc.constantFrom('Standard', 'Chat'),
    header: fc.boolean(),
  })
  .map(({ kinds, positions, labels, extra, kind, header }) => {
    const keys = ['start', ...kinds.map((_, i) => `n${i}`), 'end'];
    const nodes: Doc[] = keys.map((key, i) => {
      const k: NodeKind = i === 0 ? 'Start' : i === keys.length - 1 ? 'End' : kinds[i - 1]!;
      const cfg = k === 'End' ? { outcome: 'done' } : k === 'Start' ? { defaultInput: { text: 'x' } } : middleConfig[k];
      return {
        key,
        kind: k,
        ...(labels[i] !== undefined ? { label: labels[i] } : {}),
        ...(cfg ? { config: cfg } : {}),
        position: positions[i]!,
      };
    });
    const edges: Doc[] = keys.slice(1).map((to, i) => ({ key: `e${i}`, from: keys[i]!, to }));
    const pairs = new Set(edges.map((e) => `${e.from}>${e.to}`));
    for (const [a, b] of extra) {
      const i = a % keys.length;
      const j = b % keys.length;
      if (i >= j || i === keys.length - 1 || pairs.has(`${keys[i]}>${keys[j]}`)) continue;
      pairs.add(`${keys[i]}>${keys[j]}`);
      edges.push({ key: `x${edges.length}`, from: keys[i]!, to: keys[j]!, label: 'extra', sourceHandle: 'out' });
    }
    return { schemaVersion: 1, kind, ...(header ? { inputSchema: { type: 'object' } } : {}), nodes, edges };
  });

describe('the canvas model', () => {
  it('round-trips random valid graphs with positions losslessly, member order included', () => {
    fc.assert(
      fc.property(validGraph, (generated) => {
        // as the API hands it over: JSON (which has no -0)
        const doc = JSON.parse(JSON.stringify(generated)) as Doc;
        expect(valid(doc).ok).toBe(true);
        const back = roundTrip(doc);
        expect(back).toEqual(doc);
        expect(JSON.stringify(back)).toBe(JSON.stringify(doc));
        expect(graphToCanvas(doc).laidOut).toEqual([]);
      }),
      { numRuns: 200 },
    );
  });

  it.each(SAMPLES.map((s) => [s.name, s] as const))('lays out the sample %s once and then round-trips it losslessly, positions included', (_n, s) => {
    const first = graphToCanvas(s.graph);
    expect(first.laidOut.length).toBe((s.graph as { nodes: unknown[] }).nodes.length);
    const placed = JSON.parse(JSON.stringify(canvasToGraph(first))) as { nodes: Doc[] };
    // the layout added positions and changed nothing else
    expect({ ...placed, nodes: placed.nodes.map((n) => withoutMember(n, 'position')) }).toEqual(s.graph);
    for (const n of placed.nodes) expect(n.position).toEqual({ x: expect.any(Number), y: expect.any(Number) });
    expect(roundTrip(placed)).toEqual(placed);
    expect(JSON.stringify(roundTrip(placed))).toBe(JSON.stringify(placed));
    expect(valid(placed)).toMatchObject({ ok: true, warnings: [] });
  });

  it('keeps members it does not know and elements it cannot read, in place', () => {
    const doc = { note: 'kept', nodes: [{ key: 'a', kind: 'Start', colour: 'red', position: { x: 1, y: 2 } }, 'junk'], edges: [{ from: 'a' }], trailer: true };
    expect(roundTrip(doc)).toEqual({
      note: 'kept',
      nodes: [doc.nodes[0], { position: { x: expect.any(Number), y: expect.any(Number) } }],
      edges: [{ from: 'a', to: '' }],
      trailer: true,
    });
  });

  it('lays out only what has no position, with the shared layered layout, and Auto-arrange moves every node', () => {
    const doc = {
      nodes: [
        { key: 's', kind: 'Start', position: { x: 500, y: 500 } },
        { key: 'w', kind: 'Parallel' },
        { key: 'e', kind: 'End', config: { outcome: 'x' } },
      ],
      edges: [
        { key: 'a', from: 's', to: 'w' },
        { key: 'b', from: 'w', to: 'e' },
      ],
    };
    const m = graphToCanvas(doc);
    expect(m.laidOut).toEqual(['w', 'e']);
    expect(m.nodes[0]!.position).toEqual({ x: 500, y: 500 });
    const xs = m.nodes.slice(1).map((n) => n.position.x);
    expect(xs[0]!).toBeLessThan(xs[1]!);
    const arranged = arrange(m);
    expect(arranged.nodes.map((n) => n.position.x)).toEqual([...arranged.nodes.map((n) => n.position.x)].sort((a, b) => a - b));
    expect(arranged.nodes[0]!.position).not.toEqual({ x: 500, y: 500 });
  });
});
