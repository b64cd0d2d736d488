/**
 * An OpenAI-compatible chat-completions provider (llama-server, vLLM, Ollama, OpenAI,
 * gateways) over the official `openai` client. Streams by default (deltas feed the
 * live activity), asks for usage in the stream, forwards `response_format:
 * json_schema`, tools and `logprobs`. The client never retries (the engine's attempt
 * ledger is the only retry budget) and every request carries the invocation's signal.
 */
import OpenAI from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsBase,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { llmFailed, throwIfAborted } from '../errors';
import { mapProviderError } from './error-map';
import type { CompleteOptions, LlmMessage, LlmProvider, LlmRequest, LlmResponse, LlmTokenLogprob, LlmToolCall } from './types';

export interface OpenAiProviderOptions {
  name: string;
  baseUrl: string;
  apiKey?: string | null;
  /** stream completions @default true */
  stream?: boolean;
  /** send `logprobs: true` when a request asks for them @default true */
  logprobs?: boolean;
  /** client-side request timeout, ms @default 600000 */
  timeoutMs?: number;
  /** called with provider error details (status, type, code, request id) — never prompts */
  onErrorDetail?: (invocationId: string | undefined, detail: Record<string, unknown>) => void;
}

function toWire(messages: readonly LlmMessage[]): ChatCompletionMessageParam[] {
  return messages.map((m): ChatCompletionMessageParam => {
    switch (m.role) {
      case 'tool':
        return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
      case 'assistant':
        return {
          role: 'assistant',
          content: m.content,
          ...(m.toolCalls && m.toolCalls.length > 0
            ? { tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } })) }
            : {}),
        };
      case 'user':
        // image attachments travel as image content parts after the text (OpenAI `image_url`)
        return m.images && m.images.length > 0
          ? {
              role: 'user',
              content: [{ type: 'text', text: m.content }, ...m.images.map((i) => ({ type: 'image_url' as const, image_url: { url: i.dataUrl } }))],
            }
          : { role: 'user', content: m.content };
      default:
        return { role: m.role, content: m.content };
    }
  });
}

/** The request body (without `stream`). Exported for unit tests. */
export function buildParams(request: LlmRequest, allowLogprobs: boolean): ChatCompletionCreateParamsBase {
  const s = request.sampling ?? {};
  const params: ChatCompletionCreateParamsBase & Record<string, unknown> = {
    model: request.model,
    messages: toWire(request.messages),
  };
  if (request.tools && request.tools.length > 0) {
    params.tools = request.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } }));
  }
  if (request.responseSchema) {
    params.response_format = {
      type: 'json_schema',
      json_schema: { name: request.responseSchema.name, schema: request.responseSchema.schema, strict: false },
    };
  }
  if (s.temperature !== undefined) params.temperature = s.temperature;
  if (s.topP !== undefined) params.top_p = s.topP;
  if (s.maxOutputTokens !== undefined) params.max_tokens = s.maxOutputTokens;
  if (s.seed !== undefined) params.seed = s.seed;
  if (s.presencePenalty !== undefined) params.presence_penalty = s.presencePenalty;
  if (s.frequencyPenalty !== undefined) params.frequency_penalty = s.frequencyPenalty;
  if (s.stop !== undefined) params.stop = s.stop;
  for (const [k, v] of Object.entries(s.extra ?? {})) params[k] = v;
  if (request.reasoningEffort !== undefined) params.reasoning_effort = request.reasoningEffort as ChatCompletionCreateParamsBase['reasoning_effort'];
  if (request.logprobs && allowLogprobs) {
    params.logprobs = true;
    // the alternatives at each position let a decision report every label's probability
    params.top_logprobs = TOP_LOGPROBS;
  }
  return params;
}

interface DeltaExtras {
  reasoning_content?: string | null;
  reasoning?: string | null;
}

/** Alternatives asked for at each token position when log-probabilities are asked for. */
export const TOP_LOGPROBS = 5;

function tokenOf(t: { token: string; logprob: number; top_logprobs?: Array<{ token: string; logprob: number }> | null }): LlmTokenLogprob {
  const top = t.top_logprobs ?? [];
  return top.length > 0 ? { token: t.token, logprob: t.logprob, top: top.map((a) => ({ token: a.token, logprob: a.logprob })) } : { token: t.token, logprob: t.logprob };
}

/** Creates an OpenAI-compatible provider. */
export function createOpenAiProvider(opts: OpenAiProviderOptions): LlmProvider {
  const client = new OpenAI({
    baseURL: opts.baseUrl,
    // Local servers take no key; the client insists on one.
    apiKey: opts.apiKey ?? 'unused',
    maxRetries: 0,
    timeout: opts.timeoutMs ?? 600_000,
  });
  const streaming = opts.stream ?? true;
  const allowLogprobs = opts.logprobs ?? true;

  async function streamed(params: ChatCompletionCreateParamsBase, options: CompleteOptions, startedAt: number): Promise<LlmResponse> {
    const stream = await client.chat.completions.create(
      { ...params, stream: true, stream_options: { include_usage: true } },
      { signal: options.signal },
    );
    let text = '';
    let reasoning = '';
    const calls: { id: string; name: string; arguments: string }[] = [];
    let logprobs: LlmTokenLogprob[] | null = null;
    let finishReason: string | null = null;
    let model: string | null = null;
    let usage: ChatCompletionChunk['usage'] = null;
    for await (const chunk of stream) {
      model = chunk.model || model;
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices[0];
      if (!choice) continue;
      const delta = choice.delta as ChatCompletionChunk.Choice.Delta & DeltaExtras;
      if (delta.content) {
        text += delta.content;
        options.onDelta?.({ type: 'content', text: delta.content });
      }
      const thought = delta.reasoning_content ?? delta.reasoning;
      if (thought) {
        reasoning += thought;
        options.onDelta?.({ type: 'reasoning', text: thought });
      }
      for (const tc of delta.tool_calls ?? []) {
        const slot = (calls[tc.index] ??= { id: '', name: '', arguments: '' });
        if (tc.id) slot.id = tc.id;
        if (tc.function?.name) slot.name += tc.function.name;
        if (tc.function?.arguments) slot.arguments += tc.function.arguments;
        options.onDelta?.({ type: 'toolCall', text: tc.function?.name ?? '' });
      }
      for (const lp of choice.logprobs?.content ?? []) (logprobs ??= []).push(tokenOf(lp));
      if (choice.finish_reason) finishReason = choice.finish_reason;
    }
    // The client ends an aborted stream quietly: the abort still decides the outcome.
    throwIfAborted(options.signal);
    if (finishReason === null) throw llmFailed('the model stream ended before the answer was complete');
    const toolCalls: LlmToolCall[] = calls.filter(Boolean).map((c, i) => ({ id: c.id || `call_${i + 1}`, name: c.name, arguments: c.arguments }));
    return {
      text,
      reasoning: reasoning || null,
      toolCalls,
      logprobs,
      usage: {
        inputTokens: usage?.prompt_tokens ?? null,
        outputTokens: usage?.completion_tokens ?? null,
        totalTokens: usage?.total_tokens ?? null,
        durationMs: Date.now() - startedAt,
        finishReason,
        model,
        reasoningTokens: usage?.completion_tokens_details?.reasoning_tokens ?? null,
      },
    };
  }

  async function whole(params: ChatCompletionCreateParamsBase, options: CompleteOptions, startedAt: number): Promise<LlmResponse> {
    const completion = await client.chat.completions.create({ ...params, stream: false }, { signal: options.signal });
    const choice = completion.choices[0];
    const message = choice?.message as (OpenAI.ChatCompletionMessage & DeltaExtras) | undefined;
    const text = message?.content ?? '';
    if (text) options.onDelta?.({ type: 'content', text });
    const toolCalls: LlmToolCall[] = (message?.tool_calls ?? []).flatMap((c, i) =>
      c.type === 'function' ? [{ id: c.id || `call_${i + 1}`, name: c.function.name, arguments: c.function.arguments }] : [],
    );
    const lp = choice?.logprobs?.content;
    return {
      text,
      reasoning: message?.reasoning_content ?? message?.reasoning ?? null,
      toolCalls,
      logprobs: lp ? lp.map(tokenOf) : null,
      usage: {
        inputTokens: completion.usage?.prompt_tokens ?? null,
        outputTokens: completion.usage?.completion_tokens ?? null,
        totalTokens: completion.usage?.total_tokens ?? null,
        reasoningTokens: completion.usage?.completion_tokens_details?.reasoning_tokens ?? null,
        durationMs: Date.now() - startedAt,
        finishReason: choice?.finish_reason ?? null,
        model: completion.model || null,
      },
    };
  }

  return {
    name: opts.name,
    async listModels({ timeoutMs }) {
      const page = await client.models.list({ timeout: timeoutMs });
      return page.data.map((m) => m.id).filter((id) => typeof id === 'string' && id.length > 0);
    },
    async complete(request, options) {
      const startedAt = Date.now();
      const params = buildParams(request, allowLogprobs);
      try {
        return streaming ? await streamed(params, options, startedAt) : await whole(params, options, startedAt);
      } catch (error) {
        const mapped = mapProviderError(error, options.signal);
        if (error instanceof OpenAI.APIError) {
          opts.onErrorDetail?.(options.invocationId, {
            provider: opts.name,
            status: error.status ?? null,
            type: error.type ?? null,
            code: error.code ?? null,
            requestId: error.requestID ?? null,
            failureClass: mapped.failureClass,
          });
        }
        throw mapped;
      }
    },
  };
}
