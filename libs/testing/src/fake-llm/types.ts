/** Shapes of the fake OpenAI-compatible server's scripted replies and recorded requests. */

/** One token with its log-probability, as the server reports it in `logprobs.content`. */
export interface FakeToken {
  token: string;
  logprob: number;
  /** the alternatives the server reports at this position (`top_logprobs`) @default none */
  top?: Array<{ token: string; logprob: number }>;
}

/** A scripted tool call; `arguments` objects are serialised to JSON. */
export interface FakeToolCall {
  id?: string;
  name: string;
  arguments: string | Record<string, unknown>;
}

/** A successful completion. */
export interface FakeAnswer {
  content?: string;
  /** sent as `reasoning_content` (llama-server / vLLM style) */
  reasoning?: string;
  toolCalls?: FakeToolCall[];
  /** explicit tokens, or `'auto'`: the content split into 4-character tokens with logprob 0 */
  logprobs?: FakeToken[] | 'auto';
  /** @default "tool_calls" with tool calls, else "stop" */
  finishReason?: string;
  /** null sends no usage; absent derives counts from the lengths */
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number; completion_tokens_details?: { reasoning_tokens: number } } | null;
  /** reported model; @default the request's model */
  model?: string;
  /** wait this long before answering (both modes) */
  delayMs?: number;
  /** characters per streamed content chunk @default 4 */
  chunkSize?: number;
}

/** An HTTP error reply. */
export interface FakeError {
  status: number;
  /** JSON body @default { error: { message: "fake error", type: "fake" } } */
  body?: unknown;
  headers?: Record<string, string>;
}

/** Streams `content` (when streaming), then never finishes until the client goes away. */
export interface FakeHang {
  hang: true;
  content?: string;
}

export type FakeReply = FakeAnswer | FakeError | FakeHang;

/** What the server recorded of one request. */
export interface FakeLlmRequest {
  /** 0-based arrival order */
  index: number;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** the parsed JSON body (`model`, `messages`, `tools`, `response_format`, …) */
  body: Record<string, unknown>;
  stream: boolean;
  /** true once the client closed the connection before the reply finished */
  aborted: boolean;
}

/** Chooses the reply of a request (replaces the queue). */
export type FakeHandler = (request: FakeLlmRequest) => FakeReply | Promise<FakeReply>;
