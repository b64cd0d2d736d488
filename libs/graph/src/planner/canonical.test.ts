import { describe, expect, it } from 'vitest';
import { EVENT_KINDS, type Graph, type Json } from '../model';
import { parseGraph } from '../parse';
import { BUILTIN_TOOLS, canonicalEight, canonicalEightWithEcho } from '../parse/fixtures/canonical-eight';
import { applyPlanToSnapshot } from './apply';
import { plan } from './plan';
import { contextAt, rowOf, snapshotOf } from './test-kit';
import type { PlanResult, RunSnapshot, WorkOutcome } from './types';

function parsed(doc = canonicalEight()): Graph {
  const r = parseGraph(doc, { maxNodes: 200, tools: BUILTIN_TOOLS });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.graph;
}

/** Drive the run: answer work with `answer`, decide parked gates with `decide`. */
function run(graph: Graph, answer: (key: string) => WorkOutcome, decide: 'Approve' | 'Reject' = 'Approve') {
  let snap: RunSnapshot = snapshotOf(graph, { request: 'check this' });
  const all: PlanResult[] = [];
  for (let t = 1; t < 50 && !['Completed', 'Failed', 'Cancelled'].includes(snap.run.status); t++) {
    const r = plan(snap, contextAt(t * 1000, {}, `t${t}`));
    all.push(r);
    snap = applyPlanToSnapshot(snap, r);
    snap = { ...snap, results: r.enqueue.map((w) => ({ invocationId: w.invocationId, nodeKey: w.nodeKey, outcome: answer(w.nodeKey) })) };
    const gate = snap.nodes.find((n) => n.status === 'WaitingForApproval');
    if (gate && !gate.decision) {
      snap = {
        ...snap,
        nodes: snap.nodes.map((n) =>
          n === gate ? { ...n, decision: { operationId: 'op1', decision: decide, comment: null, payload: null, at: t, applied: false } } : n,
        ),
        intents: [{ id: `d${t}`, kind: 'decide', nodeKey: gate.nodeKey, operationId: 'op1' }],
      };
    }
  }
  return { snap, all, output: all.map((r) => r.run?.set.output).find((o) => o !== undefined) };
}

const ok = (output: Json): WorkOutcome => ({ ok: true, output, startedAt: null, finishedAt: 1 });

describe('the canonical eight-node graph', () => {
  it('completes through the review branch once the Pause is approved by a decide intent', () => {
    const { snap, all, output } = run(parsed(), (key) => (key === 'analyze' ? ok({ text: 't', json: { requiresReview: true } }) : ok({ result: 'notes' })));
    expect(snap.run.status).toBe('Completed');
    expect(['review', 'lookup', 'fanout', 'merge', 'done'].map((k) => rowOf(snap, k).status)).toEqual(['Succeeded', 'Skipped', 'Succeeded', 'Succeeded', 'Succeeded']);
    expect(rowOf(snap, 'check').output?.branch).toBe('yes');
    expect(rowOf(snap, 'review').output?.branch).toBe('approved');
    expect(output).toMatchObject({ outcome: 'completed' });
    const kinds = all.flatMap((r) => r.events.map((e) => e.kind));
    expect(kinds).toEqual(expect.arrayContaining(['run.started', 'gate.requested', 'run.waiting', 'gate.decided', 'run.completed']));
    for (const k of kinds) expect(EVENT_KINDS).toContain(k);
  });

  it('completes through the rejected edge straight to done when the Pause is rejected', () => {
    const { snap } = run(parsed(), () => ok({ text: 't', json: { requiresReview: true } }), 'Reject');
    expect(snap.run.status).toBe('Completed');
    expect(['fanout', 'merge', 'done'].map((k) => rowOf(snap, k).status)).toEqual(['Skipped', 'Skipped', 'Succeeded']);
  });

  it('completes through the lookup branch when no review is needed', () => {
    const { snap, output } = run(parsed(), (key) => (key === 'analyze' ? ok({ text: 't', json: { requiresReview: false } }) : ok({ result: 'notes' })));
    expect(snap.run.status).toBe('Completed');
    expect(['review', 'lookup', 'fanout', 'merge', 'done'].map((k) => rowOf(snap, k).status)).toEqual(['Skipped', 'Succeeded', 'Succeeded', 'Succeeded', 'Succeeded']);
    expect(rowOf(snap, 'check').output?.branch).toBe('no');
    const result = (output as { result: { input: { output: Record<string, { output: unknown }> } } }).result;
    expect(result.input.output['fanout']?.output).toEqual({ result: 'notes' });
  });

  it('runs the Tool variant of the canonical graph on the tool lane', () => {
    const first = plan(snapshotOf(parsed(canonicalEightWithEcho())), contextAt(1));
    expect(first.enqueue.map((w) => [w.nodeKey, w.lane])).toEqual([['analyze', 'tool']]);
  });
});
