import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../model';
import { around, baseline, node, only, parse, valid } from './fixtures/builders';

const kindWith = (kind: string, config: JsonObject) => around({ kind, config });

describe('node members', () => {
  it('fill defaults: label = key, All, attempts 3 for model/tool kinds else 1, null timeout, backoff, FailRun', () => {
    const d = baseline();
    const r = parse(d);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const [start, work] = r.graph.nodes;
    expect(work).toEqual({
      key: 'work', kind: 'LlmCall', label: 'work', joinPolicy: 'All', maxAttempts: 3, timeoutSeconds: null,
      retryBackoff: { initialMs: 500, multiplier: 2, maxMs: 30000 }, onError: 'FailRun',
      inputSchema: null, outputSchema: null, position: null, config: { prompt: 'Summarise the input.' },
    });
    expect(start!.maxAttempts).toBe(1);
    expect(r.graph).toMatchObject({ schemaVersion: 1, kind: 'Standard', chat: null, inputSchema: null, outputSchema: null });
  });

  it('keep authored values', () => {
    const d = baseline();
    Object.assign(node(d, 'work'), {
      label: 'Work', maxAttempts: 5, timeoutSeconds: 30, retryBackoff: { initialMs: 100 }, onError: 'Continue',
      position: { x: 1.5, y: -2 }, joinPolicy: 'First',
    });
    const r = parse(d);
    expect(r.ok && r.graph.nodes[1]).toMatchObject({
      label: 'Work', maxAttempts: 5, timeoutSeconds: 30, retryBackoff: { initialMs: 100, multiplier: 2, maxMs: 30000 },
      onError: 'Continue', position: { x: 1.5, y: -2 }, joinPolicy: 'First',
    });
  });

  it.each([
    ['maxAttempts', 0, /maxAttempts must be a positive integer/],
    ['maxAttempts', 1.5, /maxAttempts must be a positive integer/],
    ['timeoutSeconds', '10', /timeoutSeconds must be a positive integer/],
    ['timeoutSeconds', -1, /timeoutSeconds must be a positive integer/],
    ['retryBackoff', { initialMs: -1 }, /initialMs must be a non-negative integer/],
    ['retryBackoff', { multiplier: 0.5 }, /multiplier must be a number ≥ 1/],
    ['retryBackoff', { initialMs: 5000, maxMs: 10 }, /maxMs must be ≥/],
    ['retryBackoff', { jitter: true }, /unknown member 'jitter'/],
    ['retryBackoff', 500, /retryBackoff must be an object/],
    ['joinPolicy', 'Sometimes', /joinPolicy must be/],
    ['joinPolicy', 'all', /joinPolicy must be/],
    ['onError', 'Ignore', /onError must be "FailRun" or "Continue"/],
    ['label', 5, /label must be a string/],
    ['position', { x: 'a', y: 1 }, /position must be/],
    ['inputSchema', { type: 'strng' }, /inputSchema is not a valid JSON Schema/],
    ['outputSchema', { $ref: '#/nowhere' }, /outputSchema is not a valid JSON Schema/],
    ['config', [], /config must be an object/],
  ])('refuse %s = %j', (member, value, re) => {
    const d = baseline();
    node(d, 'work')[member] = value as never;
    only(d, 'work', re);
  });

  it('read null optional members as absent', () => {
    const d = baseline();
    Object.assign(node(d, 'work'), { label: null, joinPolicy: null, maxAttempts: null, timeoutSeconds: null, retryBackoff: null, onError: null, position: null });
    node(d, 'work').config = { prompt: 'x', model: null, systemPrompt: null };
    const r = parse(d);
    expect(r.ok && r.graph.nodes[1]!.config).toEqual({ prompt: 'x' });
  });
});

describe('closed per-kind config', () => {
  it('reads a null member as absent, even one the kind does not read', () => {
    valid(kindWith('Agent', { instructions: 'x', agentDefinitionId: null }));
  });

  it('refuses a member the kind does not read', () => {
    only(kindWith('Tool', { toolName: 'echo', instructions: 'x' }), 'work', /config member 'instructions' is not read by Tool nodes/);
    only(kindWith('Parallel', { path: 'a' }), 'work', /config member 'path' is not read by Parallel nodes/);
  });

  it.each([
    ['LlmCall', {}, /config\.prompt is required/],
    ['LlmCall', { prompt: '  ' }, /config\.prompt must not be blank/],
    ['LlmCall', { prompt: 'x', reasoningEffort: 'extreme' }, /reasoningEffort must be one of/],
    ['LlmCall', { prompt: 'x', inputBindings: { doc: 'input.output[0]' } }, /inputBindings 'doc'/],
    ['LlmCall', { prompt: 'x', samplingOptions: { temperature: 'hot' } }, /'temperature' must be a number/],
    ['LlmCall', { prompt: 'x', responseJsonSchema: { type: 'object', required: 'a' } }, /responseJsonSchema is not a valid JSON Schema/],
    ['Agent', {}, /an Agent needs config\.instructions, or a saved agent/],
    ['Agent', { instructions: 'x', maxIterations: 0 }, /maxIterations must be a positive integer/],
    ['Agent', { instructions: 'x', tools: ['rm'] }, /unknown tool 'rm'/],
    ['Agent', { instructions: 'x', tools: ['echo', 'echo'] }, /lists 'echo' twice/],
    ['LlmCall', { prompt: 'x', samplingOptions: { mirostat: 1 } }, /unknown member 'mirostat'/],
    ['Agent', { instructions: 'x', responseJsonSchema: 'object' }, /responseJsonSchema must be a JSON Schema object/],
    ['DecisionModel', { labels: ['a', 'b'] }, /config\.question is required/],
    ['DecisionModel', { question: 'q' }, /config\.labels is required/],
    ['DecisionModel', { question: 'q', labels: ['a'] }, /2–32 labels/],
    ['DecisionModel', { question: 'q', labels: Array.from({ length: 33 }, (_, i) => `l${i}`) }, /2–32 labels/],
    ['DecisionModel', { question: 'q', labels: ['a', 'a'] }, /appears twice/],
    ['DecisionModel', { question: 'q', labels: ['a', 'x'.repeat(65)] }, /longer than 64/],
    ['DecisionModel', { question: 'q', labels: ['a', 'b'], minConfidence: 1.5 }, /minConfidence must be a number in \[0, 1\]/],
    ['Tool', {}, /config\.toolName is required/],
    ['Tool', { toolName: 'format_disk' }, /unknown tool 'format_disk'/],
    ['Tool', { toolName: 'http_fetch' }, /requires a non-empty config\.allowedUrls/],
    ['Tool', { toolName: 'http_fetch', allowedUrls: [] }, /requires a non-empty config\.allowedUrls/],
    ['Tool', { toolName: 'http_fetch', allowedUrls: ['ftp://example.com/'] }, /not an absolute http\(s\) URL/],
    ['Tool', { toolName: 'http_fetch', allowedUrls: ['/relative'] }, /not an absolute http\(s\) URL/],
    ['Tool', { toolName: 'http_fetch', allowedUrls: ['https://example.com/api'], arguments: { url: 'https://example.com/apix' } }, /outside config\.allowedUrls/],
    ['Tool', { toolName: 'echo', allowedUrls: ['https://example.com/'] }, /allowedUrls applies only to tools that require it/],
    ['Tool', { toolName: 'echo', arguments: 'x' }, /arguments must be an object/],
    ['Pause', { allowedDecisions: ['Approve'] }, /config\.prompt is required/],
    ['Pause', { prompt: 'p' }, /config\.allowedDecisions is required/],
    ['Pause', { prompt: 'p', allowedDecisions: ['Approve', 'Approve'] }, /lists 'Approve' twice/],
    ['End', {}, /config\.outcome is required/],
    ['End', { outcome: 'x', resultPath: 'a.*' }, /resultPath/],
    ['Loop', { maxIterations: 3 }, /config\.body is required/],
    ['Loop', { body: 'def-1' }, /config\.maxIterations is required/],
    ['Loop', { body: 'def-1', maxIterations: 1001 }, /from 1 to 1000/],
    ['Loop', { body: 'def-1', maxIterations: 0 }, /from 1 to 1000/],
    ['Loop', { body: 'def-1', maxIterations: 2, exitCondition: { op: 'Eq', value: 1 } }, /exitCondition condition has no path/],
    ['Subworkflow', {}, /config\.definitionId is required/],
    ['Subworkflow', { definitionId: 'd', inputBinding: 'a[1]' }, /inputBinding/],
    ['Subworkflow', { definitionId: 'd', version: 2, alias: 'canary' }, /config\.version and config\.alias cannot be given together/],
    ['Subworkflow', { definitionId: 'd', version: 0 }, /version/],
    ['Subworkflow', { definitionId: 'd', alias: 'no spaces' }, /alias/],
    ['Condition', { path: 'a..b' }, /empty segment/],
    ['Start', { inputSchema: { type: 'objekt' } }, /inputSchema is not a valid JSON Schema/],
  ])('%s %j is refused', (kind, config, re) => {
    const d = kind === 'Start' ? baseline() : kindWith(kind, config as JsonObject);
    if (kind === 'Start') node(d, 'start').config = config as JsonObject;
    if (kind === 'Condition') d.edges.push({ key: 'e3', from: 'work', to: 'done', condition: { op: 'Exists' } });
    if (kind === 'End') {
      node(d, 'done').config = config as JsonObject;
      node(d, 'work').kind = 'Parallel';
      node(d, 'work').config = {};
    }
    const key = kind === 'Start' ? 'start' : kind === 'End' ? 'done' : 'work';
    only(d, key, re);
  });

  it.each([
    ['LlmCall', { prompt: 'x', model: 'm', systemPrompt: '', inputBindings: { q: 'run.input.question' }, reasoningEffort: 'low', responseJsonSchema: { type: 'object' }, samplingOptions: { temperature: 0, stop: ['\n'] } }],
    ['Agent', { instructions: 'x', tools: ['echo', 'read_file'], maxIterations: 4, maxToolCalls: 8, includeUpstreamOutputs: false }],
    ['DecisionModel', { question: 'q', labels: ['yes', 'no'], minConfidence: 0.7, inputBindings: { t: 'input.output.text' } }],
    ['Tool', { toolName: 'http_fetch', allowedUrls: ['https://example.com/api'], arguments: { url: 'https://example.com/api/v1?q=1' } }],
    ['Tool', { toolName: 'http_fetch', allowedUrls: ['https://example.com/api'], arguments: { url: 'https://elsewhere.test/' }, argumentBindings: { url: 'input.output.json.url' } }],
    ['Tool', { toolName: 'json_extract', argumentBindings: { value: 'input.output' }, arguments: { path: 'a.b' } }],
    ['Loop', { body: 'def-1', maxIterations: 1000, exitCondition: { path: 'output.result.done', op: 'eq', value: true }, inputBinding: 'input.output' }],
    ['Subworkflow', { definitionId: 'def-2', inputBinding: 'run.input' }],
    ['Subworkflow', { definitionId: 'def-2', version: 3 }],
    ['Subworkflow', { definitionId: 'def-2', alias: 'canary' }],
  ])('%s %j is accepted', (kind, config) => {
    valid(kindWith(kind, config as JsonObject));
  });

  it('normalises a Loop exitCondition operator', () => {
    const r = parse(kindWith('Loop', { body: 'd', maxIterations: 2, exitCondition: { path: 'output.result.ok', op: 'EXISTS' } }));
    expect(r.ok && r.graph.nodes[1]!.config.exitCondition).toEqual({ path: 'output.result.ok', op: 'Exists', value: null });
  });

  it('refuses publishToChat: true outside a Chat graph and accepts it in one', () => {
    only(kindWith('LlmCall', { prompt: 'x', publishToChat: true }), 'work', /publishToChat: true is refused outside a Chat graph/);
    valid({ ...kindWith('LlmCall', { prompt: 'x', publishToChat: true }), kind: 'Chat' });
    valid(kindWith('LlmCall', { prompt: 'x', publishToChat: false }));
  });

  it('refuses includeAttachments: true unless the Chat graph accepts attachments', () => {
    only({ ...kindWith('Agent', { instructions: 'x', includeAttachments: true }), kind: 'Chat' }, 'work', /includeAttachments/);
    valid({ ...kindWith('Agent', { instructions: 'x', includeAttachments: true }), kind: 'Chat', chat: { acceptsAttachments: true } });
  });
});

describe('config warnings', () => {
  it('warn that an Agent cannot offer a tool that needs allowedUrls', () => {
    const r = parse(kindWith('Agent', { instructions: 'x', tools: ['http_fetch'] }));
    expect(r.ok).toBe(true);
    expect(r.warnings).toEqual([{ key: 'work', message: expect.stringMatching(/'http_fetch' needs an allowedUrls list/) }]);
  });

  it('warn when a Start defaultInput does not satisfy its inputSchema', () => {
    const d = baseline();
    node(d, 'start').config = { inputSchema: { type: 'object', required: ['q'] }, defaultInput: { other: 1 } };
    const r = parse(d);
    expect(r.ok).toBe(true);
    expect(r.warnings).toEqual([{ key: 'start', message: expect.stringMatching(/defaultInput does not satisfy config\.inputSchema/) }]);
  });

  it('warn when a Start defaultInput does not satisfy the graph inputSchema, which a run start checks too', () => {
    const d = { ...baseline(), inputSchema: { type: 'object', required: ['q'] } };
    node(d, 'start').config = { defaultInput: { other: 1 } };
    const r = parse(d);
    expect(r.ok).toBe(true);
    expect(r.warnings).toEqual([{ key: 'start', message: expect.stringMatching(/defaultInput does not satisfy the graph inputSchema .*q/) }]);
    // a default that satisfies it, or no default at all (the caller then brings the input), warns of nothing
    node(d, 'start').config = { defaultInput: { q: 'x' } };
    expect(parse(d).warnings).toEqual([]);
    node(d, 'start').config = {};
    expect(parse(d).warnings).toEqual([]);
  });
});
