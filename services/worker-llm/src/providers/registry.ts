/**
 * Which provider and model serve a node. The default provider is LLM_BASE_URL (named
 * `default`), or the built-in `scripted` one when it is unset; LLM_PROVIDERS names
 * more endpoints. A node's `model` pin `"<provider>/<model>"` picks a named provider
 * when the prefix is one of its names; any other pin is a model of the default
 * provider (model names may contain slashes themselves). With `LLM_BASE_URL` and no
 * default model (`LLM_MODEL`, or a model on an LLM_PROVIDERS entry named `default`), the
 * provider's `GET /models` names it (model-discovery.ts).
 */
import { z } from 'zod';
import { pino, type Logger } from 'pino';
import { llmFailed, llmInvalid } from '../errors';
import { ambiguityMessage, createModelDiscovery, type ModelDiscovery } from './model-discovery';
import { createOpenAiProvider, type OpenAiProviderOptions } from './openai-provider';
import { createScriptedProvider } from './scripted-provider';
import type { LlmProvider } from './types';

/** One LLM_PROVIDERS entry. */
export const providerEntrySchema = z.object({
  baseUrl: z.url(),
  apiKey: z.string().optional(),
  /** default model of this provider */
  model: z.string().min(1).optional(),
  /** concurrent calls per model of this provider across all replicas; 0 = unlimited */
  maxConcurrentCalls: z.number().int().min(0).optional(),
  /** tokens per minute per model of this provider across all replicas; 0 = unlimited */
  tokensPerMinute: z.number().int().min(0).optional(),
  stream: z.boolean().optional(),
  logprobs: z.boolean().optional(),
  /** false: its models take no image input (an image attachment fails the node ValidationFailed before any call) @default true */
  vision: z.boolean().optional(),
});
export type ProviderEntry = z.output<typeof providerEntrySchema>;

export const providerMapSchema = z.record(z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/), providerEntrySchema);

/** Admission limits of one provider/model; 0 = unlimited. */
export interface AdmissionLimits {
  maxConcurrentCalls: number;
  tokensPerMinute: number;
}

/** A resolved call target. */
export interface ModelTarget {
  provider: LlmProvider;
  /** model name sent to the provider */
  model: string;
  /** `<provider>/<model>`: the admission key */
  key: string;
  limits: AdmissionLimits;
  /** false when the provider's models are configured to take no image input @default true */
  vision?: boolean;
}

export interface ProviderRegistryOptions {
  baseUrl?: string | null;
  apiKey?: string | null;
  defaultModel?: string | null;
  providers?: Record<string, ProviderEntry>;
  /** LLM_MAX_CONCURRENT_CALLS default for every provider/model @default 0 */
  maxConcurrentCalls?: number;
  /** LLM_TOKENS_PER_MINUTE default for every provider/model @default 0 */
  tokensPerMinute?: number;
  stream?: boolean;
  /** LLM_LOGPROBS: the default provider sends `logprobs` when a request asks @default true */
  logprobs?: boolean;
  /** LLM_VISION: the default provider's models take image input @default true */
  vision?: boolean;
  timeoutMs?: number;
  onErrorDetail?: OpenAiProviderOptions['onErrorDetail'];
  /** model discovery of the default provider (used only when it has no default model) */
  discovery?: {
    /** LLM_MODELS_RETRY_MIN_MS @default 1000 */
    retryMinMs?: number;
    /** LLM_MODELS_RETRY_MAX_MS @default 30000 */
    retryMaxMs?: number;
    /** LLM_MODELS_TIMEOUT_MS: one `GET /models` @default 5000 */
    timeoutMs?: number;
    /** the provider listed several models while the worker ran */
    onAmbiguous?(models: string[]): void;
  };
  /** discovery's log lines @default silent */
  logger?: Logger;
}

export interface ProviderRegistry {
  /** name of the provider a node without a provider prefix uses */
  readonly defaultName: string;
  /** the default provider's model discovery; null when a default model is configured or there is no LLM_BASE_URL */
  readonly discovery: ModelDiscovery | null;
  /**
   * @param pin the node's `model` config member, or null
   * @throws LlmError ValidationFailed when no model can be chosen; NodeFailed (retryable)
   *   while model discovery has not named the default provider's model yet
   */
  resolve(pin: string | null | undefined): Promise<ModelTarget>;
}

interface Entry {
  provider: LlmProvider;
  model: string | null;
  limits: AdmissionLimits;
  logprobs?: boolean;
  vision?: boolean;
}

/** Builds the providers once per process. */
export function createProviderRegistry(opts: ProviderRegistryOptions): ProviderRegistry {
  const defaults: AdmissionLimits = { maxConcurrentCalls: opts.maxConcurrentCalls ?? 0, tokensPerMinute: opts.tokensPerMinute ?? 0 };
  const entries = new Map<string, Entry>();
  for (const [name, e] of Object.entries(opts.providers ?? {})) {
    entries.set(name, {
      provider: createOpenAiProvider({
        name,
        baseUrl: e.baseUrl,
        apiKey: e.apiKey ?? null,
        stream: e.stream ?? opts.stream,
        logprobs: e.logprobs,
        timeoutMs: opts.timeoutMs,
        onErrorDetail: opts.onErrorDetail,
      }),
      model: e.model ?? null,
      logprobs: e.logprobs,
      vision: e.vision,
      limits: { maxConcurrentCalls: e.maxConcurrentCalls ?? defaults.maxConcurrentCalls, tokensPerMinute: e.tokensPerMinute ?? defaults.tokensPerMinute },
    });
  }
  let defaultName: string;
  let discovery: ModelDiscovery | null = null;
  if (opts.baseUrl) {
    defaultName = 'default';
    const named = entries.get('default');
    const provider = createOpenAiProvider({
      name: 'default',
      baseUrl: opts.baseUrl,
      apiKey: opts.apiKey ?? null,
      stream: opts.stream,
      logprobs: opts.logprobs ?? named?.logprobs,
      timeoutMs: opts.timeoutMs,
      onErrorDetail: opts.onErrorDetail,
    });
    const model = opts.defaultModel ?? named?.model ?? null;
    entries.set('default', { provider, model, limits: named?.limits ?? defaults, logprobs: opts.logprobs ?? named?.logprobs, vision: opts.vision ?? named?.vision });
    if (model === null) discovery = discoveryOf(provider, opts);
  } else {
    defaultName = 'scripted';
    if (!entries.has('scripted')) entries.set('scripted', { provider: createScriptedProvider(), model: 'scripted', limits: defaults });
  }

  /** The default provider's model when no default is configured: what discovery says, asked again while it waits. */
  async function discovered(): Promise<string> {
    const state = discovery ? await discovery.refresh() : null;
    if (state?.kind === 'resolved') return state.model;
    if (state?.kind === 'ambiguous') throw llmInvalid(ambiguityMessage(state.models));
    if (state?.why === 'empty') throw llmFailed('no model to call yet: LLM_MODEL is unset and the provider lists no model');
    throw llmFailed('the model provider is unavailable: LLM_MODEL is unset and the provider does not answer GET /models yet');
  }

  return {
    defaultName,
    discovery,
    async resolve(pin) {
      let name = defaultName;
      let model: string | null = null;
      if (pin) {
        const slash = pin.indexOf('/');
        const prefix = slash > 0 ? pin.slice(0, slash) : null;
        if (prefix !== null && entries.has(prefix) && slash < pin.length - 1) {
          name = prefix;
          model = pin.slice(slash + 1);
        } else {
          model = pin;
        }
      }
      const entry = entries.get(name);
      if (!entry) throw llmInvalid(`no model provider named ${name} is configured`);
      let chosen = name === 'scripted' ? 'scripted' : (model ?? entry.model ?? opts.defaultModel ?? null);
      if (!chosen && name === 'default' && discovery) chosen = await discovered();
      if (!chosen) throw llmInvalid(`no model configured for provider ${name}: pin one on the node or set LLM_MODEL`);
      return { provider: entry.provider, model: chosen, key: `${name}/${chosen}`, limits: entry.limits, vision: entry.vision ?? true };
    },
  };
}

function discoveryOf(provider: LlmProvider, opts: ProviderRegistryOptions): ModelDiscovery {
  const d = opts.discovery ?? {};
  const timeoutMs = d.timeoutMs ?? 5_000;
  return createModelDiscovery({
    list: () => provider.listModels?.({ timeoutMs }) ?? Promise.resolve([]),
    retryMinMs: d.retryMinMs ?? 1_000,
    retryMaxMs: d.retryMaxMs ?? 30_000,
    logger: opts.logger ?? pino({ level: 'silent' }),
    onAmbiguous: d.onAmbiguous,
  });
}
