/**
 * worker-llm configuration: the shared option shapes of CONTRACT §7 plus the LLM
 * lane's own, parsed once in main.ts. LLM_PROVIDERS is JSON:
 * `{ "<name>": { "baseUrl", "apiKey"?, "model"?, "maxConcurrentCalls"?, "tokensPerMinute"?, "stream"?, "logprobs"?, "vision"? } }`;
 * a node pins one with `model: "<name>/<model>"`.
 */
import { z } from 'zod';
import { connectionOptions, coreOptions, defineConfig, flagOption, laneWorkerOptions, toolModulesOf, workerOptions } from '@flowline/runtime';
import { DEFAULT_MAX_ATTACHMENT_TEXT_BYTES } from './attachments';
import { DEFAULT_MAX_AGENT_TRANSCRIPT_BYTES } from './nodes/agent-transcript';
import { providerMapSchema, type ProviderEntry } from './providers/registry';

type ProviderMap = Record<string, ProviderEntry>;


/**
 * LLM_PROVIDERS may hold API keys: it is read as raw text and parsed after the shape,
 * so an invalid value is reported by member path, never echoed.
 */
const providersRaw = z.string().optional().describe('named OpenAI-compatible endpoints as JSON (secret: may hold API keys)');

function parseProviders(raw: string | undefined): { ok: true; value: ProviderMap | undefined } | { ok: false; where: string } {
  if (raw === undefined) return { ok: true, value: undefined };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { ok: false, where: '(not JSON)' };
  }
  const parsed = providerMapSchema.safeParse(value);
  if (parsed.success) return { ok: true, value: parsed.data };
  return { ok: false, where: [...new Set(parsed.error.issues.map((i) => i.path.map(String).join('.') || '(root)'))].join(', ') };
}

/** A size limit in bytes, at least 1 and at most `max`. */
function bytesOption(max: number, dflt: number, description: string) {
  return z.coerce.number().int().min(1).max(max).default(dflt).describe(description);
}

/** Options only the LLM worker reads. */
export const llmWorkerOwnOptions = {
  QUEUE_PREFIX: z.string().min(1).default('{flowline}').describe('BullMQ key prefix shared by dispatchers and workers'),
  LANE_CONCURRENCY: workerOptions.LANE_CONCURRENCY,
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(10_000).describe('on SIGTERM, how long in-flight calls may finish before they are interrupted, ms'),
  LLM_PROVIDERS: providersRaw,
  LLM_MAX_CONCURRENT_CALLS: z.coerce.number().int().min(0).default(0).describe('concurrent calls per provider/model across all replicas; 0 = unlimited'),
  LLM_TOKENS_PER_MINUTE: z.coerce.number().int().min(0).default(0).describe('tokens per minute per provider/model across all replicas; 0 = unlimited'),
  LLM_STREAM: flagOption('1 streams completions (token deltas feed the live activity)', '1'),
  LLM_LOGPROBS: flagOption('1 asks the default provider for token log-probabilities (DecisionModel confidence); 0 for servers that refuse them', '1'),
  LLM_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(1).default(600_000).describe('client-side timeout of one model request, ms'),
  LLM_MODELS_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(5_000).describe('LLM_MODEL unset: timeout of one GET /models of the default provider, ms'),
  LLM_MODELS_RETRY_MIN_MS: z.coerce.number().int().min(10).max(3_600_000).default(1_000).describe('LLM_MODEL unset: first retry of GET /models while the provider does not answer or lists no model, ms (doubles per try)'),
  LLM_MODELS_RETRY_MAX_MS: z.coerce.number().int().min(10).max(3_600_000).default(30_000).describe('LLM_MODEL unset: longest wait between GET /models retries, ms (≥ LLM_MODELS_RETRY_MIN_MS)'),
  LLM_ADMISSION_LEASE_MS: z.coerce.number().int().min(100).default(30_000).describe('admission slot lease (renewed while a call runs), ms'),
  LLM_ACTIVITY_MAXLEN: z.coerce.number().int().min(10).default(2_000).describe('approximate entries kept per invocation activity stream'),
  LLM_ACTIVITY_TTL_SECONDS: z.coerce.number().int().min(1).default(600).describe('TTL of an invocation activity stream, seconds'),
  WF_TEST_TOOLS: flagOption('1 registers the test tools test_fail and counter'),
  HTTP_FETCH_ALLOW_PRIVATE: flagOption('1 lets http_fetch reach private, loopback and link-local addresses'),
  ATTACHMENT_RESOLVER_MODULE: z
    .string()
    .trim()
    .min(1)
    .optional()
    .describe("path (relative to the cwd) or package name of an ES module exporting resolveAttachment(ref, ctx), used instead of Flowline's file store; unset = attachments are read from the file store (POST /v1/files uploads) at DATABASE_URL"),
  MAX_ATTACHMENT_TEXT_BYTES: bytesOption(16 * 1024 * 1024, DEFAULT_MAX_ATTACHMENT_TEXT_BYTES, 'UTF-8 byte budget of all attachment text in one prompt (includeAttachments)'),
  MAX_ATTACHMENT_IMAGE_BYTES: bytesOption(64 * 1024 * 1024, 5 * 1024 * 1024, 'largest image attachment sent to a model as an image content part (a larger one is skipped and named in attachmentsSkipped), bytes'),
  MAX_ATTACHMENT_FILE_BYTES: bytesOption(1024 * 1024 * 1024, 16 * 1024 * 1024, 'largest text attachment read from the file store into memory (a larger one is skipped), bytes'),
  FILE_STORE_POOL_MAX: z.coerce.number().int().min(1).max(100).default(2)
    .describe('connections of the Postgres pool that reads attachments (the default file store resolver), MCP server records and writes Agent transcripts (opened only when used)'),
  MAX_AGENT_TRANSCRIPT_BYTES: bytesOption(
    256 * 1024 * 1024,
    DEFAULT_MAX_AGENT_TRANSCRIPT_BYTES,
    "UTF-8 bytes an Agent's checkpointed transcript (its model answers, tool results, approvals and steering, in agent_steps) may hold in one life of the node; a step past it fails the node ValidationFailed (AgentTranscriptTooLarge)",
  ),
  LLM_VISION: flagOption('1: the default provider\'s models take image input (image attachments are sent as image content parts); 0 fails a node with an image attachment ValidationFailed before any call', '1'),
};

export const llmWorkerConfigSchema = defineConfig({
  DATABASE_URL: connectionOptions.DATABASE_URL,
  REDIS_URL: connectionOptions.REDIS_URL,
  REDIS_CLUSTER_NODES: connectionOptions.REDIS_CLUSTER_NODES,
  LLM_BASE_URL: workerOptions.LLM_BASE_URL,
  LLM_API_KEY: workerOptions.LLM_API_KEY,
  LLM_MODEL: workerOptions.LLM_MODEL,
  MAX_RUN_INPUT_BYTES: coreOptions.MAX_RUN_INPUT_BYTES,
  ...laneWorkerOptions,
  ...llmWorkerOwnOptions,
}).transform((v, ctx) => {
  if (v.LLM_MODELS_RETRY_MAX_MS < v.LLM_MODELS_RETRY_MIN_MS) {
    ctx.addIssue({ code: 'custom', path: ['LLM_MODELS_RETRY_MAX_MS'], message: 'must be at least LLM_MODELS_RETRY_MIN_MS' });
    return z.NEVER;
  }
  const providers = parseProviders(v.LLM_PROVIDERS);
  if (!providers.ok) {
    // A root-level issue: the config loader prints no value for it.
    ctx.addIssue({ code: 'custom', path: [], message: `LLM_PROVIDERS is invalid at ${providers.where} (value hidden)` });
    return z.NEVER;
  }
  return { ...v, LLM_PROVIDERS: providers.value };
});

export type LlmWorkerConfig = z.output<typeof llmWorkerConfigSchema>;

export { toolModulesOf };
