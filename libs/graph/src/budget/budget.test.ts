import { describe, expect, it } from 'vitest';
import { parseGraph } from '../parse';
import { OPTS } from '../parse/fixtures/builders';
import { effectiveBudget, parseBudget } from './budget';
import { budgetBreach, parseModelPrices, priceFor, usageView } from './usage';

describe('budget documents', () => {
  it('reads a budget, drops null members and calls an empty one no budget', () => {
    expect(parseBudget({ maxTokens: 10, maxCostUsd: 0.5, maxWallClockMs: null })).toEqual({ ok: true, budget: { maxTokens: 10, maxCostUsd: 0.5 } });
    expect(parseBudget({})).toEqual({ ok: true, budget: null });
    expect(parseBudget(undefined)).toEqual({ ok: true, budget: null });
  });

  it('names every bad member', () => {
    const r = parseBudget({ maxTokens: 0, maxCostUsd: -1, maxAttempts: 1.5, maxWallClockMs: '9', tokens: 3 });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors).toEqual([
      'budget.maxTokens must be a positive integer',
      'budget.maxCostUsd must be a number ≥ 0',
      'budget.maxAttempts must be a positive integer',
      'budget.maxWallClockMs must be a positive integer',
      "budget has an unknown member 'tokens' (allowed: maxTokens, maxCostUsd, maxWallClockMs, maxAttempts)",
    ]);
    expect(parseBudget([1])).toEqual({ ok: false, errors: ['budget must be an object, not an array'] });
  });

  it('takes the stricter limit per field', () => {
    expect(effectiveBudget({ maxTokens: 5, maxAttempts: 9 }, { maxTokens: 7, maxCostUsd: 1 })).toEqual({ maxTokens: 5, maxAttempts: 9, maxCostUsd: 1 });
    expect(effectiveBudget(null, undefined)).toBeNull();
  });

  it('is a graph member: parsed onto the graph, and a bad one is a graph error', () => {
    const base = { nodes: [{ key: 's', kind: 'Start' }, { key: 'e', kind: 'End', config: { outcome: 'ok' } }], edges: [{ key: 'x', from: 's', to: 'e' }] };
    const good = parseGraph({ ...base, budget: { maxTokens: 100 } }, OPTS);
    expect(good.ok && good.graph.budget).toEqual({ maxTokens: 100 });
    const bad = parseGraph({ ...base, budget: { maxTokens: -1 } }, OPTS);
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.errors.map((e) => e.message)).toContain('budget.maxTokens must be a positive integer');
    const none = parseGraph(base, OPTS);
    expect(none.ok && 'budget' in none.graph).toBe(false);
  });
});

describe('model prices', () => {
  it('accepts a table of per-million-token prices and names every problem', () => {
    expect(parseModelPrices({ m: { inputPerMTok: 0.15, outputPerMTok: 0.6 } })).toEqual({ ok: true, prices: { m: { inputPerMTok: 0.15, outputPerMTok: 0.6 } } });
    const r = parseModelPrices({ m: { inputPerMTok: -1 }, n: 3, o: { inputPerMTok: 1, outputPerMTok: 1, cached: 1 } });
    expect(r.ok === false && r.errors).toEqual([
      'MODEL_PRICES.m.inputPerMTok must be a number ≥ 0 (USD per million tokens)',
      'MODEL_PRICES.m.outputPerMTok must be a number ≥ 0 (USD per million tokens)',
      'MODEL_PRICES.n must be an object { inputPerMTok, outputPerMTok }, not a number',
      "MODEL_PRICES.o has an unknown member 'cached'",
    ]);
    expect(parseModelPrices([]).ok).toBe(false);
  });

  it('prices a model by its exact name, else the longest prefix it extends with a dash', () => {
    const prices = { a: { inputPerMTok: 1, outputPerMTok: 1 }, 'a-b': { inputPerMTok: 2, outputPerMTok: 2 } };
    expect(priceFor(prices, 'a')?.inputPerMTok).toBe(1);
    expect(priceFor(prices, 'a-b-2025')?.inputPerMTok).toBe(2);
    expect(priceFor(prices, 'a-c')?.inputPerMTok).toBe(1);
    expect(priceFor(prices, 'ab')).toBeNull();
    expect(priceFor(prices, null)).toBeNull();
  });
});

describe('budget verdict', () => {
  const view = usageView({ inputTokens: 6, outputTokens: 4, costUsd: 0.5, unpricedTokens: 0, childAttempts: 1 }, 2);
  it('is within budget at each limit and past it one over', () => {
    expect(budgetBreach({ maxTokens: 10, maxCostUsd: 0.5, maxAttempts: 3, maxWallClockMs: 100 }, view, 100)).toBeNull();
    expect(budgetBreach({ maxTokens: 9 }, view, 0)?.reason).toBe('budget maxTokens 9 exceeded: 10 tokens used');
    expect(budgetBreach({ maxCostUsd: 0.49 }, view, 0)?.budget).toBe('maxCostUsd');
    expect(budgetBreach({ maxAttempts: 2 }, view, 0)?.used).toBe(3);
    expect(budgetBreach({ maxWallClockMs: 99 }, view, 100)?.reason).toBe('budget maxWallClockMs 99 exceeded: 100 ms used');
    expect(budgetBreach({ maxWallClockMs: 99 }, view, null)).toBeNull();
  });
});
