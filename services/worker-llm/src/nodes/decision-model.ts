/**
 * DecisionModel (CONTRACT §2, reference §4.9): lowered to a temperature-0 classifier
 * call with the response schema `{ choice: enum(labels) }` and token log-probabilities
 * requested. The answer is held to the labels: anything that is not such an object
 * fails NodeFailed (retryable) without repeating the model's text. `confidence` is the
 * probability of the chosen label's tokens when the provider returned log-probabilities,
 * else null; with `minConfidence` an answer below it (or without confidence) succeeds
 * `held: true`. With the alternatives at each position (`top_logprobs`) it also reports every
 * label's `probabilities`. Output `{ choice, confidence, probabilities?, held, provider: "llm", usage }`.
 */
import type { Json, JsonObject } from '@flowline/graph';
import { llmFailed } from '../errors';
import { dataBlock, joinParts, resolveBindings, steeringSection } from '../prompt';
import { renderPromptText } from '../templates';
import type { LlmTokenLogprob } from '../providers/types';
import { stripThinking, usageJson } from './answer';
import { decisionConfigSchema, readConfig } from './config';
import type { NodeContext } from './context';

const CLASSIFIER_PROMPT =
  'You are a classifier in an automated workflow. Read the question and any input data, then answer ' +
  'with a JSON object {"choice": "<label>"} whose choice is exactly one of the listed labels. Answer nothing else.';

/** The response schema of a decision over `labels`. */
export function decisionSchema(labels: readonly string[]): JsonObject {
  return {
    type: 'object',
    properties: { choice: { type: 'string', enum: [...labels] } },
    required: ['choice'],
    additionalProperties: false,
  };
}

/**
 * The probability of `label` in the answer: exp of the summed log-probabilities of the
 * tokens covering the label's characters (inside the `choice` string when present).
 * Null without tokens or when the tokens do not spell the label.
 */
export function labelConfidence(label: string, tokens: readonly LlmTokenLogprob[] | null): number | null {
  if (!tokens || tokens.length === 0) return null;
  const joined = tokens.map((t) => t.token).join('');
  const encoded = JSON.stringify(label).slice(1, -1);
  let start = -1;
  const key = joined.indexOf('"choice"');
  if (key >= 0) {
    const colon = joined.indexOf(':', key + 8);
    const quote = colon >= 0 ? joined.indexOf('"', colon) : -1;
    if (quote >= 0 && joined.startsWith(`${encoded}"`, quote + 1)) start = quote + 1;
  }
  if (start < 0) start = joined.indexOf(encoded);
  if (start < 0) return null;
  const end = start + encoded.length;
  let sum = 0;
  let at = 0;
  for (const t of tokens) {
    const tokenEnd = at + t.token.length;
    if (tokenEnd > start && at < end) sum += t.logprob;
    at = tokenEnd;
  }
  const p = Math.exp(sum);
  return Number.isFinite(p) ? Math.min(1, Math.max(0, p)) : null;
}

/**
 * Each label's probability, read where the answer's `choice` string begins: the chosen label
 * gets its {@link labelConfidence}; every other label gets the summed probability of the
 * alternatives the provider reported at that position (`top_logprobs`) that begin it and no
 * other label. A label no reported alternative begins reads 0 (it was less likely than every
 * alternative shown). Null without log-probabilities or alternatives, or when the tokens do
 * not spell the answer. Approximate for labels that share their first token.
 */
export function labelProbabilities(labels: readonly string[], choice: string, tokens: readonly LlmTokenLogprob[] | null): Record<string, number> | null {
  const chosen = labelConfidence(choice, tokens);
  if (chosen === null || !tokens || !tokens.some((t) => t.top && t.top.length > 0)) return null;
  const joined = tokens.map((t) => t.token).join('');
  const encoded = JSON.stringify(choice).slice(1, -1);
  const key = joined.indexOf('"choice"');
  const colon = key >= 0 ? joined.indexOf(':', key + 8) : -1;
  const quote = colon >= 0 ? joined.indexOf('"', colon) : -1;
  if (quote < 0 || !joined.startsWith(`${encoded}"`, quote + 1)) return null;
  const start = quote + 1;
  // the token in which the label's text begins, and what of that token comes before the label
  let at = 0;
  let index = -1;
  for (let i = 0; i < tokens.length; i++) {
    const end = at + tokens[i]!.token.length;
    if (end > start) {
      index = i;
      break;
    }
    at = end;
  }
  if (index < 0) return null;
  const lead = joined.slice(at, start);
  const out: Record<string, number> = Object.fromEntries(labels.map((l) => [l, 0]));
  const encodedLabels = labels.map((l) => [l, JSON.stringify(l).slice(1, -1)] as const);
  for (const alt of tokens[index]!.top ?? []) {
    if (!alt.token.startsWith(lead)) continue;
    const rest = alt.token.slice(lead.length).replace(/"$/, '');
    if (rest === '') continue;
    const begun = encodedLabels.filter(([, e]) => e.startsWith(rest) || rest.startsWith(e));
    if (begun.length !== 1) continue;
    const [label] = begun[0]!;
    if (label !== choice) out[label] = Math.min(1, out[label]! + Math.exp(alt.logprob));
  }
  out[choice] = chosen;
  return out;
}

function choiceOf(text: string, labels: readonly string[]): string | null {
  let value: unknown;
  try {
    value = JSON.parse(stripThinking(text).trim());
  } catch {
    return null;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const choice = (value as Record<string, unknown>).choice;
  return typeof choice === 'string' && labels.includes(choice) ? choice : null;
}

/** Runs a DecisionModel node; returns its output document. */
export async function runDecisionModel(ctx: NodeContext): Promise<Json> {
  const config = readConfig(decisionConfigSchema, 'DecisionModel', ctx.item.config);
  const question = renderPromptText(ctx.item, 'question', config.question, ctx.templates);
  const data = resolveBindings(config.inputBindings, ctx.item.input);
  const target = await ctx.resolveModel(config.model);
  const labelList = config.labels.map((l) => `- ${l}`).join('\n');
  const response = await ctx.call(target, {
    messages: [
      { role: 'system', content: CLASSIFIER_PROMPT },
      {
        role: 'user',
        content: joinParts(
          `Question: ${question}`,
          `Labels:\n${labelList}`,
          data ? dataBlock('Input data', data, ctx.maxInputBytes) : null,
          steeringSection(ctx.item.steering),
        ),
      },
    ],
    responseSchema: { name: 'decision', schema: decisionSchema(config.labels) },
    sampling: { temperature: 0 },
    logprobs: true,
  });
  const choice = choiceOf(response.text, config.labels);
  if (choice === null) {
    throw llmFailed(`the decision is not one of the ${config.labels.length} labels (finish reason: ${response.usage.finishReason ?? 'unknown'})`);
  }
  const confidence = labelConfidence(choice, response.logprobs);
  const probabilities = labelProbabilities(config.labels, choice, response.logprobs);
  const min = config.minConfidence ?? null;
  const held = min !== null && (confidence === null || confidence < min);
  return { choice, confidence, ...(probabilities ? { probabilities } : {}), held, provider: 'llm', usage: usageJson(response.usage) };
}
