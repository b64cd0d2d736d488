/**
 * A fake OpenAI-compatible chat-completions server for tests over real HTTP
 * (node:http on 127.0.0.1, port 0). `POST /v1/chat/completions` answers from a
 * queue of scripted replies (or a handler), streaming as Server-Sent Events when
 * the request says `stream: true`; errors, retry-after and hangs are injectable.
 * `GET /v1/models` lists the models it was given (none, one or several; or 503 while
 * `models` is null). It records every completion request and counts in-flight requests
 * and the most seen at once. With `port` it listens on a chosen port, so a test can hand
 * that URL to a worker before the server starts.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FakeAnswer, FakeHandler, FakeLlmRequest, FakeReply, FakeToken } from './types';

export interface FakeLlmServer {
  /** base URL for an OpenAI client, ending in `/v1` */
  readonly url: string;
  readonly port: number;
  /** appends replies, consumed one per request in order */
  enqueue(...replies: FakeReply[]): void;
  /** answers every request with `handler` (queued replies are ignored while set); null restores the queue */
  setHandler(handler: FakeHandler | null): void;
  /** every chat-completion request received so far */
  readonly requests: FakeLlmRequest[];
  /** what `GET /models` lists from now on; null answers 503 (a server still loading) */
  setModels(models: string[] | null): void;
  /** `GET /models` requests received so far */
  modelListCount(): number;
  /** requests whose reply has not finished */
  inFlight(): number;
  /** the most requests in flight at once since start (or {@link resetCounters}) */
  maxInFlight(): number;
  /** requests whose client went away before the reply finished */
  abortedCount(): number;
  resetCounters(): void;
  close(): Promise<void>;
}

export interface FakeLlmOptions {
  handler?: FakeHandler;
  replies?: FakeReply[];
  /** reply when the queue is empty @default { content: "ok" } */
  fallback?: FakeReply;
  /** model ids `GET /models` lists; null answers 503 @default ["fake-model"] */
  models?: string[] | null;
  /** port to listen on (127.0.0.1) @default 0, any free port */
  port?: number;
}

const isError = (r: FakeReply): r is Extract<FakeReply, { status: number }> => 'status' in r;
const isHang = (r: FakeReply): r is Extract<FakeReply, { hang: true }> => 'hang' in r;

function sleep(ms: number, closed: Promise<void>): Promise<void> {
  return Promise.race([new Promise<void>((r) => setTimeout(r, ms)), closed]);
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  const value: unknown = text ? JSON.parse(text) : {};
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function tokensOf(answer: FakeAnswer): FakeToken[] | null {
  if (answer.logprobs === undefined) return null;
  if (answer.logprobs !== 'auto') return answer.logprobs;
  const text = answer.content ?? '';
  const out: FakeToken[] = [];
  for (let i = 0; i < text.length; i += 4) out.push({ token: text.slice(i, i + 4), logprob: 0 });
  return out;
}

const wireToken = (t: FakeToken) => ({
  token: t.token,
  logprob: t.logprob,
  bytes: null,
  top_logprobs: (t.top ?? []).map((a) => ({ token: a.token, logprob: a.logprob, bytes: null })),
});

function usageOf(answer: FakeAnswer, body: Record<string, unknown>) {
  if (answer.usage !== undefined) return answer.usage;
  const prompt = Math.ceil(JSON.stringify(body.messages ?? []).length / 4);
  const completion = Math.ceil((answer.content ?? '').length / 4) + (answer.toolCalls?.length ?? 0) * 8;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

function wireToolCalls(answer: FakeAnswer) {
  return (answer.toolCalls ?? []).map((c, i) => ({
    id: c.id ?? `call_${i + 1}`,
    type: 'function' as const,
    function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) },
  }));
}

/** Starts the fake server; close it in `afterAll`. */
export async function startFakeLlm(options: FakeLlmOptions = {}): Promise<FakeLlmServer> {
  const queue: FakeReply[] = [...(options.replies ?? [])];
  let handler: FakeHandler | null = options.handler ?? null;
  const fallback: FakeReply = options.fallback ?? { content: 'ok' };
  const requests: FakeLlmRequest[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let aborted = 0;
  let completionId = 0;
  let models: string[] | null = options.models === undefined ? ['fake-model'] : options.models;
  let modelLists = 0;

  function listModels(res: ServerResponse) {
    modelLists++;
    if (models === null) {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'loading model', type: 'unavailable_error' } }));
      return;
    }
    const data = models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'fake' }));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ object: 'list', data }));
  }

  async function answer(res: ServerResponse, record: FakeLlmRequest, reply: FakeReply, closed: Promise<void>) {
    const model = typeof record.body.model === 'string' ? record.body.model : 'fake-model';
    if (isError(reply)) {
      res.writeHead(reply.status, { 'content-type': 'application/json', ...(reply.headers ?? {}) });
      res.end(JSON.stringify(reply.body ?? { error: { message: 'fake error', type: 'fake' } }));
      return;
    }
    const id = `chatcmpl-fake-${++completionId}`;
    const created = Math.floor(Date.now() / 1000);
    if (isHang(reply)) {
      if (record.stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        const delta = { role: 'assistant', content: reply.content ?? '' };
        res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`);
      }
      await closed;
      return;
    }
    if (reply.delayMs) await sleep(reply.delayMs, closed);
    if (record.aborted) return;
    const usage = usageOf(reply, record.body);
    const tokens = tokensOf(reply);
    const toolCalls = wireToolCalls(reply);
    const finishReason = reply.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop');
    const replyModel = reply.model ?? model;
    if (!record.stream) {
      const message: Record<string, unknown> = { role: 'assistant', content: reply.content ?? null };
      if (reply.reasoning !== undefined) message.reasoning_content = reply.reasoning;
      if (toolCalls.length > 0) message.tool_calls = toolCalls;
      const choice = { index: 0, message, logprobs: tokens ? { content: tokens.map(wireToken) } : null, finish_reason: finishReason };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id, object: 'chat.completion', created, model: replyModel, choices: [choice], ...(usage ? { usage } : {}) }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const send = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: replyModel, choices, ...extra })}\n\n`);
    send([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
    if (reply.reasoning) send([{ index: 0, delta: { reasoning_content: reply.reasoning }, finish_reason: null }]);
    if (tokens) {
      for (const t of tokens) send([{ index: 0, delta: { content: t.token }, logprobs: { content: [wireToken(t)] }, finish_reason: null }]);
    } else {
      const content = reply.content ?? '';
      const size = Math.max(1, reply.chunkSize ?? 4);
      for (let i = 0; i < content.length; i += size) {
        send([{ index: 0, delta: { content: content.slice(i, i + size) }, finish_reason: null }]);
      }
    }
    toolCalls.forEach((call, index) => {
      const args = call.function.arguments;
      const half = Math.ceil(args.length / 2);
      send([{ index: 0, delta: { tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: args.slice(0, half) } }] }, finish_reason: null }]);
      send([{ index: 0, delta: { tool_calls: [{ index, function: { arguments: args.slice(half) } }] }, finish_reason: null }]);
    });
    send([{ index: 0, delta: {}, finish_reason: finishReason }]);
    const streamOptions = record.body.stream_options as { include_usage?: boolean } | undefined;
    if (usage && streamOptions?.include_usage) send([], { usage });
    res.end('data: [DONE]\n\n');
  }

  const server = createServer((req, res) => {
    void (async () => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      let record: FakeLlmRequest | null = null;
      let finish!: () => void;
      const closed = new Promise<void>((resolve) => (finish = resolve));
      res.on('close', () => {
        if (record && !res.writableFinished) {
          record.aborted = true;
          aborted++;
        }
        finish();
      });
      try {
        const path = (req.url ?? '/').split('?')[0] ?? '/';
        if (req.method === 'GET' && path.endsWith('/models')) {
          listModels(res);
          return;
        }
        if (req.method !== 'POST' || !path.endsWith('/chat/completions')) {
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: 'not found' } }));
          return;
        }
        const body = await readBody(req);
        record = { index: requests.length, path, headers: req.headers, body, stream: body.stream === true, aborted: false };
        requests.push(record);
        const reply = handler ? await handler(record) : (queue.shift() ?? fallback);
        await answer(res, record, reply, closed);
      } catch (err) {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `fake server error: ${String(err)}` } }));
      } finally {
        inFlight--;
      }
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    enqueue: (...replies) => void queue.push(...replies),
    setHandler: (h) => void (handler = h),
    requests,
    setModels: (list) => void (models = list === null ? null : [...list]),
    modelListCount: () => modelLists,
    inFlight: () => inFlight,
    maxInFlight: () => maxInFlight,
    abortedCount: () => aborted,
    resetCounters: () => {
      maxInFlight = inFlight;
      aborted = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
