import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Graph } from '../model';
import { parseJsonExact } from '../conditions';
import { parseGraph } from '../parse';
import { OPTS, baseline } from '../parse/fixtures/builders';
import { canonicalEight } from '../parse/fixtures/canonical-eight';
import { describe as describeGraph } from './describe';
import { dotEscape, mermaidEscape, toDot, toMermaid } from './render';

function graphOf(doc: unknown): Graph {
  const r = parseGraph(doc, OPTS);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.graph;
}

const NASTY = 'He said "hi" [x] {y} (z) |pipe| <b>tag</b> back\\slash\nnew\rline\ttab #35; ;end --> A-->B é 🚀 %%';

const unMermaid = (s: string) => s.replace(/#(\d+);/g, (_, d: string) => String.fromCodePoint(Number(d)));
const unDot = (s: string) => s.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));

describe('describe', () => {
  it('describes the canonical graph exactly, in document order', () => {
    const d = describeGraph(graphOf(canonicalEight()));
    expect(d.nodes.map((n) => n.key)).toEqual(['start', 'analyze', 'check', 'review', 'lookup', 'fanout', 'merge', 'done']);
    expect(d.nodes[1]).toEqual({
      index: 1, key: 'analyze', kind: 'Agent', label: 'Analyze', joinPolicy: 'All', maxAttempts: 3, timeoutSeconds: null,
      onError: 'FailRun', human: false, inline: false, child: false, lane: 'llm', inbound: ['e1'], outbound: ['e2'], depth: 1,
    });
    expect(d.edges.map((e) => e.kind)).toEqual(['unconditional', 'unconditional', 'conditional', 'conditional', 'conditional', 'unconditional', 'unconditional', 'unconditional', 'conditional']);
    expect(d.analysis).toEqual({
      start: 'start',
      ends: ['done'],
      fanOut: ['check', 'review'],
      joins: ['fanout', 'done'],
      human: ['review'],
      children: [],
      routers: ['check', 'review'],
      topologicalOrder: ['start', 'analyze', 'check', 'review', 'lookup', 'fanout', 'merge', 'done'],
      depth: 6,
      tools: ['read_file'],
      nodeCount: 8,
      edgeCount: 9,
    });
  });

  it('is JSON-safe and stable', () => {
    const g = graphOf(canonicalEight());
    const d = describeGraph(g);
    expect(JSON.parse(JSON.stringify(d))).toEqual(d);
    expect(JSON.stringify(describeGraph(g))).toBe(JSON.stringify(d));
  });

  it('orders ready nodes by document position, not by edge order', () => {
    const doc = baseline();
    doc.nodes.push({ key: 'b', kind: 'Parallel' }, { key: 'a', kind: 'Parallel' });
    doc.edges.push({ key: 'sa', from: 'start', to: 'a' }, { key: 'sb', from: 'start', to: 'b' }, { key: 'ad', from: 'a', to: 'done' }, { key: 'bd', from: 'b', to: 'done' });
    expect(describeGraph(graphOf(doc)).analysis.topologicalOrder).toEqual(['start', 'work', 'b', 'a', 'done']);
  });
});

describe('toMermaid / toDot', () => {
  it('render the canonical graph deterministically with synthetic ids', () => {
    const g = graphOf(canonicalEight());
    const m = toMermaid(g);
    expect(m).toBe(toMermaid(graphOf(canonicalEight())));
    expect(m.split('\n')[0]).toBe('flowchart LR');
    expect(m).toContain('  n0(["Start #40;Start: start#41;"])');
    expect(m).toContain('  n2 -->|"yes"| n3');
    expect(m).not.toMatch(/\banalyze\b -->/);
    const dot = toDot(g);
    expect(dot).toContain('  n0 [label="Start (Start: start)", shape=oval];');
    expect(dot).toContain('  n2 -> n3 [label="yes"];');
    expect(dot.trimEnd().endsWith('}')).toBe(true);
  });

  it('cannot be broken by a nasty label in either syntax', () => {
    const doc = baseline();
    doc.nodes[1]!.label = NASTY;
    doc.edges[1]!.label = NASTY;
    const g = graphOf(doc);

    const m = toMermaid(g).split('\n');
    const nodeLine = m.find((l) => l.startsWith('  n1['))!;
    expect(nodeLine).toMatch(/^ {2}n1\["[A-Za-z0-9 _.,:#;-]*"\]$/);
    expect(unMermaid(nodeLine.slice(6, -2))).toBe(`${NASTY} (LlmCall: work)`);
    const edgeLine = m.find((l) => l.startsWith('  n1 -->'))!;
    expect(edgeLine).toMatch(/^ {2}n1 -->\|"[A-Za-z0-9 _.,:#;-]*"\| n2$/);
    expect(unMermaid(edgeLine.slice(10, -5))).toBe(NASTY);

    const d = toDot(g).split('\n');
    const dNode = d.find((l) => l.startsWith('  n1 ['))!;
    const m1 = /^ {2}n1 \[label="((?:[^"\\\n]|\\.)*)", shape=box\];$/.exec(dNode);
    expect(m1).not.toBeNull();
    expect(unDot(m1![1]!)).toBe(`${NASTY.replace(/[\r\t]/g, ' ')} (LlmCall: work)`);
    const dEdge = d.find((l) => l.startsWith('  n1 ->'))!;
    expect(dEdge).toMatch(/^ {2}n1 -> n2 \[label="(?:[^"\\\n]|\\.)*"\];$/);
  });

  it('escape any string into the safe alphabet and back', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        const me = mermaidEscape(s);
        expect(me).toMatch(/^[A-Za-z0-9 _.,:#;-]*$/);
        expect(unMermaid(me)).toBe(s);
        const de = dotEscape(s);
        expect(de).toMatch(/^(?:[^"\\\n\r]|\\.)*$/);
      }),
    );
  });

  it('show a condition value exactly, even an integer a double cannot hold', () => {
    const doc = parseJsonExact(
      '{"nodes":[{"key":"start","kind":"Start"},{"key":"r","kind":"Condition","config":{"path":"output.n"}},' +
        '{"key":"a","kind":"End","config":{"outcome":"a"}},{"key":"b","kind":"End","config":{"outcome":"b"}}],' +
        '"edges":[{"key":"e1","from":"start","to":"r"},{"key":"big","from":"r","to":"a","condition":{"op":"Gt","value":9007199254740993}},' +
        '{"key":"rest","from":"r","to":"b","default":true}]}',
    );
    const g = graphOf(doc);
    expect(toMermaid(g)).toContain(`|"${mermaidEscape('output.n Gt 9007199254740993')}"|`);
    expect(toDot(g)).toContain('[label="output.n Gt 9007199254740993"]');
  });

  it('draw default edges dashed and label them default', () => {
    const doc = baseline();
    doc.nodes[1] = { key: 'work', kind: 'Condition', config: { path: 'output.x' } };
    doc.edges.push({ key: 'e3', from: 'work', to: 'done', condition: { op: 'Gt', value: 3 } });
    doc.edges[1]!.default = true;
    const g = graphOf(doc);
    expect(toMermaid(g)).toContain('  n1 -.->|"default"| n2');
    expect(toMermaid(g)).toContain('  n1 -->|"output.x Gt 3"| n2');
    expect(toDot(g)).toContain('  n1 -> n2 [label="default", style=dashed];');
  });
});
