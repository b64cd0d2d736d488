import { describe, expect, it } from 'vitest';
import { edge, graphOf, node, ok, rowOf, snapshotOf, step, withResult } from './test-kit';
import type { ChildRunState, RunSnapshot, StepAllowance } from './types';

const fan = () =>
  graphOf(
    [node('s', 'Start'), node('a', 'Tool'), node('b', 'Tool'), node('e', 'End', { joinPolicy: 'Any' })],
    [edge('1', 's', 'a'), edge('2', 's', 'b'), edge('3', 'a', 'e'), edge('4', 'b', 'e')],
  );
const allow = (snap: RunSnapshot, a: StepAllowance): RunSnapshot => ({ ...snap, run: { ...snap.run, stepAllowance: a } });

describe('pause, breakpoints and step', () => {
  it('admits nothing while the run is paused but still lands in-flight results', () => {
    let { snap } = step(snapshotOf(graphOf([node('s', 'Start'), node('a', 'Tool'), node('b', 'Tool'), node('e', 'End')], [edge('1', 's', 'a'), edge('2', 'a', 'b'), edge('3', 'b', 'e')])), 0);
    snap = { ...snap, run: { ...snap.run, paused: true } };
    const r = step(withResult(snap, 'a', ok({})), 10);
    expect(rowOf(r.snap, 'a').status).toBe('Succeeded');
    expect(rowOf(r.snap, 'b').status).toBe('Pending');
    expect(r.result.enqueue).toEqual([]);
    expect(r.snap.run.status).toBe('Running');
  });

  it('steps exactly one node with mode one and consumes the allowance once', () => {
    const s0 = snapshotOf(fan(), null, { paused: true });
    let r = step(allow(s0, { id: 'x', mode: 'one', nodeKey: null }), 0);
    expect(rowOf(r.snap, 's').status).toBe('Succeeded');
    expect(rowOf(r.snap, 'a').status).toBe('Pending');
    expect(r.result.run?.set.stepAllowance).toBeNull();
    r = step(allow(r.snap, { id: 'y', mode: 'one', nodeKey: null }), 10);
    expect(['a', 'b'].map((k) => rowOf(r.snap, k).status)).toEqual(['Queued', 'Pending']);
    expect(r.snap.run.stepAllowance).toBeNull();
  });

  it('steps every currently eligible node with mode wave and none that become eligible after', () => {
    let r = step(allow(snapshotOf(fan(), null, { paused: true }), { id: 'x', mode: 'one', nodeKey: null }), 0);
    r = step(allow(r.snap, { id: 'w', mode: 'wave', nodeKey: null }), 10);
    expect(['a', 'b'].map((k) => rowOf(r.snap, k).status)).toEqual(['Queued', 'Queued']);
    expect(r.snap.run.stepAllowance).toBeNull();
  });

  it('steps the named node with mode node and keeps the allowance until that node is eligible', () => {
    let r = step(allow(snapshotOf(fan(), null, { paused: true }), { id: 'n', mode: 'node', nodeKey: 'b' }), 0);
    expect(rowOf(r.snap, 's').status).toBe('Pending');
    expect(r.snap.run.stepAllowance?.id).toBe('n');
    r = step(allow(r.snap, { id: 'o', mode: 'one', nodeKey: null }), 5);
    r = step(allow(r.snap, { id: 'n2', mode: 'node', nodeKey: 'b' }), 10);
    expect(['a', 'b'].map((k) => rowOf(r.snap, k).status)).toEqual(['Pending', 'Queued']);
    expect(r.snap.run.stepAllowance).toBeNull();
  });

  it('holds a node listed as a breakpoint at Pending until a step admits it', () => {
    let r = step(snapshotOf(fan(), null, { breakpoints: ['b'] }), 0);
    expect(['a', 'b'].map((k) => rowOf(r.snap, k).status)).toEqual(['Queued', 'Pending']);
    expect(r.snap.run.status).toBe('Running');
    r = step(allow(r.snap, { id: 'n', mode: 'node', nodeKey: 'b' }), 10);
    expect(rowOf(r.snap, 'b').status).toBe('Queued');
  });
});

describe('child runs', () => {
  const child = (snap: RunSnapshot, key: string, status: ChildRunState['status'], output: ChildRunState['output'] = null): RunSnapshot => ({
    ...snap,
    children: [
      ...snap.children.filter((c) => c.nodeKey !== key),
      { childRunId: rowOf(snap, key).childRunId!, nodeKey: key, status, output, failureClass: status === 'Failed' ? 'NodeFailed' : 'None', reason: null },
    ],
  });

  it('starts a Subworkflow child with the predecessor output and settles the node with the child run output', () => {
    const g = graphOf([node('s', 'Start'), node('w', 'Subworkflow', { config: { definitionId: 'def-9' } }), node('e', 'End')], [edge('1', 's', 'w'), edge('2', 'w', 'e')]);
    let r = step(snapshotOf(g, { v: 1 }), 0);
    expect(r.result.startChildren).toEqual([{ nodeKey: 'w', childRunId: rowOf(r.snap, 'w').childRunId, definitionId: 'def-9', input: { input: { v: 1 } } }]);
    expect(rowOf(r.snap, 'w').status).toBe('Running');
    r = step(child(r.snap, 'w', 'WaitingForApproval'), 10);
    expect(r.snap.run.status).toBe('WaitingForApproval');
    r = step(child(r.snap, 'w', 'Completed', { outcome: 'ok', result: 5 }), 20);
    expect(rowOf(r.snap, 'w').output?.output).toEqual({ outcome: 'ok', result: 5 });
    expect(r.snap.run.status).toBe('Completed');
  });

  it('iterates a Loop until its exit condition holds on the body output envelope', () => {
    const g = graphOf(
      [node('s', 'Start'), node('l', 'Loop', { config: { body: 'def-b', maxIterations: 5, exitCondition: { path: 'output.result', op: 'Gte', value: 3 } } }), node('e', 'End')],
      [edge('1', 's', 'l'), edge('2', 'l', 'e')],
    );
    let r = step(snapshotOf(g, 0), 0);
    const inputs: unknown[] = [r.result.startChildren[0]!.input];
    for (let i = 1; i <= 2; i++) {
      r = step(child(r.snap, 'l', 'Completed', { outcome: 'ok', result: i }), i * 10);
      expect(r.result.startChildren).toHaveLength(1);
      inputs.push(r.result.startChildren[0]!.input);
    }
    expect(inputs[1]).toEqual({ outcome: 'ok', result: 1 });
    r = step(child(r.snap, 'l', 'Completed', { outcome: 'ok', result: 3 }), 40);
    expect(rowOf(r.snap, 'l').output?.output).toEqual({
      iterations: 3,
      exitReason: 'condition',
      last: { outcome: 'ok', result: 3 },
      results: [1, 2, 3].map((result) => ({ outcome: 'ok', result })),
    });
  });

  it('resumes a Loop seeded by a fork (loop.resume) at its failed iteration, fed the last output and keeping the results; without the seed it starts at 1', () => {
    const g = graphOf(
      [node('s', 'Start'), node('l', 'Loop', { config: { body: 'def-b', maxIterations: 5, exitCondition: { path: 'output.result', op: 'Gte', value: 3 } } }), node('e', 'End')],
      [edge('1', 's', 'l'), edge('2', 'l', 'e')],
    );
    const r1 = { outcome: 'ok', result: 1 };
    const r2 = { outcome: 'ok', result: 2 };
    const seeded = (resume: boolean): RunSnapshot => {
      const snap = snapshotOf(g, 0, { status: 'Running', startedAt: 0 });
      const rows = snap.nodes.map((row) => {
        if (row.nodeKey === 's') return { ...row, status: 'Succeeded' as const, attempt: 1, output: { status: 'succeeded' as const, attempt: 1, branch: null, output: { input: 0 } } };
        if (row.nodeKey === 'l') return { ...row, loop: { iteration: 3, results: [r1, r2], last: r2, ...(resume ? { resume: true } : {}) } };
        return row;
      });
      return { ...snap, nodes: rows };
    };
    let r = step(seeded(true), 0);
    expect(r.result.startChildren).toMatchObject([{ nodeKey: 'l', input: r2 }]);
    expect(rowOf(r.snap, 'l').loop).toEqual({ iteration: 3, results: [r1, r2], last: r2 });
    expect(r.result.events.find((e) => e.kind === 'node.started')?.detail).toMatchObject({ iteration: 3 });
    r = step(child(r.snap, 'l', 'Completed', { outcome: 'ok', result: 3 }), 10);
    expect(rowOf(r.snap, 'l').output?.output).toMatchObject({ iterations: 3, exitReason: 'condition', results: [r1, r2, { outcome: 'ok', result: 3 }] });

    const fresh = step(seeded(false), 0);
    expect(fresh.result.startChildren).toMatchObject([{ nodeKey: 'l', input: { input: 0 } }]);
    expect(rowOf(fresh.snap, 'l').loop).toEqual({ iteration: 1, results: [], last: null });
  });

  it('stops a Loop at maxIterations', () => {
    const g = graphOf([node('s', 'Start'), node('l', 'Loop', { config: { body: 'b', maxIterations: 1 } }), node('e', 'End')], [edge('1', 's', 'l'), edge('2', 'l', 'e')]);
    const r0 = step(snapshotOf(g), 0);
    const r = step(child(r0.snap, 'l', 'Completed', 7), 10);
    expect(rowOf(r.snap, 'l').output?.output).toMatchObject({ iterations: 1, exitReason: 'maxIterations', last: 7 });
  });

  it('cancels children first when the run is cancelled, and reads Cancelled once the child ended', () => {
    const g = graphOf([node('s', 'Start'), node('w', 'Subworkflow', { config: { definitionId: 'd' } }), node('e', 'End')], [edge('1', 's', 'w'), edge('2', 'w', 'e')]);
    let r = step(snapshotOf(g), 0);
    const childId = rowOf(r.snap, 'w').childRunId!;
    r = step({ ...r.snap, intents: [{ id: 'c', kind: 'cancel', reason: null }] }, 10);
    expect(r.result.cancelChildren).toEqual([childId]);
    expect(r.snap.run.status).toBe('Cancelling');
    expect(rowOf(r.snap, 'w').status).toBe('Running');
    r = step(child(r.snap, 'w', 'Cancelled'), 20);
    expect(rowOf(r.snap, 'w').status).toBe('Cancelled');
    expect(r.snap.run.status).toBe('Cancelled');
  });

  it('refuses to start a child beyond the nesting depth', () => {
    const g = graphOf([node('s', 'Start'), node('w', 'Subworkflow', { config: { definitionId: 'd' } }), node('e', 'End')], [edge('1', 's', 'w'), edge('2', 'w', 'e')]);
    const r = step(snapshotOf(g, null, { depth: 5 }), 0);
    expect(rowOf(r.snap, 'w')).toMatchObject({ status: 'Failed', failureClass: 'ValidationFailed' });
    expect(r.result.startChildren).toEqual([]);
  });
});
