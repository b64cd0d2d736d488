/**
 * Reading a model's answer: a `responseJsonSchema` answer must parse to a JSON object
 * AND validate, or the attempt fails NodeFailed (retryable: a re-ask can land where one
 * attempt did not). The reason names the finish reason and the schema rule broken,
 * never the model's text. Usage of several calls adds up member by member.
 */
import { parseJson, validateJson, type Json, type JsonObject } from '@flowline/graph';
import { llmFailed } from '../errors';
import type { LlmUsage } from '../providers/types';

const THINK = /^\s*<think>[\s\S]*?<\/think>\s*/;

/** The answer text without a leading `<think>…</think>` block. */
export function stripThinking(text: string): string {
  return text.replace(THINK, '');
}

function parseObject(text: string): JsonObject | null {
  try {
    const value: unknown = parseJson(stripThinking(text).trim());
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JsonObject) : null;
  } catch {
    return null;
  }
}

/**
 * The `json` member of an answer. With a schema: the parsed object, validated.
 * Without: the parsed value when the text is a JSON object, else null.
 * @throws LlmError NodeFailed when a schema answer is not a JSON object or does not validate
 */
export function readJsonAnswer(text: string, schema: JsonObject | null | undefined, finishReason: string | null): Json {
  const parsed = parseObject(text);
  if (!schema) return parsed;
  if (parsed === null) {
    throw llmFailed(`the answer is not a JSON object (finish reason: ${finishReason ?? 'unknown'})`);
  }
  const check = validateJson(schema, parsed);
  if (!check.valid) {
    throw llmFailed(`the answer does not match responseJsonSchema: ${check.errors.slice(0, 3).join('; ')}`);
  }
  return parsed;
}

const add = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : a + b);

/** Sums the usage of several calls; finish reason and model are the last call's. */
export function sumUsage(all: readonly LlmUsage[]): LlmUsage {
  return all.reduce<LlmUsage>(
    (acc, u) => ({
      inputTokens: add(acc.inputTokens, u.inputTokens),
      outputTokens: add(acc.outputTokens, u.outputTokens),
      totalTokens: add(acc.totalTokens, u.totalTokens),
      durationMs: add(acc.durationMs, u.durationMs),
      finishReason: u.finishReason ?? acc.finishReason,
      model: u.model ?? acc.model,
      reasoningTokens: add(acc.reasoningTokens ?? null, u.reasoningTokens ?? null),
    }),
    { inputTokens: null, outputTokens: null, totalTokens: null, durationMs: null, finishReason: null, model: null, reasoningTokens: null },
  );
}

/**
 * Usage as a JSON object for the output document. `reasoningTokens` appears only when the
 * provider reported it, so a provider that never does leaves the usage as it always was.
 */
export const usageJson = (u: LlmUsage): JsonObject => {
  const { reasoningTokens, ...rest } = u;
  return reasoningTokens === null || reasoningTokens === undefined ? { ...rest } : { ...rest, reasoningTokens };
};
