import { describe, expect, it } from 'vitest';
import { createScriptedProvider, minimalValue } from './scripted-provider';

const signal = new AbortController().signal;

describe('scripted provider', () => {
  it('answers the same request the same way and a different one differently', async () => {
    const p = createScriptedProvider();
    const a = await p.complete({ model: 'scripted', messages: [{ role: 'user', content: 'hi' }] }, { signal });
    const b = await p.complete({ model: 'scripted', messages: [{ role: 'user', content: 'hi' }] }, { signal });
    const c = await p.complete({ model: 'scripted', messages: [{ role: 'user', content: 'ho' }] }, { signal });
    expect(a.text).toBe(b.text);
    expect(a.text).not.toBe(c.text);
    expect(a.usage.model).toBe('scripted');
    expect(a.toolCalls).toEqual([]);
  });

  it('answers a schema with its minimal valid value and a decision with its first label at confidence 1', async () => {
    const p = createScriptedProvider();
    const schema = { type: 'object', properties: { requiresReview: { type: 'boolean' }, n: { type: 'integer', minimum: 3 } }, required: ['requiresReview', 'n'] };
    const r = await p.complete({ model: 'scripted', messages: [], responseSchema: { name: 'r', schema } }, { signal });
    expect(JSON.parse(r.text)).toEqual({ requiresReview: false, n: 3 });
    const d = await p.complete(
      { model: 'scripted', messages: [], logprobs: true, responseSchema: { name: 'd', schema: { type: 'object', properties: { choice: { type: 'string', enum: ['b', 'a'] } }, required: ['choice'] } } },
      { signal },
    );
    expect(JSON.parse(d.text)).toEqual({ choice: 'b' });
    expect(d.logprobs).toEqual([{ token: d.text, logprob: 0 }]);
  });

  it('builds minimal values for arrays, strings and unions', () => {
    expect(minimalValue({ type: 'array', minItems: 2, items: { type: 'string', minLength: 2 } })).toEqual(['xx', 'xx']);
    expect(minimalValue({ anyOf: [{ type: 'number' }, { type: 'string' }] })).toBe(0);
    expect(minimalValue({ const: 'k' })).toBe('k');
  });

  it('asks for the tool calls its messages script, one per turn and in order, then answers text', async () => {
    const p = createScriptedProvider();
    const tools = [{ name: 'echo', description: 'echo', parameters: { type: 'object' } }];
    const system = { role: 'system' as const, content: 'Look it up.\ncall: echo {"said":"one"}\ncall: nope {"x":1}\ncall: echo not-json\ncall: echo {"said":"two"}' };
    const first = await p.complete({ model: 'scripted', messages: [system], tools }, { signal });
    expect(first.toolCalls).toEqual([{ id: 'scripted-call-1', name: 'echo', arguments: '{"said":"one"}' }]);
    expect(first.usage.finishReason).toBe('tool_calls');
    const afterOne = [system, { role: 'assistant' as const, content: null, toolCalls: first.toolCalls }, { role: 'tool' as const, toolCallId: 'scripted-call-1', content: 'one' }];
    const second = await p.complete({ model: 'scripted', messages: afterOne, tools }, { signal });
    expect(second.toolCalls).toEqual([{ id: 'scripted-call-2', name: 'echo', arguments: '{"said":"two"}' }]);
    const afterTwo = [...afterOne, { role: 'assistant' as const, content: null, toolCalls: second.toolCalls }, { role: 'tool' as const, toolCallId: 'scripted-call-2', content: 'two' }];
    const done = await p.complete({ model: 'scripted', messages: afterTwo, tools }, { signal });
    expect(done.toolCalls).toEqual([]);
    expect(done.text).toMatch(/^scripted answer /);
    // a tool the request does not offer is never asked for
    expect((await p.complete({ model: 'scripted', messages: [system] }, { signal })).toolCalls).toEqual([]);
  });
});
