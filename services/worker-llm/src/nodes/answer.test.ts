import { describe, expect, it } from 'vitest';
import { JsonNumber } from '@flowline/graph';
import { readJsonAnswer, stripThinking, sumUsage, usageJson } from './answer';

describe('reading answers', () => {
  const schema = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] };

  it('accepts a validating object, after a leading think block', () => {
    expect(readJsonAnswer('<think>hmm</think>\n{"ok":true}', schema, 'stop')).toEqual({ ok: true });
    expect(stripThinking('<think>a</think> b')).toBe('b');
  });

  it('refuses arrays, text and invalid objects NodeFailed', () => {
    expect(() => readJsonAnswer('[1]', schema, 'stop')).toThrow(/not a JSON object \(finish reason: stop\)/);
    expect(() => readJsonAnswer('{"ok":1}', schema, 'stop')).toThrow(/\/ok must be boolean/);
  });

  it('parses an object leniently without a schema and is null for text', () => {
    expect(readJsonAnswer('{"a":1}', null, null)).toEqual({ a: 1 });
    expect(readJsonAnswer('hello', null, null)).toBeNull();
  });

  it('keeps numbers of the answer a double cannot hold exact', () => {
    expect(readJsonAnswer('{"id":9007199254740993,"ok":true}', schema, 'stop')).toEqual({ id: new JsonNumber('9007199254740993'), ok: true });
  });

  it('adds usage member by member, null only when every call left it null', () => {
    const u = sumUsage([
      { inputTokens: 1, outputTokens: null, totalTokens: 3, durationMs: 5, finishReason: 'tool_calls', model: 'm' },
      { inputTokens: 2, outputTokens: null, totalTokens: null, durationMs: 5, finishReason: 'stop', model: 'm' },
    ]);
    expect(u).toEqual({ inputTokens: 3, outputTokens: null, totalTokens: 3, durationMs: 10, finishReason: 'stop', model: 'm', reasoningTokens: null });
    expect(usageJson(u)).not.toHaveProperty('reasoningTokens');
    const reasoned = sumUsage([{ ...u, reasoningTokens: 4 }, { ...u, reasoningTokens: null }, { ...u, reasoningTokens: 6 }]);
    expect(usageJson(reasoned)).toMatchObject({ reasoningTokens: 10 });
  });
});
