import { describe, expect, it } from 'vitest';
import type { Graph } from '../model';
import { foldState } from '../state/fold';
import { edge, graphOf, node, rowOf, snapshotOf, step } from './test-kit';
import type { ChildRunState, RunSnapshot } from './types';

/** start (writes topic) → sub (Subworkflow, stateIn/stateOut) → end; findings append. */
function parent(config: Record<string, unknown>): Graph {
  const g = graphOf(
    [
      node('start', 'Start', { writes: { topic: 'output.input.topic' } }),
      node('sub', 'Subworkflow', { config: { definitionId: 'def-child', ...config } }),
      node('end', 'End', { config: { outcome: 'done', resultPath: 'state' } }),
    ],
    [edge('e1', 'start', 'sub'), edge('e2', 'sub', 'end')],
  );
  g.state = { schema: null, reducers: { findings: 'append' }, initial: { findings: ['seed'] } };
  return g;
}

function childEnds(snap: RunSnapshot, state: ChildRunState['state'], status: ChildRunState['status'] = 'Completed'): RunSnapshot {
  const row = rowOf(snap, 'sub');
  return {
    ...snap,
    children: [{ childRunId: row.childRunId!, nodeKey: 'sub', status, output: { outcome: 'ok', result: 1 }, failureClass: 'None', reason: null, state }],
  };
}

describe('Subworkflow stateIn / stateOut', () => {
  it("seeds the child's state from stateIn paths into the node's input document", () => {
    const r = step(snapshotOf(parent({ stateIn: { subject: 'state.topic', who: 'run.input.who' } }), { topic: 'tides', who: 'ana' }), 1_000);
    expect(r.result.startChildren).toEqual([
      expect.objectContaining({ nodeKey: 'sub', definitionId: 'def-child', state: { subject: 'tides', who: 'ana' } }),
    ]);
  });

  it('starts the child without a seed when stateIn is absent', () => {
    const r = step(snapshotOf(parent({}), { topic: 'tides' }), 1_000);
    expect(r.result.startChildren[0]).not.toHaveProperty('state');
  });

  it('fails the node ValidationFailed, and starts no child, when a stateIn path resolves to nothing', () => {
    const r = step(snapshotOf(parent({ stateIn: { subject: 'state.nope' } }), { topic: 'tides' }), 1_000);
    expect(r.result.startChildren).toEqual([]);
    expect(rowOf(r.snap, 'sub')).toMatchObject({ status: 'Failed', failureClass: 'ValidationFailed' });
    expect(rowOf(r.snap, 'sub').reason).toContain("stateIn.subject: path 'state.nope' resolves to nothing");
  });

  it("writes the child's final state through the parent's reducers when the child completes", () => {
    let s = step(snapshotOf(parent({ stateOut: { findings: 'found', summary: 'report.text' } }), { topic: 'tides' }), 1_000).snap;
    const r = step(childEnds(s, { found: 'a wave', report: { text: 'high tide' } }), 2_000);
    s = r.snap;
    expect(rowOf(s, 'sub').status).toBe('Succeeded');
    expect(r.result.stateWrites).toEqual([{ seq: expect.any(Number), nodeKey: 'sub', writes: { findings: 'a wave', summary: 'high tide' } }]);
    expect(foldState(s.graph.state!, s.stateLog!)).toEqual({ topic: 'tides', findings: ['seed', 'a wave'], summary: 'high tide' });
    expect(s.run.status).toBe('Completed');
  });

  it('fails the node ValidationFailed when a stateOut path is absent from the child state', () => {
    const s = step(snapshotOf(parent({ stateOut: { findings: 'found' } }), { topic: 'tides' }), 1_000).snap;
    const r = step(childEnds(s, {}), 2_000);
    expect(rowOf(r.snap, 'sub')).toMatchObject({ status: 'Failed', failureClass: 'ValidationFailed' });
    expect(rowOf(r.snap, 'sub').reason).toContain("stateOut.findings: path 'found' resolves to nothing in the child run's final state");
  });

  it('writes nothing when the child fails', () => {
    const s = step(snapshotOf(parent({ stateOut: { findings: 'found' } }), { topic: 'tides' }), 1_000).snap;
    const r = step(childEnds(s, null, 'Failed'), 2_000);
    expect(r.result.stateWrites ?? []).toEqual([]);
    expect(rowOf(r.snap, 'sub').status).toBe('Failed');
  });
});

describe('Subworkflow inputTemplate', () => {
  it("renders the child run's input over the node's input document, a lone placeholder keeping its JSON type", () => {
    const r = step(snapshotOf(parent({ inputTemplate: { about: 'the {{ state.topic }}', who: '{{ run.input.who }}', tags: '{{ run.input.tags }}' } }), { topic: 'tides', who: 'ana', tags: ['a', 'b'] }), 1_000);
    expect(r.result.startChildren).toEqual([expect.objectContaining({ nodeKey: 'sub', input: { about: 'the tides', who: 'ana', tags: ['a', 'b'] } })]);
  });

  it('fails the node ValidationFailed, keyed to the member, and starts no child when the template names a missing value', () => {
    const r = step(snapshotOf(parent({ inputTemplate: { who: '{{ run.input.nobody }}' } }), { topic: 'tides' }), 1_000);
    expect(r.result.startChildren).toEqual([]);
    expect(rowOf(r.snap, 'sub')).toMatchObject({ status: 'Failed', failureClass: 'ValidationFailed' });
    expect(rowOf(r.snap, 'sub').reason).toMatch(/^nodes\.sub\.config\.inputTemplate\.who: /);
  });
});
