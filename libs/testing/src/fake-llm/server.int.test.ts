import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../wait-for';
import { startFakeLlm, type FakeLlmServer } from './server';

const post = (fake: FakeLlmServer, body: unknown, signal?: AbortSignal) =>
  fetch(`${fake.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal });

describe('fake OpenAI-compatible server', () => {
  let fake: FakeLlmServer;
  beforeAll(async () => {
    fake = await startFakeLlm();
  });
  afterAll(async () => {
    await fake.close();
  });

  it('answers queued replies in order, non-streaming, with usage and logprobs', async () => {
    fake.enqueue({ content: 'abcdefgh', logprobs: 'auto' });
    const res = await post(fake, { model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    const json = (await res.json()) as { model: string; choices: { message: { content: string }; logprobs: { content: { token: string }[] }; finish_reason: string }[]; usage: { total_tokens: number } };
    expect(json.model).toBe('m');
    expect(json.choices[0]?.message.content).toBe('abcdefgh');
    expect(json.choices[0]?.logprobs.content.map((t) => t.token)).toEqual(['abcd', 'efgh']);
    expect(json.choices[0]?.finish_reason).toBe('stop');
    expect(json.usage.total_tokens).toBeGreaterThan(0);
    expect(fake.requests.at(-1)?.body.model).toBe('m');
  });

  it('streams Server-Sent Events ending in [DONE], usage only when asked', async () => {
    fake.enqueue({ content: 'hello world', toolCalls: [{ name: 'echo', arguments: { a: 1 } }] });
    const res = await post(fake, { model: 'm', stream: true, stream_options: { include_usage: true }, messages: [] });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const text = await res.text();
    const events = text.split('\n\n').filter(Boolean).map((e) => e.replace(/^data: /, ''));
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e) as { choices: { delta: { content?: string; tool_calls?: { function: { arguments?: string } }[] }; finish_reason: string | null }[]; usage?: unknown });
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('hello world');
    expect(chunks.map((c) => c.choices[0]?.delta.tool_calls?.[0]?.function.arguments ?? '').join('')).toBe('{"a":1}');
    expect(chunks.some((c) => c.choices[0]?.finish_reason === 'tool_calls')).toBe(true);
    expect(chunks.at(-1)?.usage).toBeDefined();
  });

  it('injects HTTP errors with headers', async () => {
    fake.enqueue({ status: 429, headers: { 'retry-after': '3' } });
    const res = await post(fake, { model: 'm', messages: [] });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('3');
  });

  it('hangs until the client aborts, counting in-flight, peak concurrency and aborts', async () => {
    fake.resetCounters();
    fake.enqueue({ hang: true }, { hang: true });
    const controller = new AbortController();
    const calls = [post(fake, { messages: [] }, controller.signal), post(fake, { messages: [] }, controller.signal)].map((p) => p.catch(() => null));
    await waitFor(() => fake.inFlight() === 2, { description: 'two requests in flight' });
    controller.abort();
    await Promise.all(calls);
    await waitFor(() => fake.inFlight() === 0 && fake.abortedCount() === 2, { description: 'both aborted' });
    expect(fake.maxInFlight()).toBe(2);
  });

  it('lists its models on GET /models: the default one, several, none, or 503 while loading', async () => {
    const list = async () => {
      const res = await fetch(`${fake.url}/models`);
      return res.status === 200 ? ((await res.json()) as { data: { id: string }[] }).data.map((m) => m.id) : res.status;
    };
    const before = fake.modelListCount();
    expect(await list()).toEqual(['fake-model']);
    fake.setModels(['a', 'b']);
    expect(await list()).toEqual(['a', 'b']);
    fake.setModels([]);
    expect(await list()).toEqual([]);
    fake.setModels(null);
    expect(await list()).toBe(503);
    fake.setModels(['fake-model']);
    expect(fake.modelListCount()).toBe(before + 4);
    expect(fake.requests.some((r) => r.path.endsWith('/models'))).toBe(false);
  });

  it('listens on a chosen port, so its URL can be handed out before it starts', async () => {
    const probe = await startFakeLlm();
    const port = probe.port;
    await probe.close();
    const late = await startFakeLlm({ port, models: ['late-model'] });
    try {
      expect(late.url).toBe(`http://127.0.0.1:${port}/v1`);
      const res = await fetch(`${late.url}/models`);
      expect(((await res.json()) as { data: { id: string }[] }).data.map((m) => m.id)).toEqual(['late-model']);
    } finally {
      await late.close();
    }
  });
});
