import { describe, expect, it } from 'vitest';
import { edgeVerdict } from './edge-verdict';
import { indexGraph } from './graph-index';
import { edge, failed, graphOf, node, ok, rowOf, snapshotOf, step, withResult } from './test-kit';
import type { Intent, RunSnapshot } from './types';

const withIntents = (snap: RunSnapshot, ...intents: Intent[]): RunSnapshot => ({ ...snap, intents: [...snap.intents, ...intents] });
const retry: Intent = { id: 'retry-d', kind: 'retry', nodeKey: 'd' };

/** s → d (DecisionModel, one attempt per retry) → a | b (Ends on its choice) */
function decision() {
  return graphOf(
    [node('s', 'Start'), node('d', 'DecisionModel', { maxAttempts: 1 }), node('a', 'End', { config: { outcome: 'a' } }), node('b', 'End', { config: { outcome: 'b' } })],
    [
      edge('1', 's', 'd'),
      edge('da', 'd', 'a', { condition: { path: 'output.choice', op: 'Eq', value: 'a' } }),
      edge('db', 'd', 'b', { condition: { path: 'output.choice', op: 'Eq', value: 'b' } }),
    ],
  );
}

/** A run whose decision `d` answered `a` below its confidence and is held. */
function heldRun(): RunSnapshot {
  let { snap } = step(snapshotOf(decision()), 0);
  snap = step(withResult(snap, 'd', ok({ choice: 'a', confidence: 0.3, held: true })), 10).snap;
  expect(rowOf(snap, 'd')).toMatchObject({ status: 'Succeeded', held: true, pendingDecisionKind: 'Operator' });
  return snap;
}

const verdictOf = (snap: RunSnapshot, key: string) => {
  const e = snap.graph.edges.find((x) => x.key === key)!;
  return edgeVerdict({ index: indexGraph(snap.graph), rows: new Map(snap.nodes.map((r) => [r.nodeKey, r])), overrides: snap.run.edgeOverrides }, e);
};

describe("an operator's retry of a held decision", () => {
  it('holds every edge that reads it while it asks again', () => {
    const snap = step(withIntents(heldRun(), retry), 20).snap;
    expect(rowOf(snap, 'd')).toMatchObject({ status: 'Queued', held: true });
    expect(verdictOf(snap, 'da')).toBe('Pending');
    expect(verdictOf(snap, 'db')).toBe('Pending');
    expect(rowOf(snap, 'a').status).toBe('Pending');
    expect(rowOf(snap, 'b').status).toBe('Pending');
  });

  it('keeps the node held with its earlier answer when asking again fails for good, never failing it or the run', () => {
    let snap = step(withIntents(heldRun(), retry), 20).snap;
    const r = step(withResult(snap, 'd', failed('NodeFailed', 'provider answered 500')), 30);
    snap = r.snap;
    expect(rowOf(snap, 'd')).toMatchObject({ status: 'Succeeded', held: true, pendingDecisionKind: 'Operator', failureClass: 'None' });
    expect(rowOf(snap, 'd').output?.output).toEqual({ choice: 'a', confidence: 0.3, held: true });
    expect(rowOf(snap, 'd').reason).toMatch(/asking again failed \(AttemptsExhausted\).*provider answered 500/);
    expect(snap.run.status).toBe('WaitingForApproval');
    expect(r.result.events.map((e) => e.kind)).not.toContain('node.failed');
    expect(r.result.events.find((e) => e.kind === 'node.completed')?.detail).toMatchObject({ held: true, reaskFailed: { class: 'AttemptsExhausted' } });
    expect(verdictOf(snap, 'da')).toBe('Held');
    // and it can be asked again: a confident answer settles the hold and routes
    snap = step(withIntents(snap, { ...retry, id: 'retry-2' }), 40).snap;
    snap = step(withResult(snap, 'd', ok({ choice: 'b', confidence: 0.9, held: false })), 50).snap;
    expect(rowOf(snap, 'd')).toMatchObject({ status: 'Succeeded', held: false, pendingDecisionKind: null, reason: null });
    expect(rowOf(snap, 'b').status).toBe('Succeeded');
    expect(rowOf(snap, 'a').status).toBe('Skipped');
    expect(snap.run.status).toBe('Completed');
  });

  it('keeps it held through a non-retryable failure of the re-ask too', () => {
    let snap = step(withIntents(heldRun(), retry), 20).snap;
    snap = step(withResult(snap, 'd', failed('ValidationFailed', 'bad answer')), 30).snap;
    expect(rowOf(snap, 'd')).toMatchObject({ status: 'Succeeded', held: true, pendingDecisionKind: 'Operator' });
    expect(snap.run.status).toBe('WaitingForApproval');
  });

  it('keeps its held answer between attempts of a re-ask that backs off, and ends held if they all fail', () => {
    const g = decision();
    g.nodes[1]!.maxAttempts = 2;
    let { snap } = step(snapshotOf(g), 0);
    snap = step(withResult(snap, 'd', ok({ choice: 'a', held: true })), 10).snap;
    snap = step(withIntents(snap, retry), 20).snap;
    snap = step(withResult(snap, 'd', failed('NodeFailed', 'flaky')), 30).snap;
    expect(rowOf(snap, 'd')).toMatchObject({ status: 'Pending', held: true });
    expect(rowOf(snap, 'd').output?.output).toEqual({ choice: 'a', held: true });
    snap = step(snap, 100_000).snap;
    expect(rowOf(snap, 'd').status).toBe('Queued');
    snap = step(withResult(snap, 'd', failed('NodeFailed', 'flaky again')), 100_010).snap;
    expect(rowOf(snap, 'd')).toMatchObject({ status: 'Succeeded', held: true, pendingDecisionKind: 'Operator' });
    expect(rowOf(snap, 'd').output?.output).toEqual({ choice: 'a', held: true });
  });
});
