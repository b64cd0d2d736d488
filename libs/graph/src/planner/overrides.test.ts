import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { GraphEdge } from '../model';
import { edge, graphOf, node, ok, rowOf, snapshotOf, step, withResult } from './test-kit';
import type { RunSnapshot } from './types';

/** Start → Tool `a` → Tool `t` → End, the edge `x` (a → t) as given. */
function lineThrough(x: Partial<GraphEdge>) {
  return graphOf(
    [node('s', 'Start'), node('a', 'Tool'), node('t', 'Tool'), node('e', 'End', { config: { outcome: 'done' } })],
    [edge('1', 's', 'a'), edge('x', 'a', 't', x), edge('3', 't', 'e')],
  );
}

type Verdict = boolean | null;

/** The run as the API leaves it after an override write of edge `x`. */
function written(snap: RunSnapshot, verdict: Verdict): RunSnapshot {
  const edgeOverrides = { ...snap.run.edgeOverrides };
  if (verdict === null) delete edgeOverrides['x'];
  else edgeOverrides['x'] = verdict;
  return { ...snap, run: { ...snap.run, edgeOverrides } };
}

/**
 * Writes `writes` while `a` runs, with a plan call (a dispatcher tick) after each write
 * whose `ticks` flag is set, then lets `a` succeed with `output`; returns `t`'s status.
 */
function targetAfter(x: Partial<GraphEdge>, output: { v: number }, writes: Verdict[], ticks: boolean[]): string {
  let { snap } = step(snapshotOf(lineThrough(x)), 0);
  expect(rowOf(snap, 'a').status).toBe('Queued');
  let now = 10;
  writes.forEach((verdict, i) => {
    snap = written(snap, verdict);
    if (ticks[i]) snap = step(snap, (now += 10)).snap;
  });
  expect(rowOf(snap, 'a').status).toBe('Queued');
  return rowOf(step(withResult(snap, 'a', ok(output)), (now += 10)).snap, 't').status;
}

describe('edge overrides written while the source runs', () => {
  it('keeps the target Pending while the source of an edge overridden to false runs, and runs it once the override is cleared', () => {
    let { snap } = step(snapshotOf(lineThrough({})), 0);
    snap = step(written(snap, false), 10).snap;
    expect(rowOf(snap, 't').status).toBe('Pending');
    snap = step(written(snap, null), 20).snap;
    expect(rowOf(step(withResult(snap, 'a', ok({ v: 1 })), 30).snap, 't').status).toBe('Queued');
  });

  it('does not admit the target of an edge overridden to true before its source settles', () => {
    let { snap } = step(snapshotOf(lineThrough({})), 0);
    snap = step(written(snap, true), 10).snap;
    expect(rowOf(snap, 't').status).toBe('Pending');
    expect(rowOf(step(withResult(snap, 'a', ok({ v: 1 })), 20).snap, 't').status).toBe('Queued');
  });

  it('skips the target when the override standing as the source settles is false', () => {
    expect(targetAfter({}, { v: 1 }, [true, null, false], [true, true, true])).toBe('Skipped');
  });

  it('acts on the last write, whatever ticks fall between the writes (unconditional and unfired conditional edge)', () => {
    const verdict = fc.constantFrom<Verdict>(true, false, null);
    fc.assert(
      fc.property(fc.array(fc.tuple(verdict, fc.boolean()), { minLength: 1, maxLength: 6 }), (seq) => {
        const writes = seq.map(([v]) => v);
        const ticks = seq.map(([, t]) => t);
        const last = writes.at(-1);
        // unconditional: only false keeps the target from running
        expect(targetAfter({}, { v: 1 }, writes, ticks)).toBe(last === false ? 'Skipped' : 'Queued');
        // a condition that does not fire: only true runs the target
        const unfired = { condition: { path: 'output.v', op: 'Eq' as const, value: 1 } };
        expect(targetAfter(unfired, { v: 2 }, writes, ticks)).toBe(last === true ? 'Queued' : 'Skipped');
      }),
      { numRuns: 300 },
    );
  });
});
