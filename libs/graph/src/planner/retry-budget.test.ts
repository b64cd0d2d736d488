import { describe, expect, it } from 'vitest';
import { DEFAULT_CORE_OPTIONS } from '../model';
import { drive, edge, failed, graphOf, node, ok, rowOf, snapshotOf, step, withResult } from './test-kit';

/** Start → `n` Tool nodes in a line → End. */
function chainOf(n: number) {
  const nodes = [node('s', 'Start'), ...Array.from({ length: n }, (_, i) => node(`t${i}`, 'Tool')), node('e', 'End')];
  const keys = nodes.map((x) => x.key);
  return graphOf(nodes, keys.slice(1).map((k, i) => edge(`e${i}`, keys[i]!, k)));
}

describe('the run retry budget (MAX_TOTAL_ATTEMPTS)', () => {
  it('completes a chain as long as the node cap under the default budget: first attempts are never charged', () => {
    const g = chainOf(DEFAULT_CORE_OPTIONS.maxNodesPerDefinition - 2);
    const r = drive(snapshotOf(g), () => ok({}), {}, 1_000);
    expect(r.terminal).toBe(true);
    expect(r.snap.run.status).toBe('Completed');
    expect(r.snap.run.totalAttempts).toBe(DEFAULT_CORE_OPTIONS.maxNodesPerDefinition - 2);
  });

  it('completes a 148-node chain with a budget of 50', () => {
    const r = drive(snapshotOf(chainOf(146)), () => ok({}), { maxTotalAttempts: 50 }, 1_000);
    expect(r.snap.run.status).toBe('Completed');
  });

  it('lets the run retry as many times as the budget, then fails the next retry AttemptsExhausted naming the budget', () => {
    // every first attempt of t0 and t1 fails once; the budget holds one retry
    const r = drive(
      snapshotOf(chainOf(2)),
      (item) => (item.attempt === 1 ? failed('NodeFailed', 'flaky') : ok({})),
      { maxTotalAttempts: 1 },
      200,
    );
    expect(rowOf(r.snap, 't0')).toMatchObject({ status: 'Succeeded', attempt: 2 });
    expect(rowOf(r.snap, 't1')).toMatchObject({ status: 'Failed', failureClass: 'AttemptsExhausted', attempt: 1 });
    expect(rowOf(r.snap, 't1').reason).toContain('run retry budget of 1 (MAX_TOTAL_ATTEMPTS) spent');
    expect(r.snap.run.status).toBe('Failed');
  });

  it('with a budget of 0 never retries but still runs every first attempt', () => {
    const { snap } = step(snapshotOf(chainOf(1)), 0, { maxTotalAttempts: 0 });
    expect(rowOf(snap, 't0')).toMatchObject({ status: 'Queued', attempt: 1 });
    const r = step(withResult(snap, 't0', failed('NodeFailed', 'x')), 10, { maxTotalAttempts: 0 });
    expect(rowOf(r.snap, 't0')).toMatchObject({ status: 'Failed', failureClass: 'AttemptsExhausted' });
  });
});
