// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import { usageFacts } from './RunFacts';

const usage = { tokens: 1200, costUsd: 0.0042, unpricedTokens: 0, attempts: 7 };

describe('a run’s usage against its budget', () => {
  it('shows what was spent, each limit with its share, and nothing for an unbudgeted run that used no model', () => {
    expect(usageFacts({ ...usage, tokens: 0, costUsd: 0 }, null)).toEqual([]);
    expect(usageFacts(usage, null).map((u) => [u.key, u.text, u.share])).toEqual([
      ['tokens', '1,200', undefined],
      ['cost', '$0.0042', undefined],
    ]);
    expect(usageFacts(usage, { maxTokens: 1000, maxCostUsd: 1, maxAttempts: 10, maxWallClockMs: 600_000 }).map((u) => [u.key, u.text, u.share])).toEqual([
      ['tokens', '1,200 of 1,000', 1.2],
      ['cost', '$0.0042 of $1.00', 0.0042],
      ['attempts', '7 of 10', 0.7],
      ['wallClock', 'limit 10 min', undefined],
    ]);
  });

  it('says how many tokens had no price', () => {
    expect(usageFacts({ ...usage, unpricedTokens: 300 }, null)[1]!.text).toBe('$0.0042 (+300 unpriced tokens)');
  });
});
