/**
 * Which provider and model serve a node. The default provider is LLM_BASE_URL (named
 * `default`), or the built-in `scripted` one when it is unset; LLM_PROVIDERS names
 * more endpoints. A node's `model` pin `"<provider>/<model>"` picks a named provider
 * when the prefix is one of its names; any other pin is a model of the default
 * provider (model names may contain slashes themselves).
 */
import { z } from 'zod';
import { llmInvalid } from '../errors';
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
  timeoutMs?: number;
  onErrorDetail?: OpenAiProviderOptions['onErrorDetail'];
}

export interface ProviderRegistry {
  /** name of the provider a node without a provider prefix uses */
  readonly defaultName: string;
  /**
   * @param pin the node's `model` config member, or null
   * @throws LlmError ValidationFailed when no model can be chosen
   */
  resolve(pin: string | null | undefined): ModelTarget;
}

interface Entry {
  provider: LlmProvider;
  model: string | null;
  limits: AdmissionLimits;
  logprobs?: boolean;
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
      limits: { maxConcurrentCalls: e.maxConcurrentCalls ?? defaults.maxConcurrentCalls, tokensPerMinute: e.tokensPerMinute ?? defaults.tokensPerMinute },
    });
  }
  let defaultName: string;
  if (opts.baseUrl) {
    defaultName = 'default';
    const named = entries.get('default');
    entries.set('default', {
      provider: createOpenAiProvider({
        name: 'default',
        baseUrl: opts.baseUrl,
        apiKey: opts.apiKey ?? null,
        stream: opts.stream,
        logprobs: opts.logprobs ?? named?.logprobs,
        timeoutMs: opts.timeoutMs,
        onErrorDetail: opts.onErrorDetail,
      }),
      model: opts.defaultModel ?? named?.model ?? null,
      limits: named?.limits ?? defaults,
      logprobs: opts.logprobs ?? named?.logprobs,
    });
  } else {
    defaultName = 'scripted';
    if (!entries.has('scripted')) entries.set('scripted', { provider: createScriptedProvider(), model: 'scripted', limits: defaults });
  }

  return {
    defaultName,
    resolve(pin) {
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
      const chosen = name === 'scripted' ? 'scripted' : (model ?? entry.model ?? opts.defaultModel ?? null);
      if (!chosen) throw llmInvalid(`no model configured for provider ${name}: pin one on the node or set LLM_MODEL`);
      return { provider: entry.provider, model: chosen, key: `${name}/${chosen}`, limits: entry.limits };
    },
  };
}
