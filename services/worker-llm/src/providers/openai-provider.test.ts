import { describe, expect, it } from 'vitest';
import { buildParams } from './openai-provider';

describe('OpenAI request body', () => {
  const request = {
    model: 'm',
    messages: [
      { role: 'system' as const, content: 's' },
      { role: 'assistant' as const, content: null, toolCalls: [{ id: 'c1', name: 'echo', arguments: '{}' }] },
      { role: 'tool' as const, toolCallId: 'c1', content: '{}' },
    ],
    tools: [{ name: 'echo', description: 'd', parameters: { type: 'object' } }],
    responseSchema: { name: 'r', schema: { type: 'object' } },
    sampling: { temperature: 0, maxOutputTokens: 5, extra: { top_k: 3 } },
    logprobs: true,
  };

  it('maps messages, tools, response_format, sampling and server-specific members', () => {
    const p = buildParams(request, true) as unknown as Record<string, unknown>;
    expect(p).toMatchObject({
      model: 'm',
      temperature: 0,
      max_tokens: 5,
      top_k: 3,
      logprobs: true,
      response_format: { type: 'json_schema', json_schema: { name: 'r', schema: { type: 'object' }, strict: false } },
      tools: [{ type: 'function', function: { name: 'echo', description: 'd', parameters: { type: 'object' } } }],
    });
    expect(p.messages).toEqual([
      { role: 'system', content: 's' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'echo', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: '{}' },
    ]);
  });

  it('leaves logprobs out for a provider that refuses them', () => {
    expect(buildParams(request, false)).not.toHaveProperty('logprobs');
  });
});
