import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ModelPrices, RunBudget } from '../budget';
import type { Graph, Json } from '../model';
import { applyPlanToSnapshot } from './apply';
import { plan } from './plan';
import { contextAt, edge, failed, graphOf, node, ok, rowOf, snapshotOf, withResult } from './test-kit';
import type { PlanResult, RunSnapshot, WorkOutcome } from './types';

const PRICES: ModelPrices = { 'gpt-x': { inputPerMTok: 1, outputPerMTok: 2 }, 'gpt-x-mini': { inputPerMTok: 0.5, outputPerMTok: 0.5 } };

function at(snap: RunSnapshot, now: number, prices: ModelPrices = PRICES): { snap: RunSnapshot; result: PlanResult } {
  const result = plan(snap, { ...contextAt(now, {}, `i${now}`), prices });
  return { snap: applyPlanToSnapshot(snap, result), result };
}

/** Start → a → b → c (LlmCall) → End, with a graph budget. */
function chain(budget: RunBudget | null = null, keys = ['a', 'b', 'c']): Graph {
  const nodes = [node('s', 'Start'), ...keys.map((k) => node(k, 'LlmCall')), node('e', 'End')];
  const order = ['s', ...keys, 'e'];
  const g = graphOf(nodes, order.slice(1).map((k, i) => edge(`${order[i]}${k}`, order[i]!, k)));
  return budget ? { ...g, budget } : g;
}

const llm = (inputTokens: number, outputTokens: number, model = 'gpt-x'): Json => ({
  text: 'hi',
  json: null,
  usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens, durationMs: 1, finishReason: 'stop', model },
});

/** Answer the queued `key` with `output` at `now`. */
const answer = (snap: RunSnapshot, key: string, output: Json, now: number, prices?: ModelPrices) => at(withResult(snap, key, ok(output, now)), now, prices);

const runFailed = (r: PlanResult) => r.events.find((e) => e.kind === 'run.failed')?.detail;

describe('run budget: tokens', () => {
  it('fails the run BudgetExceeded once the tokens go past maxTokens, cancelling nothing it never queued', () => {
    let r = at(snapshotOf(chain({ maxTokens: 100 })), 10);
    r = answer(r.snap, 'a', llm(60, 50), 20);
    expect(r.snap.run).toMatchObject({ status: 'Failed', failureClass: 'BudgetExceeded', reason: 'budget maxTokens 100 exceeded: 110 tokens used' });
    expect(r.result.enqueue).toEqual([]);
    expect(rowOf(r.snap, 'a').status).toBe('Succeeded');
    expect(rowOf(r.snap, 'b').status).toBe('Pending');
    expect(runFailed(r.result)).toMatchObject({ class: 'BudgetExceeded', budget: 'maxTokens', limit: 100, used: 110 });
    expect(runFailed(r.result)?.['usage']).toEqual({ tokens: 110, inputTokens: 60, outputTokens: 50, costUsd: 0.00016, unpricedTokens: 0, attempts: 1 });
    expect(r.snap.run.usage).toEqual({ inputTokens: 60, outputTokens: 50, costUsd: 0.00016, unpricedTokens: 0, childAttempts: 0 });
  });

  it('keeps a run that uses exactly maxTokens going, and completes it', () => {
    let r = at(snapshotOf(chain({ maxTokens: 100 }, ['a', 'b'])), 10);
    r = answer(r.snap, 'a', llm(30, 20), 20);
    expect(r.snap.run.status).toBe('Running');
    r = answer(r.snap, 'b', llm(30, 20), 30);
    expect(r.snap.run.status).toBe('Completed');
    expect(r.result.events.find((e) => e.kind === 'run.completed')?.detail).toMatchObject({ usage: { tokens: 100, attempts: 2 }, runBudget: { maxTokens: 100 } });
  });

  it('judges the stricter of the definition budget and the run budget, per field', () => {
    const runTighter = snapshotOf(chain({ maxTokens: 1000, maxAttempts: 1 }), null, { budget: { maxTokens: 100, maxAttempts: 50 } });
    let r = at(runTighter, 10);
    r = answer(r.snap, 'a', llm(100, 1), 20);
    expect(r.snap.run.reason).toBe('budget maxTokens 100 exceeded: 101 tokens used');
    const defTighter = snapshotOf(chain({ maxTokens: 100 }), null, { budget: { maxTokens: 1000 } });
    r = answer(at(defTighter, 10).snap, 'a', llm(100, 1), 20);
    expect(r.snap.run.reason).toBe('budget maxTokens 100 exceeded: 101 tokens used');
    const runOnly = snapshotOf(chain(), null, { budget: { maxTokens: 100 } });
    r = answer(at(runOnly, 10).snap, 'a', llm(100, 1), 20);
    expect(r.snap.run.failureClass).toBe('BudgetExceeded');
    const looser = snapshotOf(chain({ maxTokens: 1000 }), null, { budget: { maxTokens: 5000 } });
    r = answer(at(looser, 10).snap, 'a', llm(100, 1), 20);
    expect(r.snap.run.status).toBe('Running');
  });

  it('counts the tokens of an answer the planner refuses (outputSchema) and of a Tool row not at all', () => {
    const g = graphOf(
      [node('s', 'Start'), node('t', 'Tool'), node('a', 'LlmCall', { outputSchema: { type: 'object', required: ['nope'] }, maxAttempts: 1 }), node('e', 'End')],
      [edge('1', 's', 't'), edge('2', 't', 'a'), edge('3', 'a', 'e')],
    );
    let r = at(snapshotOf(g), 10);
    r = answer(r.snap, 't', llm(500, 500), 20);
    expect(r.snap.run.usage ?? null).toBeNull();
    r = answer(r.snap, 'a', llm(7, 3), 30);
    expect(r.snap.run.status).toBe('Failed');
    expect(r.snap.run.failureClass).toBe('ValidationFailed');
    expect(r.snap.run.usage).toMatchObject({ inputTokens: 7, outputTokens: 3 });
  });

  it('counts the tokens a failed attempt reports with its failure (a refused answer), retries included', () => {
    let r = at(snapshotOf(chain({ maxTokens: 25 }, ['a'])), 10);
    const spent = { inputTokens: 10, outputTokens: 5, totalTokens: 15, model: 'gpt-x' };
    const refused = (reason: string, at: number): WorkOutcome => ({ ok: false, failureClass: 'NodeFailed', reason, startedAt: at, finishedAt: at, usage: spent });
    r = at(withResult(r.snap, 'a', refused('answer outside the labels', 20)), 20);
    expect(r.snap.run.usage).toMatchObject({ inputTokens: 10, outputTokens: 5 });
    expect(rowOf(r.snap, 'a').status).toBe('Pending');
    r = at(r.snap, r.result.wakeAt!);
    r = at(withResult(r.snap, 'a', refused('again', 30)), 1_000_000);
    expect(r.snap.run).toMatchObject({ status: 'Failed', failureClass: 'BudgetExceeded', reason: 'budget maxTokens 25 exceeded: 30 tokens used' });
  });

  it('leaves a run without a budget and without model usage exactly as before (no usage written, no usage on events)', () => {
    let r = at(snapshotOf(graphOf([node('s', 'Start'), node('e', 'End')], [edge('1', 's', 'e')])), 10);
    expect(r.snap.run.status).toBe('Completed');
    expect(r.result.run?.set.usage).toBeUndefined();
    expect(r.result.events.find((e) => e.kind === 'run.completed')?.detail).toEqual({ endKey: 'e' });
    r = at(snapshotOf(chain()), 10);
    expect(r.result.wakeAt).toBe(10 + 600_000);
  });
});

describe('run budget: cost', () => {
  it('prices input and output tokens per model and fails past maxCostUsd', () => {
    // 1,000 in × $1/M + 500 out × $2/M = $0.002
    let r = at(snapshotOf(chain({ maxCostUsd: 0.003 })), 10);
    r = answer(r.snap, 'a', llm(1000, 500), 20);
    expect(r.snap.run.status).toBe('Running');
    expect(r.snap.run.usage?.costUsd).toBe(0.002);
    r = answer(r.snap, 'b', llm(1000, 500), 30);
    expect(r.snap.run).toMatchObject({ status: 'Failed', failureClass: 'BudgetExceeded', reason: 'budget maxCostUsd 0.003 exceeded: 0.004 USD used' });
  });

  it('keeps a run whose cost is exactly maxCostUsd going', () => {
    let r = at(snapshotOf(chain({ maxCostUsd: 0.004 })), 10);
    r = answer(r.snap, 'a', llm(1000, 500), 20);
    r = answer(r.snap, 'b', llm(1000, 500), 30);
    expect(r.snap.run.status).toBe('Running');
    expect(r.snap.run.usage?.costUsd).toBe(0.004);
  });

  it('prices a dated model name by its longest listed prefix and counts an unlisted model as unpriced, cost 0', () => {
    let r = at(snapshotOf(chain({ maxCostUsd: 1 })), 10);
    r = answer(r.snap, 'a', llm(1_000_000, 0, 'gpt-x-mini-2026-01-01'), 20);
    expect(r.snap.run.usage).toMatchObject({ costUsd: 0.5, unpricedTokens: 0 });
    r = answer(r.snap, 'b', llm(5_000_000, 5, 'other-model'), 30);
    expect(r.snap.run.usage).toMatchObject({ costUsd: 0.5, unpricedTokens: 5_000_005, inputTokens: 6_000_000 });
    expect(r.snap.run.status).toBe('Running');
  });
});

describe('run budget: wall-clock', () => {
  const gate = (budget: RunBudget) => ({ ...graphOf([node('s', 'Start'), node('p', 'Pause'), node('e', 'End')], [edge('1', 's', 'p'), edge('2', 'p', 'e')]), budget });

  it('wakes an idle run at its wall-clock limit and fails it then, not at the limit itself', () => {
    let r = at(snapshotOf(gate({ maxWallClockMs: 5000 })), 1000);
    expect(r.snap.run.status).toBe('WaitingForApproval');
    expect(r.result.wakeAt).toBe(6001);
    r = at(r.snap, 6000);
    expect(r.snap.run.status).toBe('WaitingForApproval');
    r = at(r.snap, 6001);
    expect(r.snap.run).toMatchObject({ status: 'Failed', failureClass: 'BudgetExceeded', reason: 'budget maxWallClockMs 5000 exceeded: 5001 ms used' });
    expect(rowOf(r.snap, 'p')).toMatchObject({ status: 'Cancelled', cause: 'RunFailure' });
    expect(r.result.wakeAt).toBeNull();
  });

  it('cancels in-flight work when the wall-clock runs out', () => {
    let r = at(snapshotOf(chain({ maxWallClockMs: 100 })), 0);
    const inv = rowOf(r.snap, 'a').invocationId!;
    expect(r.result.wakeAt).toBe(101);
    r = at(r.snap, 101);
    expect(r.result.cancel).toEqual([{ nodeKey: 'a', invocationId: inv, reason: 'run failed: budget maxWallClockMs 100 exceeded: 101 ms used' }]);
    expect(rowOf(r.snap, 'a').status).toBe('Cancelled');
  });
});

describe('run budget: attempts', () => {
  it('fails the run instead of queueing the attempt past maxAttempts; that row stays Pending', () => {
    let r = at(snapshotOf(chain({ maxAttempts: 2 })), 10);
    r = answer(r.snap, 'a', llm(1, 1), 20);
    r = answer(r.snap, 'b', llm(1, 1), 30);
    expect(r.snap.run).toMatchObject({ status: 'Failed', failureClass: 'BudgetExceeded', reason: 'budget maxAttempts 2 exceeded: 3 attempts needed', totalAttempts: 2 });
    expect(r.result.enqueue).toEqual([]);
    expect(rowOf(r.snap, 'c')).toMatchObject({ status: 'Pending', attempt: 0 });
  });

  it('completes a run that spends exactly maxAttempts', () => {
    let r = at(snapshotOf(chain({ maxAttempts: 2 }, ['a', 'b'])), 10);
    r = answer(r.snap, 'a', llm(1, 1), 20);
    r = answer(r.snap, 'b', llm(1, 1), 30);
    expect(r.snap.run.status).toBe('Completed');
  });

  it('counts automatic retries: a retry past maxAttempts fails the run when it is due', () => {
    let r = at(snapshotOf(chain({ maxAttempts: 1 }, ['a'])), 10);
    r = at(withResult(r.snap, 'a', failed('NodeFailed', 'flaky', 20)), 20);
    expect(rowOf(r.snap, 'a').status).toBe('Pending');
    r = at(r.snap, r.result.wakeAt!);
    expect(r.snap.run.reason).toBe('budget maxAttempts 1 exceeded: 2 attempts needed');
  });

  it('is final: an operator complete of the row it never reached does not reopen a run that went past its budget', () => {
    let r = at(snapshotOf(chain({ maxTokens: 1 }, ['a', 'b'])), 10);
    r = answer(r.snap, 'a', llm(5, 5), 20);
    expect(r.snap.run.failureClass).toBe('BudgetExceeded');
    r = at({ ...r.snap, intents: [{ id: 'x', kind: 'complete', nodeKey: 'b', output: { text: 'by hand' } }] }, 30);
    expect(r.snap.run).toMatchObject({ status: 'Failed', failureClass: 'BudgetExceeded' });
    expect(r.result.events.some((e) => e.kind === 'run.resumed')).toBe(false);
  });
});

describe('run budget: child runs', () => {
  it("rolls an ended child's tokens, cost and attempts into the parent's usage and budget", () => {
    const g = { ...graphOf([node('s', 'Start'), node('w', 'Subworkflow', { config: { definitionId: 'd' } }), node('e', 'End')], [edge('1', 's', 'w'), edge('2', 'w', 'e')]), budget: { maxTokens: 50 } };
    let r = at(snapshotOf(g), 0);
    const childRunId = rowOf(r.snap, 'w').childRunId!;
    const usage = { inputTokens: 40, outputTokens: 20, costUsd: 0.25, unpricedTokens: 0, childAttempts: 3 };
    r = at({ ...r.snap, children: [{ childRunId, nodeKey: 'w', status: 'Completed', output: { outcome: 'ok', result: 1 }, failureClass: 'None', reason: null, usage, totalAttempts: 4 }] }, 10);
    expect(r.snap.run.usage).toEqual({ inputTokens: 40, outputTokens: 20, costUsd: 0.25, unpricedTokens: 0, childAttempts: 7 });
    expect(r.snap.run).toMatchObject({ status: 'Failed', failureClass: 'BudgetExceeded', reason: 'budget maxTokens 50 exceeded: 60 tokens used' });
  });
});

describe('run budget: property', () => {
  it('a chain of model calls fails BudgetExceeded exactly when its tokens go past maxTokens, at the first call that does', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(100), { minLength: 1, maxLength: 5 }), fc.integer({ min: 1, max: 400 }), (tokens, max) => {
        const keys = tokens.map((_, i) => `n${i}`);
        let r = at(snapshotOf(chain({ maxTokens: max }, keys)), 10);
        let sum = 0;
        let crossedAt = -1;
        for (let i = 0; i < keys.length && r.snap.run.status === 'Running'; i++) {
          r = answer(r.snap, keys[i]!, llm(tokens[i]!, 0), 20 + i);
          sum += tokens[i]!;
          if (crossedAt < 0 && sum > max) crossedAt = i;
        }
        if (crossedAt < 0) {
          expect(r.snap.run.status).toBe('Completed');
        } else {
          expect(r.snap.run.failureClass).toBe('BudgetExceeded');
          expect(r.snap.run.usage?.inputTokens).toBe(tokens.slice(0, crossedAt + 1).reduce((a, b) => a + b, 0));
          for (const k of keys.slice(crossedAt + 1)) expect(rowOf(r.snap, k).status).toBe('Pending');
        }
      }),
    );
  });
});
