import { describe, expect, it } from 'vitest';
import { decisionSchema, labelConfidence } from './decision-model';

describe('decision confidence from token log-probabilities', () => {
  it('multiplies the probabilities of the tokens spelling the chosen label inside choice', () => {
    const tokens = [
      { token: '{"', logprob: Math.log(0.5) },
      { token: 'choice":"', logprob: 0 },
      { token: 'ye', logprob: Math.log(0.8) },
      { token: 's"}', logprob: Math.log(0.5) },
    ];
    expect(labelConfidence('yes', tokens)).toBeCloseTo(0.4, 9);
  });

  it('is null without tokens or when the tokens never spell the label', () => {
    expect(labelConfidence('yes', null)).toBeNull();
    expect(labelConfidence('yes', [])).toBeNull();
    expect(labelConfidence('yes', [{ token: '{"choice":"no"}', logprob: 0 }])).toBeNull();
  });

  it('reads a label that is also a key name from the choice value', () => {
    const tokens = [{ token: '{"choice":"', logprob: Math.log(0.1) }, { token: 'choice', logprob: Math.log(0.7) }, { token: '"}', logprob: 0 }];
    expect(labelConfidence('choice', tokens)).toBeCloseTo(0.7, 9);
  });

  it('builds a closed enum schema over the labels', () => {
    expect(decisionSchema(['a', 'b'])).toEqual({
      type: 'object',
      properties: { choice: { type: 'string', enum: ['a', 'b'] } },
      required: ['choice'],
      additionalProperties: false,
    });
  });
});
