/**
 * Templates through a whole cluster (API, dispatcher, tool and LLM workers, a fake
 * OpenAI-compatible provider over HTTP): a Tool's argument that is one placeholder receives
 * the array it names, an LlmCall's prompt and system prompt reach the provider rendered, an
 * End's outputTemplate gives the run its output, and a template naming a missing value fails
 * its node ValidationFailed, named by its member, without calling the model.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { nodeOf, startE2eCluster, startFakeLlm, type E2eCluster, type FakeLlmServer } from '@flowline/testing';

const graph = {
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 'x', kind: 'Tool', config: { toolName: 'echo', arguments: { ids: [7, 8, 9] } } },
    { key: 'fetch', kind: 'Tool', config: { toolName: 'echo', arguments: { ids: '{{ upstream.x.output.result.ids }}', label: 'for {{ run.input.topic }}' } } },
    {
      key: 'summarise',
      kind: 'LlmCall',
      config: {
        systemPrompt: 'You write for {{ run.input.audience }}.',
        prompt: 'Summarise {{ input.output.result.ids | size }} items about {{ run.input.topic }}: {{ input.output.result.ids }} ({{ input.output.result.label }})',
      },
    },
    { key: 'end', kind: 'End', config: { outcome: 'done', outputTemplate: { summary: '{{ input.output.text }}', topic: '{{ run.input.topic }}' } } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 'x' },
    { key: 'e2', from: 'x', to: 'fetch' },
    { key: 'e3', from: 'fetch', to: 'summarise' },
    { key: 'e4', from: 'summarise', to: 'end' },
  ],
};

type Message = { role: string; content: unknown };
const messagesOf = (body: Record<string, unknown>) => body.messages as Message[];

describe('templates on a whole cluster', () => {
  let c: E2eCluster;
  let llm: FakeLlmServer;

  beforeAll(async () => {
    llm = await startFakeLlm({ handler: () => ({ content: 'Three tidal readings.' }) });
    c = await startE2eCluster({ dispatchers: 1, toolWorkers: 1, llmWorkers: 1, env: { LLM_BASE_URL: `${llm.url}/v1`, LLM_MODEL: 'fake-model', LLM_STREAM: '0' } });
  }, 90_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') process.stdout.write(`${c.lines.slice(-60).join('\n')}\n`);
  });

  afterAll(async () => {
    await c?.close();
    await llm?.close();
  });

  it('hands a Tool the array a lone placeholder names, the provider the rendered prompts, and the run the rendered End output', async () => {
    const definitionId = await c.api.createDefinition('templates', graph);
    const runId = await c.api.startRun(definitionId, { topic: 'tides', audience: 'sailors' });
    const view = await c.api.waitForRun(runId, (v) => ['Completed', 'Failed'].includes(v.run.status), 60_000, 'run ended');
    expect(view.run.status).toBe('Completed');

    const fetch = await c.api.send('GET', `/v1/runs/${runId}/nodes/fetch`);
    expect(fetch.body.output.output).toEqual({ result: { ids: [7, 8, 9], label: 'for tides' } });

    const request = llm.requests.find((r) => messagesOf(r.body).some((m) => m.role === 'system' && m.content === 'You write for sailors.'));
    expect(request).toBeDefined();
    const user = messagesOf(request!.body).find((m) => m.role === 'user');
    expect(user?.content).toBe('Summarise 3 items about tides: [7,8,9] (for tides)');

    expect(view.output).toEqual({ outcome: 'done', result: { summary: 'Three tidal readings.', topic: 'tides' } });
  });

  it('fails a node whose template names a missing value ValidationFailed, naming the member, without calling the model', async () => {
    const broken = structuredClone(graph);
    broken.nodes[3]!.config = { prompt: 'About {{ run.input.missing }}' } as never;
    const definitionId = await c.api.createDefinition('templates-missing', broken);
    const before = llm.requests.length;
    const runId = await c.api.startRun(definitionId, { topic: 'tides' });
    const view = await c.api.waitForRun(runId, (v) => ['Completed', 'Failed'].includes(v.run.status), 60_000, 'run ended');
    expect(view.run.status).toBe('Failed');
    expect(nodeOf(view, 'summarise')).toMatchObject({ status: 'Failed', failureClass: 'ValidationFailed', attempt: 1 });
    expect(nodeOf(view, 'summarise')!.reason).toMatch(/^nodes\.summarise\.config\.prompt: undefined variable: run\.input\.missing/);
    expect(llm.requests.length).toBe(before);
  });

  it('refuses a definition whose template names an unknown root, keyed to the node', async () => {
    const bad = structuredClone(graph);
    bad.nodes[3]!.config = { prompt: 'About {{ inputs.topic }}' } as never;
    const r = await c.api.send('POST', '/v1/definitions', { name: 'bad-template', graph: bad });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('GraphInvalid');
    expect(r.body.error.details).toContainEqual({ key: 'summarise', message: expect.stringMatching(/^nodes\.summarise\.config\.prompt: template refers to 'inputs'/) });
  });

  it("hands a Subworkflow's child run the input its inputTemplate renders", async () => {
    const child = await c.api.createDefinition('templates-child', {
      nodes: [
        { key: 'start', kind: 'Start' },
        { key: 'end', kind: 'End', config: { outcome: 'child', resultPath: 'run.input' } },
      ],
      edges: [{ key: 'e1', from: 'start', to: 'end' }],
    });
    const parent = await c.api.createDefinition('templates-parent', {
      nodes: [
        { key: 'start', kind: 'Start' },
        { key: 'sub', kind: 'Subworkflow', config: { definitionId: child, inputTemplate: { about: 'the {{ run.input.topic }}', ids: '{{ run.input.ids }}' } } },
        { key: 'end', kind: 'End', config: { outcome: 'done', resultPath: 'input.output.result' } },
      ],
      edges: [
        { key: 'e1', from: 'start', to: 'sub' },
        { key: 'e2', from: 'sub', to: 'end' },
      ],
    });
    const runId = await c.api.startRun(parent, { topic: 'tides', ids: [4, 5] });
    const view = await c.api.waitForRun(runId, (v) => ['Completed', 'Failed'].includes(v.run.status), 60_000, 'run ended');
    expect(view.run.status).toBe('Completed');
    expect(view.output).toEqual({ outcome: 'done', result: { about: 'the tides', ids: [4, 5] } });
  });
});
