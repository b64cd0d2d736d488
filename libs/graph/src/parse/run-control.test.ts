import { describe, expect, it } from 'vitest';
import { around, baseline, node, only, parse, valid } from './fixtures/builders';

const DEF = '7f1c6c2e-3d7a-4c53-9c1b-1d2f3a4b5c6d';

describe('End stopRun', () => {
  it('parses stopRun: true and refuses a value that is not a boolean, keyed to the End', () => {
    const d = baseline();
    node(d, 'done').config = { outcome: 'completed', stopRun: true };
    const r = parse(d);
    expect(r.ok && r.graph.nodes[2]!.config).toEqual({ outcome: 'completed', stopRun: true });
    node(d, 'done').config = { outcome: 'completed', stopRun: 'yes' };
    only(d, 'done', /config\.stopRun must be a boolean/);
  });
});

describe('Parallel maxConcurrency', () => {
  it('parses a positive integer and refuses 0, a fraction or a string, keyed to the Parallel', () => {
    valid(around({ kind: 'Parallel', config: { maxConcurrency: 2 } }));
    for (const bad of [0, 1.5, '2']) only(around({ kind: 'Parallel', config: { maxConcurrency: bad } }), 'work', /config\.maxConcurrency must be a positive integer/);
  });
});

describe('Subworkflow stateIn / stateOut', () => {
  const sub = (config: Record<string, unknown>, extra: Record<string, unknown> = {}) => around({ kind: 'Subworkflow', config: { definitionId: DEF, ...config }, ...extra });

  it('parses them, and a stateOut makes the graph keep state', () => {
    const r = parse(sub({ stateIn: { topic: 'run.input.topic' }, stateOut: { findings: 'findings' } }));
    expect(r.ok).toBe(true);
    expect(r.ok && r.graph.state).toEqual({ schema: null, reducers: {}, initial: {} });
    const none = parse(sub({ stateIn: { topic: 'run.input.topic' } }));
    expect(none.ok && none.graph.state).toBe(undefined);
  });

  it('refuses a path that is not a dot path and a key that is not a state key, keyed to the node', () => {
    only(sub({ stateIn: { topic: 'run..input' } }), 'work', /config\.stateIn 'topic'/);
    only(sub({ stateOut: { 'bad key': 'findings' } }), 'work', /config\.stateOut: state key "bad key" must be/);
    only(sub({ stateIn: 'state.topic' }), 'work', /config\.stateIn must be an object of name → dot path/);
  });

  it('refuses a stateOut key the node also writes', () => {
    only(sub({ stateOut: { findings: 'findings' } }, { writes: { findings: 'output.result' } }), 'work', /config\.stateOut\.findings: state key 'findings' is written by the node's writes too/);
  });

  it('counts stateOut as a writer of a rejectConflict key', () => {
    const d = sub({ stateOut: { verdict: 'verdict' } });
    d.state = { reducers: { verdict: 'rejectConflict' } };
    d.nodes.splice(1, 0, { key: 'judge', kind: 'LlmCall', config: { prompt: 'judge' }, writes: { verdict: 'output.text' } });
    d.edges = [
      { key: 'e1', from: 'start', to: 'judge' },
      { key: 'e3', from: 'start', to: 'work' },
      { key: 'e2', from: 'work', to: 'done' },
      { key: 'e4', from: 'judge', to: 'done' },
    ];
    only(d, 'work', /writes rejectConflict state key 'verdict', which 'judge' writes too, and neither runs before the other/);
  });
});
