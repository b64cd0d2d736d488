import { describe, expect, it } from 'vitest';
import { graphToCanvas } from './canvas';
import { stateKeysOf, templateCompletions, templateHints } from './template-hints';
import { problemsFor } from '../inspector/Inspector';

const model = graphToCanvas({
  state: { reducers: { findings: 'append' }, initial: { count: 0 }, schema: { type: 'object', properties: { topic: { type: 'string' } } } },
  nodes: [
    { key: 'start', kind: 'Start', writes: { seed: 'output.input.seed' } },
    { key: 'search', kind: 'Tool', config: { toolName: 'echo' } },
    { key: 'sum', kind: 'LlmCall', config: { prompt: 'x' } },
  ],
  edges: [],
});

describe('template hints', () => {
  it('gathers the state keys from reducers, initial, the schema and every node’s writes', () => {
    expect(stateKeysOf(model)).toEqual(['count', 'findings', 'seed', 'topic']);
    expect(templateHints(model, 'sum').nodeKeys).toEqual(['search', 'start']);
  });

  it('offers the roots inside {{, then what lies under each root, and nothing outside a tag', () => {
    const hints = templateHints(model, 'sum');
    expect(templateCompletions('Summarise {{ ', hints)).toEqual({ from: 13, options: ['input', 'state', 'upstream', 'run'] });
    expect(templateCompletions('Summarise {{ sta', hints)).toEqual({ from: 13, options: ['input', 'state', 'upstream', 'run'] });
    expect(templateCompletions('{{ state.', hints)).toEqual({ from: 9, options: ['count', 'findings', 'seed', 'topic'] });
    expect(templateCompletions('{{ state.fi', hints)?.from).toBe(9);
    expect(templateCompletions('{{ upstream.', hints)?.options).toEqual(['search', 'start']);
    expect(templateCompletions('{{ upstream.search.', hints)?.options).toEqual(['output']);
    expect(templateCompletions('{{ run.', hints)?.options).toEqual(['input']);
    expect(templateCompletions('{{ input.', hints)?.options).toEqual(['output']);
    expect(templateCompletions('{% if state.', hints)?.options).toEqual(['count', 'findings', 'seed', 'topic']);
    expect(templateCompletions('{{ state.topic }} and state.', hints)).toBeNull();
    expect(templateCompletions('no tag here state.', hints)).toBeNull();
  });
});

describe('problems drawn on a field', () => {
  const messages = [
    "nodes.sum.config.prompt: template refers to 'inputs', which is not a template root (input, state, upstream, run)",
    'nodes.sum.config.systemPrompt: template syntax error: x',
    "writes.findings must be a dot path into the node's output envelope (e.g. output.json.items), not 3",
  ];
  it('finds a template error under its member, and no member whose name only begins the same', () => {
    expect(problemsFor(messages, 'prompt', true)).toEqual([messages[0]]);
    expect(problemsFor(messages, 'systemPrompt', true)).toEqual([messages[1]]);
    expect(problemsFor(messages, 'writes', false)).toEqual([messages[2]]);
    expect(problemsFor(messages, 'tools', true)).toEqual([]);
  });
});
