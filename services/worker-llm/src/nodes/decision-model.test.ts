import { describe, expect, it } from 'vitest';
import { decisionSchema, labelConfidence, labelProbabilities } from './decision-model';

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

describe('label probabilities from the alternatives at the choice', () => {
  const tok = (token: string, logprob = 0, top?: Array<[string, number]>) => ({ token, logprob, ...(top ? { top: top.map(([t, p]) => ({ token: t, logprob: p })) } : {}) });

  it('gives the chosen label its confidence and the others the probability of the alternative that begins them', () => {
    const tokens = [tok('{"choice":"'), tok('yes', Math.log(0.7), [['yes', Math.log(0.7)], ['no', Math.log(0.2)], ['maybe', Math.log(0.05)]]), tok('"}')];
    const p = labelProbabilities(['yes', 'no', 'maybe', 'later'], 'yes', tokens)!;
    expect(p.yes).toBeCloseTo(0.7, 10);
    expect(p.no).toBeCloseTo(0.2, 10);
    expect(p.maybe).toBeCloseTo(0.05, 10);
    expect(p.later).toBe(0);
  });

  it('reads alternatives that carry the opening quote, and a label cut over several tokens', () => {
    const tokens = [tok('{"choice":'), tok('"bill', Math.log(0.6), [['"bill', Math.log(0.6)], ['"sh', Math.log(0.3)]]), tok('ing', 0), tok('"}')];
    const p = labelProbabilities(['billing', 'shipping'], 'billing', tokens)!;
    expect(p.billing).toBeCloseTo(0.6, 10);
    expect(p.shipping).toBeCloseTo(0.3, 10);
  });

  it('leaves out an alternative that begins several labels, and is null without alternatives', () => {
    const tokens = [tok('{"choice":"'), tok('re', Math.log(0.5), [['re', Math.log(0.5)], ['ref', Math.log(0.4)]]), tok('ject', 0), tok('"}')];
    expect(labelProbabilities(['reject', 'refund', 'review'], 'reject', tokens)).toEqual({ reject: expect.closeTo(0.5, 10), refund: expect.closeTo(0.4, 10), review: 0 });
    expect(labelProbabilities(['yes', 'no'], 'yes', [tok('{"choice":"yes"}', Math.log(0.9))])).toBeNull();
    expect(labelProbabilities(['yes', 'no'], 'yes', null)).toBeNull();
  });
});
