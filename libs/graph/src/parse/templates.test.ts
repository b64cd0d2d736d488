import { describe, expect, it } from 'vitest';
import { around, baseline, errorsOf, node, only, parse, valid, warningsOf } from './fixtures/builders';

describe('templates at validation', () => {
  it('accept sound templates in every template member', () => {
    const d = baseline();
    node(d, 'work').config = { systemPrompt: 'You write about {{ run.input.topic }}.', prompt: 'Summarise {{ input.output }} for {{ run.input.who | default: "me" }}.' };
    node(d, 'done').config = { outcome: 'ok', outputTemplate: { text: '{{ upstream.work.output.text }}', n: 1 } };
    valid(d);
    valid(around({ kind: 'Agent', config: { instructions: 'Do {{ run.input.task }}' } }));
    valid(around({ kind: 'Tool', config: { toolName: 'echo', arguments: { ids: '{{ input.output.ids }}', nested: ['{{ run.input }}'] } } }));
    valid(around({ kind: 'DecisionModel', config: { question: 'Is {{ run.input.text }} a complaint?', labels: ['yes', 'no'] } }));
  });

  it('key an unknown root to the node, naming the member', () => {
    const d = baseline();
    node(d, 'work').config = { prompt: 'Summarise {{ inputs.text }}' };
    only(d, 'work', /^nodes\.work\.config\.prompt: template refers to 'inputs', which is not a template root/);
  });

  it('key a syntax error, naming the member and the place inside it', () => {
    only(around({ kind: 'Tool', config: { toolName: 'echo', arguments: { a: { b: ['ok', '{{ run.input '] } } } }), 'work', /^nodes\.work\.config\.arguments\.a\.b\[1\]: template syntax error/);
    only(around({ kind: 'LlmCall', config: { prompt: 'ok', systemPrompt: '{% if %}' } }), 'work', /^nodes\.work\.config\.systemPrompt: template syntax error/);
    only(around({ kind: 'Agent', config: { instructions: '{{ x | nope }}' } }), 'work', /^nodes\.work\.config\.instructions: template syntax error: undefined filter/);
    only(around({ kind: 'DecisionModel', config: { question: '{% include "x" %}', labels: ['a', 'b'] } }), 'work', /^nodes\.work\.config\.question: .*include tag is not available/);
  });

  it('refuse a state key state.schema does not declare, and read any key without a schema', () => {
    const d = baseline();
    node(d, 'work').config = { prompt: 'Count: {{ state.total }}' };
    // the graph member `state` is parsed by its own module; only the template judgement is asserted here
    const withSchema = { ...d, state: { schema: { type: 'object', properties: { count: { type: 'number' } } } } };
    expect(errorsOf(withSchema).filter((e) => e.key === 'work')).toEqual([
      { key: 'work', message: expect.stringMatching(/^nodes\.work\.config\.prompt: template refers to state\.total, which state\.schema does not declare/) },
    ]);
    node(d, 'work').config = { prompt: 'Count: {{ state.count }}' };
    expect(errorsOf({ ...d, state: { schema: { type: 'object', properties: { count: {} } } } }).filter((e) => e.key === 'work')).toEqual([]);
    valid(d);
  });

  it('refuse upstream.<key> naming no node', () => {
    const d = baseline();
    node(d, 'work').config = { prompt: '{{ upstream.ghost.output }}' };
    only(d, 'work', /^nodes\.work\.config\.prompt: template refers to upstream\.ghost, which names no node/);
  });

  it('refuse outputTemplate together with resultPath', () => {
    const d = baseline();
    node(d, 'done').config = { outcome: 'ok', resultPath: 'input.output', outputTemplate: '{{ input.output.text }}' };
    only(d, 'done', /outputTemplate and resultPath both/);
  });

  it("judge a Subworkflow's inputTemplate, and refuse it together with inputBinding", () => {
    valid(around({ kind: 'Subworkflow', config: { definitionId: 'def-1', inputTemplate: { topic: '{{ run.input.topic }}' } } }));
    only(around({ kind: 'Subworkflow', config: { definitionId: 'def-1', inputTemplate: '{{ inputs }}' } }), 'work', /^nodes\.work\.config\.inputTemplate: template refers to 'inputs'/);
    only(around({ kind: 'Subworkflow', config: { definitionId: 'def-1', inputBinding: 'input.output', inputTemplate: '{{ input.output }}' } }), 'work', /inputTemplate and inputBinding both/);
  });

  it('only warn on a stored graph, so a definition saved with a literal {{ keeps loading', () => {
    const d = baseline();
    node(d, 'work').config = { prompt: 'Reply with {{ literally }}' };
    const stored = parse(d, { maxNodes: 200, tools: new Map([['echo', { requiresAllowedUrls: false }]]), stored: true });
    expect(stored.ok).toBe(true);
    expect(stored.warnings).toContainEqual({ key: 'work', message: expect.stringMatching(/^nodes\.work\.config\.prompt: template refers to 'literally'/) });
    expect(warningsOf(baseline())).toEqual([]);
  });

  it('leave a templated http_fetch url to the tool, which checks it against allowedUrls when it runs', () => {
    const fetch = (url: string) => around({ kind: 'Tool', config: { toolName: 'http_fetch', allowedUrls: ['https://api.example.com/'], arguments: { url, method: 'GET' } } });
    valid(fetch('https://api.example.com/items/{{ run.input.id }}'));
    valid(fetch('{{ run.input.url }}'));
    only(fetch('https://elsewhere.example.com/'), 'work', /is outside config\.allowedUrls/);
  });

  it('leave members that are not templates alone', () => {
    const d = baseline();
    node(d, 'done').config = { outcome: '{{ not a template member' };
    valid(d);
  });
});
