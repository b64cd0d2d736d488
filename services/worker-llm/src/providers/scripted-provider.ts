/**
 * The built-in `scripted` provider, used when no LLM_BASE_URL is set so the dev
 * cluster runs without a model server. Deterministic: the same request always gets
 * the same answer. With a response schema it answers the minimal valid value of the
 * schema (an enum's first member — so a DecisionModel picks its first label, with
 * confidence 1 from a single certain token); otherwise a short text derived from a
 * hash of the messages. Usage reports `model: "scripted"`.
 *
 * Tool calls, for trying Agents without a model: each line `call: <tool> <JSON arguments>` of a
 * system or user message (an Agent's instructions, say) is a call the provider asks for, one
 * per turn in order, while the request offers that tool (by its function name, e.g. `echo` or
 * `mcp__docs__search`); once every one has an answer in the conversation it answers text.
 */
import { createHash } from 'node:crypto';
import type { Json, JsonObject } from '@flowline/graph';
import { throwIfAborted } from '../errors';
import type { LlmProvider, LlmRequest, LlmResponse } from './types';

const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The smallest value a (simple) JSON Schema accepts; depth-bounded. */
export function minimalValue(schema: unknown, depth = 0): Json {
  if (!isObject(schema) || depth > 16) return null;
  if ('const' in schema) return schema.const ?? null;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0] ?? null;
  if ('default' in schema && schema.default !== undefined) return schema.default;
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const list = schema[key];
    if (Array.isArray(list) && list.length > 0) return minimalValue(list[0], depth + 1);
  }
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'object': {
      const out: JsonObject = {};
      const props = isObject(schema.properties) ? schema.properties : {};
      const required = Array.isArray(schema.required) ? schema.required.filter((k): k is string => typeof k === 'string') : [];
      for (const key of required) out[key] = minimalValue(props[key], depth + 1);
      return out;
    }
    case 'array': {
      const n = typeof schema.minItems === 'number' ? schema.minItems : 0;
      return Array.from({ length: Math.min(n, 64) }, () => minimalValue(schema.items, depth + 1));
    }
    case 'string': {
      const n = typeof schema.minLength === 'number' ? Math.min(schema.minLength, 4096) : 0;
      return 'x'.repeat(n);
    }
    case 'integer':
    case 'number': {
      const min = typeof schema.minimum === 'number' ? schema.minimum : typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum + 1 : 0;
      return type === 'integer' ? Math.ceil(min) : min;
    }
    case 'boolean':
      return false;
    case 'null':
      return null;
    default:
      return isObject(schema.properties) ? minimalValue({ ...schema, type: 'object' }, depth + 1) : null;
  }
}

const approxTokens = (text: string) => Math.ceil(text.length / 4);

/** A `call: <tool> <JSON>` line; the arguments must be a JSON object. */
const CALL_LINE = /^\s*call:\s*(\S+)\s+(\{.*\})\s*$/;

/** The tool calls the conversation's system and user messages script, in order. */
export function scriptedCalls(request: LlmRequest): Array<{ name: string; arguments: string }> {
  const offered = new Set((request.tools ?? []).map((t) => t.name));
  const calls: Array<{ name: string; arguments: string }> = [];
  for (const m of request.messages) {
    if (m.role !== 'system' && m.role !== 'user') continue;
    for (const line of m.content.split('\n')) {
      const hit = CALL_LINE.exec(line);
      if (!hit || !offered.has(hit[1]!)) continue;
      try {
        if (!isObject(JSON.parse(hit[2]!))) continue;
      } catch {
        continue;
      }
      calls.push({ name: hit[1]!, arguments: hit[2]! });
    }
  }
  return calls;
}

/** Creates the scripted provider. */
export function createScriptedProvider(): LlmProvider {
  return {
    name: 'scripted',
    async complete(request, options): Promise<LlmResponse> {
      throwIfAborted(options.signal);
      const startedAt = Date.now();
      const prompt = JSON.stringify(request.messages);
      // the next scripted call not yet asked for: one per turn, counted by the answers so far
      const answered = request.messages.filter((m) => m.role === 'tool').length;
      const next = scriptedCalls(request)[answered];
      if (next !== undefined) {
        const call = { id: `scripted-call-${answered + 1}`, name: next.name, arguments: next.arguments };
        options.onDelta?.({ type: 'toolCall', text: `${call.name}(${call.arguments})` });
        const inputTokens = approxTokens(prompt);
        return {
          text: '',
          reasoning: null,
          toolCalls: [call],
          logprobs: null,
          usage: { inputTokens, outputTokens: approxTokens(call.arguments), totalTokens: inputTokens + approxTokens(call.arguments), durationMs: Date.now() - startedAt, finishReason: 'tool_calls', model: 'scripted' },
        };
      }
      const text = request.responseSchema
        ? JSON.stringify(minimalValue(request.responseSchema.schema))
        : `scripted answer ${createHash('sha256').update(prompt).digest('hex').slice(0, 12)}`;
      for (let i = 0; i < text.length; i += 16) options.onDelta?.({ type: 'content', text: text.slice(i, i + 16) });
      const inputTokens = approxTokens(prompt);
      const outputTokens = approxTokens(text);
      return {
        text,
        reasoning: null,
        toolCalls: [],
        logprobs: request.logprobs ? [{ token: text, logprob: 0 }] : null,
        usage: {
          inputTokens,
          outputTokens,
          totalTokens: inputTokens + outputTokens,
          durationMs: Date.now() - startedAt,
          finishReason: 'stop',
          model: 'scripted',
        },
      };
    },
  };
}
