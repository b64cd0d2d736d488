/** The provider seam: one chat-completion call, provider-neutral. */
import type { JsonObject } from '@flowline/graph';

/** A tool call the model asked for. `arguments` is the raw JSON text the model wrote. */
export interface LlmToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** An image sent with a user message (an image attachment): a `data:` URL of its bytes. */
export interface LlmImage {
  dataUrl: string;
}

/** A chat message (OpenAI chat shape, the subset the lane sends). */
export type LlmMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string; images?: LlmImage[] }
  | { role: 'assistant'; content: string | null; toolCalls?: LlmToolCall[] }
  | { role: 'tool'; toolCallId: string; content: string };

/** A function the model may call. */
export interface LlmToolSpec {
  name: string;
  description: string;
  parameters: JsonObject;
}

/** Sampling members of CONTRACT §2 `samplingOptions` the lane forwards. */
export interface LlmSampling {
  temperature?: number;
  topP?: number;
  maxOutputTokens?: number;
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  stop?: string | string[];
  /** non-OpenAI members (topK, minP, …) sent as-is for servers that read them */
  extra?: Record<string, number>;
}

export interface LlmRequest {
  /** the model name at the provider (already resolved from the node pin or LLM_MODEL) */
  model: string;
  messages: LlmMessage[];
  tools?: LlmToolSpec[];
  /** `response_format: json_schema` */
  responseSchema?: { name: string; schema: JsonObject };
  sampling?: LlmSampling;
  reasoningEffort?: string;
  /** ask for token log-probabilities (ignored by providers that do not offer them) */
  logprobs?: boolean;
}

/** Usage as CONTRACT §2 reports it; every member nullable. */
export interface LlmUsage {
  inputTokens: number | null;
  outputTokens: number | null;
  totalTokens: number | null;
  durationMs: number | null;
  finishReason: string | null;
  model: string | null;
  /** tokens spent reasoning, where the provider reports them (`completion_tokens_details.reasoning_tokens`) */
  reasoningTokens?: number | null;
}

export interface LlmTokenLogprob {
  token: string;
  logprob: number;
  /** the most likely tokens at this position, when the provider reported them (`top_logprobs`) */
  top?: Array<{ token: string; logprob: number }>;
}

export interface LlmResponse {
  text: string;
  reasoning: string | null;
  toolCalls: LlmToolCall[];
  /** null when the provider returned none */
  logprobs: LlmTokenLogprob[] | null;
  usage: LlmUsage;
}

/** A streamed piece of a completion (the live activity feed). */
export type LlmDelta =
  | { type: 'content'; text: string }
  | { type: 'reasoning'; text: string }
  | { type: 'toolCall'; text: string };

export interface CompleteOptions {
  /** aborts the HTTP request (deadline, cancellation, shutdown) */
  signal: AbortSignal;
  onDelta?: (delta: LlmDelta) => void;
  /** correlation id for logs */
  invocationId?: string;
}

/** One model endpoint. */
export interface LlmProvider {
  /** the provider's name in LLM_PROVIDERS (`default` for LLM_BASE_URL, `scripted` for the built-in) */
  readonly name: string;
  /**
   * One chat completion.
   * @throws LlmError with the failure class of the provider's error (CONTRACT §4)
   */
  complete(request: LlmRequest, options: CompleteOptions): Promise<LlmResponse>;
  /**
   * The ids of the models the endpoint serves (`GET /models`); absent on providers that
   * have no such list.
   * @throws when the endpoint does not answer (or answers an error) within `timeoutMs`
   */
  listModels?(options: { timeoutMs: number }): Promise<string[]>;
}
