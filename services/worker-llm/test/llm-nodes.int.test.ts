import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeLaneQueues, createLaneQueues, enqueueWork, publishCancellations, type LaneQueues } from '@flowline/queue';
import { cleanupRedisPrefix, startFakeLlm, testRedisUrl, uniquePrefix, waitFor, type FakeLlmServer, type FakeReply } from '@flowline/testing';
import { createToolRegistry, type ToolDefinition } from '@flowline/tools';
import { readActivity } from '@flowline/queue';
import { createProviderRegistry } from '../src/providers/registry';
import { createLlmWorker, type LlmWorker } from '../src/worker';
import { llmItem, messageText, requestsFor, returnValueOf, scriptByModel } from './helpers';

const prefix = uniquePrefix();
const url = testRedisUrl();
const MAX_INPUT_BYTES = 2_048;

describe('llm worker node semantics (in-process, fake server over HTTP, real Redis)', () => {
  let fake: FakeLlmServer;
  let script: (model: string, ...replies: FakeReply[]) => void;
  let redis: Redis;
  let producer: Redis;
  let queues: LaneQueues;
  let worker: LlmWorker;
  const logLines: string[] = [];

  async function run(item: ReturnType<typeof llmItem>) {
    await enqueueWork(queues, [item]);
    return (await returnValueOf(queues, item.invocationId)).outcome;
  }

  beforeAll(async () => {
    fake = await startFakeLlm();
    script = scriptByModel(fake);
    redis = new Redis(url, { maxRetriesPerRequest: null });
    producer = new Redis(url, { maxRetriesPerRequest: null });
    const logger = pino({ level: 'debug' }, { write: (line: string) => void logLines.push(line) });
    const providers = createProviderRegistry({
      baseUrl: fake.url,
      defaultModel: 'default-model',
      providers: { plain: { baseUrl: fake.url, stream: false } },
      onErrorDetail: (invocationId, detail) => logger.debug({ invocationId, ...detail }, 'model provider error'),
    });
    const keyTool: ToolDefinition = {
      name: 'idem', description: 'answers its idempotency key and node', argumentsSchema: { type: 'object' }, requiresAllowedUrls: false,
      run: (_args, c) => ({ key: c.idempotencyKey, runId: c.runId, nodeKey: c.nodeKey, attempt: c.attempt }),
    };
    const tools = await createToolRegistry({ testTools: true, extraTools: [keyTool] });
    worker = createLlmWorker({ redis, providers, tools, logger, prefix, concurrency: 4, shutdownGraceMs: 1_000, maxInputBytes: MAX_INPUT_BYTES });
    await worker.start();
    queues = createLaneQueues(producer, prefix);
  });

  afterAll(async () => {
    await worker.stop();
    await closeLaneQueues(queues);
    await Promise.all([redis.quit(), producer.quit()]);
    await fake.close();
    await cleanupRedisPrefix(prefix, url);
  });

  it('runs an LlmCall over a streamed completion: system prompt, prompt, usage and live activity', async () => {
    script('m-stream', { content: 'Hello from the model', usage: { prompt_tokens: 11, completion_tokens: 5, total_tokens: 16 } });
    const item = llmItem('LlmCall', { prompt: 'Say hello', systemPrompt: 'Be brief', model: 'm-stream' });
    const outcome = await run(item);
    expect(outcome).toMatchObject({
      ok: true,
      output: { text: 'Hello from the model', json: null, usage: { inputTokens: 11, outputTokens: 5, totalTokens: 16, finishReason: 'stop', model: 'm-stream' } },
    });
    const [request] = requestsFor(fake, 'm-stream');
    expect(request?.stream).toBe(true);
    expect(messageText(request!.body, 'system')).toBe('Be brief');
    expect(messageText(request!.body, 'user')).toBe('Say hello');
    const activity = await readActivity(redis, prefix, item.invocationId);
    const content = activity.filter((e) => e.type === 'content').map((e) => e.text).join('');
    expect(content).toBe('Hello from the model');
    expect(activity.at(-1)).toMatchObject({ type: 'terminal', text: 'succeeded', runId: item.runId, nodeKey: 'llm1' });
    expect(activity.map((e) => e.offset)).toEqual(activity.map((_, i) => i));
    expect(await redis.ttl(`${prefix}:activity:${item.invocationId}`)).toBeGreaterThan(0);
  });

  it('streams reasoning deltas to the activity feed apart from the answer text', async () => {
    script('m-reason', { reasoning: 'pondering the question', content: 'Answer' });
    const item = llmItem('LlmCall', { prompt: 'Think', model: 'm-reason' });
    expect(await run(item)).toMatchObject({ ok: true, output: { text: 'Answer' } });
    const activity = await readActivity(redis, prefix, item.invocationId);
    expect(activity.filter((e) => e.type === 'reasoning').map((e) => e.text).join('')).toBe('pondering the question');
    expect(activity.filter((e) => e.type === 'phase').map((e) => e.text)).toContain('calling default/m-reason');
  });

  it('reports usage.reasoningTokens where the provider does, and none where it does not', async () => {
    script('m-rtok', { content: 'Answer', usage: { prompt_tokens: 10, completion_tokens: 30, total_tokens: 40, completion_tokens_details: { reasoning_tokens: 25 } } });
    expect(await run(llmItem('LlmCall', { prompt: 'Think', model: 'm-rtok' }))).toMatchObject({ ok: true, output: { usage: { outputTokens: 30, reasoningTokens: 25 } } });
    script('m-notok', { content: 'Answer', usage: { prompt_tokens: 10, completion_tokens: 30, total_tokens: 40 } });
    const plain = await run(llmItem('LlmCall', { prompt: 'Think', model: 'm-notok' }));
    expect(plain.ok === true && (plain.output as { usage: Record<string, unknown> }).usage).not.toHaveProperty('reasoningTokens');
  });

  it("keeps an Agent's reasoning with its output, every call's, and sums their reasoning tokens", async () => {
    script(
      'm-agent-reason',
      { reasoning: 'I should look it up.', toolCalls: [{ name: 'echo', arguments: { text: 'x' } }], usage: { prompt_tokens: 5, completion_tokens: 9, total_tokens: 14, completion_tokens_details: { reasoning_tokens: 4 } } },
      { reasoning: 'Now I know.', content: 'Done', usage: { prompt_tokens: 5, completion_tokens: 9, total_tokens: 14, completion_tokens_details: { reasoning_tokens: 6 } } },
    );
    const out = await run(llmItem('Agent', { instructions: 'Find out', model: 'm-agent-reason', tools: ['echo'] }));
    expect(out).toMatchObject({ ok: true, output: { text: 'Done', reasoning: 'I should look it up.\n\nNow I know.', usage: { reasoningTokens: 10 } } });
  });

  it('sends a pinned "<provider>/<model>" to the named provider, here without streaming', async () => {
    script('m-plain', { content: '{"a":1}' });
    const outcome = await run(llmItem('LlmCall', { prompt: 'x', model: 'plain/m-plain' }));
    expect(outcome).toMatchObject({ ok: true, output: { text: '{"a":1}', json: { a: 1 }, usage: { model: 'm-plain' } } });
    expect(requestsFor(fake, 'm-plain')[0]?.stream).toBe(false);
  });

  it('inlines named input bindings as a data block after the prompt', async () => {
    script('m-bind', { content: 'ok' });
    await run(llmItem('LlmCall', { prompt: 'Describe the city', model: 'm-bind', inputBindings: { where: 'run.input.city', prev: 'input.output' } }));
    const user = messageText(requestsFor(fake, 'm-bind')[0]!.body, 'user');
    expect(user.startsWith('Describe the city\n\n## Input data\n```json\n')).toBe(true);
    expect(user).toContain('"where": "Oslo"');
    expect(user).toContain('"prev": {');
  });

  it('fails ValidationFailed before any inference when a binding path resolves to nothing', async () => {
    const outcome = await run(llmItem('LlmCall', { prompt: 'x', model: 'm-missing', inputBindings: { q: 'input.output.nope' } }));
    expect(outcome).toMatchObject({ ok: false, failureClass: 'ValidationFailed' });
    expect(outcome.ok === false && outcome.reason).toContain('input.output.nope');
    expect(requestsFor(fake, 'm-missing')).toHaveLength(0);
  });

  it('ends a steered prompt with a numbered Operator steering section, oldest first', async () => {
    script('m-steer', { content: 'ok' });
    await run(llmItem('LlmCall', { prompt: 'Write a title', model: 'm-steer' }, { steering: ['shorter please', 'in French'] }));
    const user = messageText(requestsFor(fake, 'm-steer')[0]!.body, 'user');
    expect(user.endsWith('\n\n## Operator steering\n1. shorter please\n2. in French')).toBe(true);
  });

  it('accepts a structured answer that parses to an object and validates, sending response_format json_schema', async () => {
    const schema = { type: 'object', properties: { score: { type: 'integer' } }, required: ['score'] };
    script('m-schema-ok', { content: '{"score": 7}' });
    const outcome = await run(llmItem('LlmCall', { prompt: 'Rate', model: 'm-schema-ok', responseJsonSchema: schema }));
    expect(outcome).toMatchObject({ ok: true, output: { json: { score: 7 } } });
    const format = requestsFor(fake, 'm-schema-ok')[0]!.body.response_format as { type: string; json_schema: { schema: unknown } };
    expect(format.type).toBe('json_schema');
    expect(format.json_schema.schema).toEqual(schema);
  });

  it('fails NodeFailed when a structured answer is not an object or breaks the schema, without quoting it', async () => {
    const schema = { type: 'object', properties: { score: { type: 'integer' } }, required: ['score'] };
    script('m-schema-bad', { content: 'not json s3cret', finishReason: 'length' }, { content: '{"score":"high-s3cret"}' });
    const notJson = await run(llmItem('LlmCall', { prompt: 'Rate', model: 'm-schema-bad', responseJsonSchema: schema }));
    const invalid = await run(llmItem('LlmCall', { prompt: 'Rate', model: 'm-schema-bad', responseJsonSchema: schema }));
    expect(notJson).toMatchObject({ ok: false, failureClass: 'NodeFailed' });
    expect(notJson.ok === false && notJson.reason).toContain('finish reason: length');
    expect(invalid).toMatchObject({ ok: false, failureClass: 'NodeFailed' });
    expect(invalid.ok === false && invalid.reason).toContain('/score must be integer');
    expect(JSON.stringify([notJson, invalid])).not.toContain('s3cret');
  });

  it('budgets the Agent upstream map at MAX_RUN_INPUT_BYTES with an explicit truncation marker', async () => {
    script('m-trunc', { content: 'done' });
    const big = 'y'.repeat(MAX_INPUT_BYTES * 2);
    const upstream = { start: { status: 'succeeded' as const, attempt: 1, branch: null, output: { big } } };
    await run(llmItem('Agent', { instructions: 'Summarise', model: 'm-trunc' }, { input: { run: { input: null }, upstream, input: upstream.start } }));
    const user = messageText(requestsFor(fake, 'm-trunc')[0]!.body, 'user');
    expect(user.startsWith('Summarise\n\n## Upstream outputs\n')).toBe(true);
    expect(user).toMatch(/\[truncated: showing the first \d+ of \d+ bytes\]$/);
    expect(Buffer.byteLength(user)).toBeLessThan(MAX_INPUT_BYTES + 200);
  });

  it("shows an Agent of a Chat graph the user's message after the instructions, before the upstream map, whatever includeUpstreamOutputs says", async () => {
    script('m-chat', { content: 'done' });
    const upstream = { route: { status: 'succeeded' as const, attempt: 1, branch: null, output: { choice: 'billing' } } };
    const input = { run: { input: { text: 'Why was I charged twice?', attachments: [{ fileId: 'f1', name: 'invoice.pdf', kind: 'text', bytes: 10 }] } }, upstream, input: upstream.route };
    await run(llmItem('Agent', { instructions: 'Help the customer', model: 'm-chat' }, { input, chat: true }));
    expect(messageText(requestsFor(fake, 'm-chat')[0]!.body, 'user')).toBe(
      'Help the customer\n\n## Conversation request\nWhy was I charged twice?\nAttachments: invoice.pdf\n\n## Upstream outputs\n```json\n' +
        JSON.stringify(upstream, null, 2) +
        '\n```',
    );
    script('m-chat-noup', { content: 'done' });
    await run(llmItem('Agent', { instructions: 'Help', model: 'm-chat-noup', includeUpstreamOutputs: false }, { input, chat: true }));
    expect(messageText(requestsFor(fake, 'm-chat-noup')[0]!.body, 'user')).toBe('Help\n\n## Conversation request\nWhy was I charged twice?\nAttachments: invoice.pdf');
    // the same item of a Standard graph (no chat flag) sends no such section
    script('m-std', { content: 'done' });
    await run(llmItem('Agent', { instructions: 'Help', model: 'm-std', includeUpstreamOutputs: false }, { input }));
    expect(messageText(requestsFor(fake, 'm-std')[0]!.body, 'user')).toBe('Help');
  });

  it('leaves the upstream map out when includeUpstreamOutputs is false', async () => {
    script('m-noup', { content: 'done' });
    await run(llmItem('Agent', { instructions: 'Just answer', model: 'm-noup', includeUpstreamOutputs: false }));
    expect(messageText(requestsFor(fake, 'm-noup')[0]!.body, 'user')).toBe('Just answer');
  });

  it('runs the Agent tool loop over the registry: echo result fed back, calls recorded, final answer validated', async () => {
    const schema = { type: 'object', properties: { requiresReview: { type: 'boolean' } }, required: ['requiresReview'] };
    script(
      'm-agent',
      { toolCalls: [{ id: 'c1', name: 'echo', arguments: { note: 'hi' } }, { id: 'c2', name: 'rm_rf', arguments: {} }] },
      { content: '{"requiresReview": true}' },
    );
    const item = llmItem('Agent', { instructions: 'Check', model: 'm-agent', tools: ['echo'], responseJsonSchema: schema });
    const outcome = await run(item);
    expect(outcome).toMatchObject({
      ok: true,
      output: {
        json: { requiresReview: true },
        toolCalls: [
          { name: 'echo', arguments: { note: 'hi' }, ok: true },
          { name: 'rm_rf', ok: false, error: 'tool rm_rf is not offered' },
        ],
      },
    });
    const [first, second] = requestsFor(fake, 'm-agent');
    expect((first!.body.tools as { function: { name: string } }[]).map((t) => t.function.name)).toEqual(['echo']);
    const toolMessages = (second!.body.messages as { role: string; tool_call_id?: string; content: string }[]).filter((m) => m.role === 'tool');
    expect(toolMessages).toEqual([
      { role: 'tool', tool_call_id: 'c1', content: '{"note":"hi"}' },
      { role: 'tool', tool_call_id: 'c2', content: 'error: this tool is not offered' },
    ]);
    const usage = (outcome.ok === true ? outcome.output : {}) as { usage: { totalTokens: number } };
    expect(usage.usage.totalTokens).toBeGreaterThan(0);
    const activity = await readActivity(redis, prefix, item.invocationId);
    expect(activity.some((e) => e.type === 'toolCall' && e.text === 'echo')).toBe(true);
    expect(activity.filter((e) => e.type === 'phase').map((e) => e.text)).toContain('iteration 2');
  });

  it("hands each Agent tool call the node's idempotency key with the transcript step that records it", async () => {
    script(
      'm-idem',
      { toolCalls: [{ id: 'c1', name: 'idem', arguments: {} }, { id: 'c2', name: 'idem', arguments: {} }] },
      { content: 'done' },
    );
    const item = llmItem('Agent', { instructions: 'Pay twice', model: 'm-idem', tools: ['idem'] }, { nodeKey: 'payer', attempt: 2 });
    expect(await run(item)).toMatchObject({ ok: true });
    const [, second] = requestsFor(fake, 'm-idem');
    const fed = (second!.body.messages as { role: string; content: string }[]).filter((m) => m.role === 'tool').map((m) => JSON.parse(m.content) as unknown);
    expect(fed).toEqual([
      // step 1 is the model's answer; the calls are steps 2 and 3
      { key: `${item.runId}:payer:2`, runId: item.runId, nodeKey: 'payer', attempt: 2 },
      { key: `${item.runId}:payer:3`, runId: item.runId, nodeKey: 'payer', attempt: 2 },
    ]);
  });

  it('offers no tools on the last allowed iteration and fails NodeFailed when the model still only calls tools', async () => {
    script('m-budget', { toolCalls: [{ name: 'echo', arguments: { n: 1 } }] }, { toolCalls: [{ name: 'echo', arguments: { n: 2 } }] });
    const outcome = await run(llmItem('Agent', { instructions: 'Loop', model: 'm-budget', tools: ['echo'], maxIterations: 2 }));
    expect(outcome).toMatchObject({ ok: false, failureClass: 'NodeFailed' });
    const [first, second] = requestsFor(fake, 'm-budget');
    expect(first!.body.tools).toBeDefined();
    expect(second!.body.tools).toBeUndefined();
  });

  it('stops offering tools once maxToolCalls are spent and feeds tool failures back to the model', async () => {
    script(
      'm-calls',
      { toolCalls: [{ id: 'a', name: 'wait', arguments: { ms: 'soon' } }, { id: 'b', name: 'echo', arguments: { k: 1 } }, { id: 'c', name: 'echo', arguments: { k: 2 } }] },
      { content: 'final answer' },
    );
    const outcome = await run(llmItem('Agent', { instructions: 'Go', model: 'm-calls', tools: ['echo', 'wait'], maxToolCalls: 2 }));
    expect(outcome).toMatchObject({
      ok: true,
      output: { text: 'final answer', json: null, toolCalls: [{ name: 'wait', ok: false }, { name: 'echo', arguments: { k: 1 }, ok: true }] },
    });
    const records = (outcome.ok === true ? outcome.output : {}) as { toolCalls: { error?: string }[] };
    expect(records.toolCalls).toHaveLength(2);
    expect(records.toolCalls[0]?.error).toMatch(/invalid arguments/);
    const [, second] = requestsFor(fake, 'm-calls');
    expect(second!.body.tools).toBeUndefined();
    const tools = (second!.body.messages as { role: string; content: string }[]).filter((m) => m.role === 'tool').map((m) => m.content);
    expect(tools[0]).toMatch(/^error: tool wait: invalid arguments/);
    expect(tools[2]).toBe('error: the tool call budget is spent; answer now');
  });

  it('runs a DecisionModel at temperature 0 with an enum schema and takes confidence from logprobs', async () => {
    script('m-dec', {
      content: '{"choice":"yes"}',
      logprobs: [
        { token: '{"choice":"', logprob: 0 },
        { token: 'yes', logprob: Math.log(0.9) },
        { token: '"}', logprob: 0 },
      ],
    });
    const outcome = await run(llmItem('DecisionModel', { question: 'Ship it?', labels: ['yes', 'no'], model: 'm-dec' }));
    expect(outcome).toMatchObject({ ok: true, output: { choice: 'yes', held: false, provider: 'llm' } });
    const output = (outcome.ok === true ? outcome.output : {}) as { confidence: number };
    expect(output.confidence).toBeCloseTo(0.9, 6);
    const body = requestsFor(fake, 'm-dec')[0]!.body;
    expect(body.temperature).toBe(0);
    expect(body.logprobs).toBe(true);
    expect(body.top_logprobs).toBe(5);
    // the provider reported no alternatives: no per-label probabilities
    expect(output).not.toHaveProperty('probabilities');
    expect((body.response_format as { json_schema: { schema: unknown } }).json_schema.schema).toMatchObject({
      properties: { choice: { type: 'string', enum: ['yes', 'no'] } },
      required: ['choice'],
    });
  });

  it("reports every label's probability from the alternatives the provider gives where the choice begins", async () => {
    script('m-dec-top', {
      content: '{"choice":"no"}',
      logprobs: [
        { token: '{"choice":"', logprob: 0 },
        { token: 'no', logprob: Math.log(0.55), top: [{ token: 'no', logprob: Math.log(0.55) }, { token: 'yes', logprob: Math.log(0.4) }] },
        { token: '"}', logprob: 0 },
      ],
    });
    const outcome = await run(llmItem('DecisionModel', { question: 'Ship it?', labels: ['yes', 'no', 'later'], model: 'm-dec-top' }));
    const output = (outcome.ok === true ? outcome.output : {}) as { probabilities: Record<string, number> };
    expect(output.probabilities.no).toBeCloseTo(0.55, 6);
    expect(output.probabilities.yes).toBeCloseTo(0.4, 6);
    expect(output.probabilities.later).toBe(0);
  });

  it('holds a decision below minConfidence, and one without confidence while minConfidence is set', async () => {
    script(
      'm-held',
      { content: '{"choice":"no"}', logprobs: [{ token: '{"choice":"', logprob: 0 }, { token: 'no', logprob: Math.log(0.6) }, { token: '"}', logprob: 0 }] },
      { content: '{"choice":"no"}' },
      { content: '{"choice":"no"}' },
    );
    const low = await run(llmItem('DecisionModel', { question: 'q', labels: ['yes', 'no'], model: 'm-held', minConfidence: 0.8 }));
    const none = await run(llmItem('DecisionModel', { question: 'q', labels: ['yes', 'no'], model: 'm-held', minConfidence: 0.8 }));
    const unset = await run(llmItem('DecisionModel', { question: 'q', labels: ['yes', 'no'], model: 'm-held' }));
    expect(low).toMatchObject({ ok: true, output: { choice: 'no', held: true } });
    expect(none).toMatchObject({ ok: true, output: { choice: 'no', confidence: null, held: true } });
    expect(unset).toMatchObject({ ok: true, output: { choice: 'no', confidence: null, held: false } });
  });

  it('fails a DecisionModel attempt NodeFailed when the answer is outside the labels, without quoting it', async () => {
    script('m-label', { content: '{"choice":"perhaps-s3cret"}', usage: { prompt_tokens: 11, completion_tokens: 4, total_tokens: 15 } });
    const outcome = await run(llmItem('DecisionModel', { question: 'q', labels: ['yes', 'no'], model: 'm-label' }));
    expect(outcome).toMatchObject({ ok: false, failureClass: 'NodeFailed' });
    // the tokens the refused answer cost travel with the failure: run budgets count them (issue #16)
    expect(outcome.ok === false && outcome.usage).toMatchObject({ inputTokens: 11, outputTokens: 4, totalTokens: 15 });
    expect(outcome.ok === false && typeof outcome.usage?.['model']).toBe('string');
    expect(JSON.stringify(outcome)).not.toContain('s3cret');
  });

  it('maps provider errors: 500 and 429 NodeFailed, 400 ValidationFailed, never echoing provider text', async () => {
    const body = { error: { message: 'provider-s3cret echo of the prompt' } };
    script('m-500', { status: 500, body });
    script('m-429', { status: 429, body, headers: { 'retry-after': '2' } });
    script('m-400', { status: 400, body });
    const e500 = await run(llmItem('LlmCall', { prompt: 'x', model: 'm-500' }));
    const e429 = await run(llmItem('LlmCall', { prompt: 'x', model: 'm-429' }));
    const e400 = await run(llmItem('LlmCall', { prompt: 'x', model: 'm-400' }));
    expect(e500).toMatchObject({ ok: false, failureClass: 'NodeFailed', reason: 'the model provider failed (HTTP 500)' });
    expect(e429).toMatchObject({ ok: false, failureClass: 'NodeFailed', reason: 'the model provider is rate limiting (HTTP 429)' });
    expect(e400).toMatchObject({ ok: false, failureClass: 'ValidationFailed', reason: 'the model provider refused the request (HTTP 400)' });
    // no answer, nothing spent: no usage with the failure
    expect([e500, e429, e400].map((o) => 'usage' in o)).toEqual([false, false, false]);
    // the 429's retry-after cools the provider/model down for every replica
    expect(await redis.pttl(`${prefix}:llm:cool:default/m-429`)).toBeGreaterThan(0);
    const logs = await waitFor(() => {
      const mine = logLines.filter((l) => l.includes('model provider error'));
      return mine.length >= 3 ? mine : null;
    });
    expect(logs.some((l) => l.includes('"status":429'))).toBe(true);
  });

  it('fails CapacityRejected, not retryable, when the provider cannot load the model for lack of memory', async () => {
    const said = 'model requires more system memory (12.4 GiB) than is available (3.1 GiB)';
    script('m-oom', { status: 500, body: { error: { message: said } } });
    const out = await run(llmItem('LlmCall', { prompt: 'x', model: 'm-oom' }));
    expect(out).toMatchObject({
      ok: false,
      failureClass: 'CapacityRejected',
      reason: 'the model provider cannot load the model for lack of capacity (HTTP 500): free capacity or pin another model',
    });
    expect(JSON.stringify(out)).not.toContain('12.4 GiB');
  });

  it('waits out a provider cool-down without calling the provider, visible in job progress and activity', async () => {
    script('m-wait', { content: 'after the wait' });
    await redis.set(`${prefix}:llm:cool:default/m-wait`, '1', 'PX', 60_000);
    const item = llmItem('LlmCall', { prompt: 'x', model: 'm-wait' });
    await enqueueWork(queues, [item]);
    await waitFor(async () => ((await queues.llm.getJob(item.invocationId))?.progress as { phase?: string })?.phase === 'waiting-for-capacity', {
      description: 'job progress says it waits for capacity',
    });
    expect(requestsFor(fake, 'm-wait')).toHaveLength(0);
    await waitFor(async () => (await readActivity(redis, prefix, item.invocationId)).some((e) => e.text === 'waiting for provider capacity'), {
      description: 'the activity feed shows the wait',
    });
    await redis.del(`${prefix}:llm:cool:default/m-wait`);
    expect((await returnValueOf(queues, item.invocationId)).outcome).toMatchObject({ ok: true, output: { text: 'after the wait' } });
    expect((await queues.llm.getJob(item.invocationId))?.progress).toEqual({ phase: 'admitted', provider: 'default/m-wait', at: expect.any(Number) });
  });

  it('reports admission as job progress even when no wait was needed, once per job', async () => {
    script('m-now', { content: 'at once' });
    const item = llmItem('LlmCall', { prompt: 'x', model: 'm-now' });
    await enqueueWork(queues, [item]);
    const ret = await returnValueOf(queues, item.invocationId);
    expect(ret.outcome).toMatchObject({ ok: true });
    const progress = (await queues.llm.getJob(item.invocationId))?.progress as { phase: string; at: number };
    expect(progress).toMatchObject({ phase: 'admitted', provider: 'default/m-now' });
    // the node started at its admission: the outcome says so too
    expect(ret.outcome.startedAt).toBe(progress.at);
    expect(progress.at).toBeLessThanOrEqual(ret.outcome.finishedAt);
  });

  it('fails Timeout when the deadline passes while the provider hangs, aborting the request', async () => {
    script('m-hang', { hang: true, content: 'par' });
    const before = fake.abortedCount();
    const outcome = await run(llmItem('LlmCall', { prompt: 'x', model: 'm-hang' }, { deadlineAt: Date.now() + 500 }));
    expect(outcome).toMatchObject({ ok: false, failureClass: 'Timeout' });
    await waitFor(() => fake.abortedCount() > before, { description: 'the fake saw the request aborted' });
  });

  it('aborts the HTTP request mid-stream on a cancel message and reports Cancelled', async () => {
    script('m-cancel', { hang: true, content: 'partial' });
    const item = llmItem('LlmCall', { prompt: 'x', model: 'm-cancel' });
    await enqueueWork(queues, [item]);
    await waitFor(() => requestsFor(fake, 'm-cancel').length === 1 && fake.inFlight() > 0, { description: 'request in flight' });
    await waitFor(async () => (await readActivity(redis, prefix, item.invocationId)).some((e) => e.type === 'content' && e.text === 'partial'), {
      description: 'the partial content streamed',
    });
    await publishCancellations(producer, [{ invocationId: item.invocationId, reason: 'steered' }], prefix);
    const { outcome } = await returnValueOf(queues, item.invocationId);
    expect(outcome).toMatchObject({ ok: false, failureClass: 'Cancelled', reason: 'the invocation was cancelled: steered' });
    await waitFor(() => requestsFor(fake, 'm-cancel')[0]?.aborted === true, { description: 'the fake saw the request aborted' });
  });

  it('logs ids and provider error details but never prompts or documents', async () => {
    script('m-logs', { content: 'fine' });
    const item = llmItem('LlmCall', { prompt: 'prompt-s3cret', model: 'm-logs' }, { input: { run: { input: 'doc-s3cret' }, upstream: {}, input: null } });
    await run(item);
    await waitFor(() => logLines.some((l) => l.includes(item.invocationId) && l.includes('llm invocation finished')));
    expect(logLines.join('\n')).not.toMatch(/s3cret/);
  });
});
