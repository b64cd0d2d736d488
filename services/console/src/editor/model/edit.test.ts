import { describe, expect, it } from 'vitest';
import type { NODE_KINDS } from '@flowline/graph';
import { NODE_KIND_SPECS } from '@flowline/graph';
import { canvasToGraph, graphToCanvas, type CanvasModel } from './canvas';
import { addNode, connect, keyProblem, removeElements, renameNode, setConfigMember, setNodeMember } from './edit';
import { levelOf, placeIssues } from './issues';

const at = { x: 0, y: 0 };
const empty = (): CanvasModel => graphToCanvas({ nodes: [], edges: [] });

function build(...kinds: Array<(typeof NODE_KINDS)[number]>): CanvasModel {
  let m = empty();
  for (const k of kinds) m = addNode(m, k, at).model;
  return m;
}

function mustConnect(m: CanvasModel, a: string, b: string): CanvasModel {
  const r = connect(m, a, b);
  if (!r.ok) throw new Error(r.reason);
  return r.model;
}

describe('adding from the palette', () => {
  it('gives each new node a fresh kebab-cased key and its kind’s starter config', () => {
    const m = build('Start', 'LlmCall', 'LlmCall', 'DecisionModel', 'End');
    expect(m.nodes.map((n) => n.id)).toEqual(['start', 'llm-call', 'llm-call-2', 'decision-model', 'end']);
    expect(m.nodes[1]!.data.doc).toEqual({ key: 'llm-call', kind: 'LlmCall', config: NODE_KIND_SPECS.LlmCall.starter, position: at });
    expect(m.nodes[0]!.data.doc).toEqual({ key: 'start', kind: 'Start', position: at });
  });

  it('never reuses an edge key for a node', () => {
    let m = build('Start', 'End');
    m = mustConnect(m, 'start', 'end');
    m = addNode(m, 'Parallel', at).model;
    const { model, key } = addNode({ ...m, edges: [...m.edges, { ...m.edges[0]!, id: 'parallel-2' }] }, 'Parallel', at);
    expect(key).toBe('parallel-3');
    expect(model.nodes.map((n) => n.id)).toContain('parallel-3');
  });
});

describe('connecting', () => {
  it('refuses a second unconditional edge over one pair at the gesture, and a self-loop', () => {
    let m = build('Start', 'End');
    m = mustConnect(m, 'start', 'end');
    const again = connect(m, 'start', 'end');
    expect(again).toEqual({ ok: false, reason: expect.stringContaining('already has an unconditional edge') });
    expect(connect(m, 'end', 'end').ok).toBe(false);
  });

  it('prefills the decision a Pause routes on, one per allowed decision, and adds the context edge around it', () => {
    let m = build('Start', 'Tool', 'Pause', 'End', 'End');
    m = mustConnect(m, 'start', 'tool');
    m = mustConnect(m, 'tool', 'pause');
    const first = connect(m, 'pause', 'end');
    expect(first.ok).toBe(true);
    if (!first.ok) return;
    expect(first.added).toEqual(['pause-end', 'tool-end-context']);
    m = first.model;
    m = mustConnect(m, 'pause', 'end-2');
    const docs = canvasToGraph(m).edges as Array<Record<string, unknown>>;
    expect(docs.find((e) => e.key === 'pause-end')).toMatchObject({ condition: { path: 'output.decision', op: 'Eq', value: 'Approve' }, label: 'Approve' });
    expect(docs.find((e) => e.key === 'pause-end-2')).toMatchObject({ condition: { path: 'output.decision', op: 'Eq', value: 'Reject' } });
    expect(docs.find((e) => e.key === 'tool-end-context')).toEqual({ key: 'tool-end-context', from: 'tool', to: 'end', label: 'context' });
  });

  it('adds no context edge into an Any successor: it would be admitted though every approval was rejected', () => {
    let m = build('Start', 'Tool', 'Pause', 'End');
    m = setNodeMember(m, 'end', 'joinPolicy', 'Any');
    m = mustConnect(m, 'tool', 'pause');
    const r = connect(m, 'pause', 'end');
    expect(r.ok && r.added).toEqual(['pause-end']);
    expect(r.ok && r.context).toEqual([]);
  });

  it('adds the context edge when the wait is wired last, into it, reaching the successor behind consecutive pauses', () => {
    let m = build('Tool', 'Pause', 'Pause', 'End');
    m = mustConnect(m, 'pause', 'pause-2');
    m = mustConnect(m, 'pause-2', 'end');
    const r = connect(m, 'tool', 'pause');
    expect(r.ok && r.context).toEqual([
      { from: 'tool', to: 'pause-2' },
      { from: 'tool', to: 'end' },
    ]);
  });

  it('adds no context edge from a Condition ancestor, nor when two branches feed the wait', () => {
    let m = build('Condition', 'Pause', 'End');
    m = mustConnect(m, 'condition', 'pause');
    expect((() => { const r = connect(m, 'pause', 'end'); return r.ok && r.context; })()).toEqual([]);
    let two = build('Tool', 'Tool', 'Pause', 'End');
    two = mustConnect(two, 'tool', 'pause');
    two = mustConnect(two, 'tool-2', 'pause');
    expect((() => { const r = connect(two, 'pause', 'end'); return r.ok && r.context; })()).toEqual([]);
  });

  it('prefills a DecisionModel’s labels, and makes a Condition’s second out-edge its default edge', () => {
    let m = build('Start', 'DecisionModel', 'Condition', 'End', 'End');
    m = mustConnect(m, 'decision-model', 'end');
    m = mustConnect(m, 'decision-model', 'end-2');
    m = mustConnect(m, 'condition', 'end');
    m = mustConnect(m, 'condition', 'end-2');
    const docs = canvasToGraph(m).edges as Array<Record<string, unknown>>;
    expect(docs.map((e) => e.condition ?? (e.default ? 'default' : null))).toEqual([
      { path: 'output.choice', op: 'Eq', value: 'yes' },
      { path: 'output.choice', op: 'Eq', value: 'no' },
      { op: 'Eq', value: true },
      'default',
    ]);
  });
});

describe('changing', () => {
  it('renames a node and moves its edges’ ends, and checks a new key', () => {
    let m = build('Start', 'End');
    m = mustConnect(m, 'start', 'end');
    expect(keyProblem(m, 'end', 'start-end')).toMatch(/taken/);
    expect(keyProblem(m, 'end', 'bad key')).toMatch(/letters/);
    expect(keyProblem(m, 'end', 'finish')).toBeNull();
    m = renameNode(m, 'end', 'finish');
    expect(canvasToGraph(m).edges).toEqual([{ key: 'start-end', from: 'start', to: 'finish' }]);
    expect((canvasToGraph(m).nodes as Array<{ key: string }>).map((n) => n.key)).toEqual(['start', 'finish']);
  });

  it('sets and removes config members, dropping an emptied config, and removes a node with its edges', () => {
    let m = build('Start', 'End');
    m = mustConnect(m, 'start', 'end');
    m = setConfigMember(m, 'start', 'defaultInput', { a: 1 });
    expect((canvasToGraph(m).nodes as Array<Record<string, unknown>>)[0]).toMatchObject({ config: { defaultInput: { a: 1 } } });
    m = setConfigMember(m, 'start', 'defaultInput', undefined);
    expect((canvasToGraph(m).nodes as Array<Record<string, unknown>>)[0]).not.toHaveProperty('config');
    m = removeElements(m, ['end'], []);
    expect(canvasToGraph(m).edges).toEqual([]);
  });
});

describe('placing the server’s issues', () => {
  it('puts a keyed issue on its node or edge and the rest on the graph', () => {
    let m = build('Start', 'Condition', 'End');
    m = mustConnect(m, 'start', 'condition');
    const index = placeIssues(m, {
      errors: [
        { key: 'condition', message: 'Condition needs two out-edges' },
        { key: null, message: 'structural' },
        { key: 'ghost', message: 'names nothing here' },
      ],
      warnings: [{ key: 'start-condition', message: 'a warning' }],
    });
    expect(levelOf(index, 'condition')).toBe('error');
    expect(levelOf(index, 'start-condition')).toBe('warning');
    expect(levelOf(index, 'end')).toBeNull();
    expect(index.graph.map((i) => i.message)).toEqual(['structural', 'names nothing here']);
    expect([index.errorCount, index.warningCount]).toEqual([3, 1]);
  });
});
