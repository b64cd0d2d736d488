import { describe, expect, it } from 'vitest';
import { answerOf, decisionOf, firstMeaningfulLevel, promptOf, usageLine } from './node-document';

describe('reading a node’s documents', () => {
  it('opens an output at its first level that holds more than one wrapper', () => {
    expect(firstMeaningfulLevel({ result: { rows: [1, 2], total: 2 } })).toEqual({ path: ['result'], value: { rows: [1, 2], total: 2 } });
    expect(firstMeaningfulLevel({ a: { b: { c: 1, d: 2 } } })).toEqual({ path: ['a', 'b'], value: { c: 1, d: 2 } });
    // a single scalar member is content, not a wrapper
    expect(firstMeaningfulLevel({ text: 'hi' })).toEqual({ path: [], value: { text: 'hi' } });
    expect(firstMeaningfulLevel([1, 2])).toEqual({ path: [], value: [1, 2] });
    expect(firstMeaningfulLevel(null)).toEqual({ path: [], value: null });
  });

  it('reads a gate’s decision, comment and payload, and an approval policy’s settlement', () => {
    expect(decisionOf({ decision: 'Reject', comment: 'too early', payload: { ticket: 7 }, approval: { by: 'veto' } })).toEqual({
      decision: 'Reject',
      comment: 'too early',
      payload: { ticket: 7 },
      by: 'veto',
    });
    expect(decisionOf({ decision: 'Approve', comment: '  ', payload: null })).toMatchObject({ comment: null, by: null });
    expect(decisionOf({ text: 'no decision here' })).toBeNull();
  });

  it('reads a model answer: its text, JSON, model, usage line and a DecisionModel’s choice', () => {
    const a = answerOf({ text: 'Hi.\nBye.', json: { n: 1 }, usage: { inputTokens: 1200, outputTokens: 30, durationMs: 1500, finishReason: 'stop', model: 'm-1' } });
    expect(a).toMatchObject({ text: 'Hi.\nBye.', json: { n: 1 }, model: 'm-1', usage: '1,200 in · 30 out · 1.5 s · stop', choice: null });
    expect(answerOf({ choice: 'yes', confidence: 0.92, usage: {} })).toMatchObject({ text: null, choice: { label: 'yes', confidence: 0.92 } });
    expect(answerOf({ decision: 'Approve' })).toBeNull();
    expect(usageLine({ durationMs: 850 })).toBe('850 ms');
    expect(usageLine({})).toBeNull();
  });

  it('lists a model node’s configured prompt members in the order the model reads them', () => {
    expect(promptOf('LlmCall', { prompt: 'Summarise {{ input }}', systemPrompt: 'Be terse.' })).toEqual([
      { label: 'System', text: 'Be terse.' },
      { label: 'Prompt', text: 'Summarise {{ input }}' },
    ]);
    expect(promptOf('DecisionModel', { question: 'Complaint?' })).toEqual([{ label: 'Question', text: 'Complaint?' }]);
    expect(promptOf('Agent', { instructions: 'Do it.' })).toEqual([{ label: 'Instructions', text: 'Do it.' }]);
    expect(promptOf('Tool', { toolName: 'echo' })).toEqual([]);
  });
});
