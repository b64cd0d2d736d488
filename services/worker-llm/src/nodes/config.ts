/**
 * Per-kind config readers (CONTRACT §2). The parser already checked the config at save;
 * these re-check what the worker relies on (a job may come from an older build) and
 * fail ValidationFailed, naming the member, on anything malformed.
 */
import { z } from 'zod';
import type { JsonObject } from '@flowline/graph';
import { jsonObjectSchema } from '@flowline/queue';
import { llmInvalid } from '../errors';
import type { LlmSampling } from '../providers/types';

const schemaObject: z.ZodType<JsonObject> = jsonObjectSchema;
const bindings = z.record(z.string(), z.string());
const common = {
  model: z.string().min(1).nullish(),
  reasoningEffort: z.string().nullish(),
  publishToChat: z.boolean().nullish(),
  includeAttachments: z.boolean().nullish(),
};

const samplingSchema = z
  .object({
    temperature: z.number().nullish(),
    topP: z.number().nullish(),
    topK: z.number().nullish(),
    minP: z.number().nullish(),
    maxOutputTokens: z.number().nullish(),
    seed: z.number().nullish(),
    repeatPenalty: z.number().nullish(),
    repeatLastN: z.number().nullish(),
    presencePenalty: z.number().nullish(),
    frequencyPenalty: z.number().nullish(),
    numCtx: z.number().nullish(),
    stop: z.union([z.string(), z.array(z.string())]).nullish(),
  })
  .nullish();

export const llmCallConfigSchema = z.object({
  ...common,
  systemPrompt: z.string().nullish(),
  prompt: z.string().min(1),
  inputBindings: bindings.nullish(),
  responseJsonSchema: schemaObject.nullish(),
  samplingOptions: samplingSchema,
});

export const agentConfigSchema = z.object({
  ...common,
  instructions: z.string().min(1),
  tools: z.array(z.string()).nullish(),
  maxIterations: z.number().int().positive().nullish(),
  maxToolCalls: z.number().int().positive().nullish(),
  maxToolCallsPerTurn: z.number().int().positive().nullish(),
  // checked entry by entry by parseToolApprovals (the parser's own reader)
  toolApprovals: z.array(z.unknown()).nullish(),
  responseJsonSchema: schemaObject.nullish(),
  includeUpstreamOutputs: z.boolean().nullish(),
  agentDefinitionId: z.string().nullish(),
  agentVersion: z.number().int().positive().nullish(),
});

export const decisionConfigSchema = z.object({
  question: z.string().min(1),
  labels: z.array(z.string().min(1).max(64)).min(2).max(32),
  model: z.string().min(1).nullish(),
  inputBindings: bindings.nullish(),
  minConfidence: z.number().min(0).max(1).nullish(),
  provider: z.literal('llm').nullish(),
});

/**
 * Parses a node config.
 * @throws LlmError ValidationFailed naming the malformed members
 */
export function readConfig<S extends z.ZodType>(schema: S, kind: string, config: JsonObject): z.output<S> {
  const parsed = schema.safeParse(config);
  if (parsed.success) return parsed.data;
  const members = [...new Set(parsed.error.issues.map((i) => i.path.map(String).join('.') || '(config)'))];
  throw llmInvalid(`${kind} node config is invalid at ${members.join(', ')}`);
}

/** CONTRACT `samplingOptions` → provider sampling (server-specific members passed through). */
export function toSampling(options: z.output<typeof samplingSchema>): LlmSampling | undefined {
  if (!options) return undefined;
  const s: LlmSampling = {};
  const o = options;
  if (o.temperature != null) s.temperature = o.temperature;
  if (o.topP != null) s.topP = o.topP;
  if (o.maxOutputTokens != null) s.maxOutputTokens = o.maxOutputTokens;
  if (o.seed != null) s.seed = o.seed;
  if (o.presencePenalty != null) s.presencePenalty = o.presencePenalty;
  if (o.frequencyPenalty != null) s.frequencyPenalty = o.frequencyPenalty;
  if (o.stop != null) s.stop = o.stop;
  const extra: Record<string, number> = {};
  if (o.topK != null) extra.top_k = o.topK;
  if (o.minP != null) extra.min_p = o.minP;
  if (o.repeatPenalty != null) extra.repeat_penalty = o.repeatPenalty;
  if (o.repeatLastN != null) extra.repeat_last_n = o.repeatLastN;
  if (o.numCtx != null) extra.num_ctx = o.numCtx;
  if (Object.keys(extra).length > 0) s.extra = extra;
  return s;
}
