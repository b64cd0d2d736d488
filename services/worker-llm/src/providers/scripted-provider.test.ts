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
});
