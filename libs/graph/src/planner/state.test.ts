import { describe, expect, it } from 'vitest';
import type { Graph, StateSpec } from '../model';
import { foldState } from '../state/fold';
import { edge, graphOf, node, ok, rowOf, snapshotOf, step, withResult } from './test-kit';
import type { RunSnapshot } from './types';

/** start (writes topic) → s1, s2 (append findings) → sum (reads state) → end. */
function searches(state: Partial<StateSpec> = {}): Graph {
  const g = graphOf(
    [
      node('start', 'Start', { writes: { topic: 'output.input.topic' } }),
      node('s1', 'Tool', { writes: { findings: 'output.hit' } }),
      node('s2', 'Tool', { writes: { findings: 'output.hit' } }),
      node('summary', 'LlmCall'),
      node('end', 'End'),
    ],
    [edge('e1', 'start', 's1'), edge('e2', 'start', 's2'), edge('e3', 's1', 'summary'), edge('e4', 's2', 'summary'), edge('e5', 'summary', 'end')],
  );
  g.state = { schema: null, reducers: { findings: 'append' }, initial: { findings: [] }, ...state };
  return g;
}

function started(g: Graph): RunSnapshot {
  return step(snapshotOf(g, { topic: 'tides' }), 1_000).snap;
}

describe('run state in the planner', () => {
  it('maps the run input into state at Start and hands every node the state in its input document', () => {
    const r = step(snapshotOf(searches(), { topic: 'tides' }), 1_000);
    expect(r.result.stateWrites).toEqual([{ seq: expect.any(Number), nodeKey: 'start', writes: { topic: 'tides' } }]);
    const item = r.result.enqueue.find((w) => w.nodeKey === 's1')!;
    expect(item.input.state).toEqual({ findings: [], topic: 'tides' });
  });

  it('commits a write with the node status: state.updated {keys, bySeq} right after node.completed, numbered as the store numbers it', () => {
    let snap = started(searches());
    snap = withResult(snap, 's2', ok({ hit: 'b' }));
    const r = step(snap, 2_000);
    const kinds = r.result.events.map((e) => e.kind);
    const at = kinds.indexOf('node.completed');
    expect(kinds[at + 1]).toBe('state.updated');
    const completedSeq = snap.run.lastSeq + at + 1;
    expect(r.result.events[at + 1]).toEqual({ kind: 'state.updated', nodeKey: 's2', detail: { keys: ['findings'], bySeq: completedSeq } });
    expect(r.result.stateWrites).toEqual([{ seq: completedSeq + 1, nodeKey: 's2', writes: { findings: 'b' } }]);
    expect(foldState(r.snap.graph.state!, r.snap.stateLog!)).toEqual({ topic: 'tides', findings: ['b'] });
  });

  it('appends in writer key order whichever search lands first, and the summary reads state.findings', () => {
    let snap = started(searches());
    snap = step(withResult(snap, 's2', ok({ hit: 'b' })), 2_000).snap;
    snap = step(withResult(snap, 's1', ok({ hit: 'a' })), 3_000).snap;
    expect(rowOf(snap, 'summary').input!.state).toEqual({ topic: 'tides', findings: ['a', 'b'] });
  });

  it('settles the results of one tick in node key order, whatever order they arrive in', () => {
    const g = searches();
    g.state!.reducers = {};
    let snap = started(g);
    snap = withResult(withResult(snap, 's2', ok({ hit: 'b' })), 's1', ok({ hit: 'a' }));
    const r = step(snap, 2_000);
    expect(r.result.stateWrites!.map((w) => w.nodeKey)).toEqual(['s1', 's2']);
    expect(foldState(g.state!, r.snap.stateLog!)['findings']).toBe('b');
  });

  it('fails the writing node ValidationFailed, naming the key, when its path resolves to nothing, the reducer refuses the value, or the schema breaks', () => {
    const missing = step(withResult(started(searches()), 's1', ok({ other: 1 })), 2_000);
    expect(rowOf(missing.snap, 's1')).toMatchObject({ status: 'Failed', failureClass: 'ValidationFailed', reason: "writes.findings: path 'output.hit' resolves to nothing in the node's output envelope" });
    expect(missing.result.stateWrites).toBeUndefined();

    const sum = searches({ reducers: { findings: 'sum' }, initial: {} });
    const notNumber = step(withResult(started(sum), 's1', ok({ hit: 'secret-value' })), 2_000);
    expect(rowOf(notNumber.snap, 's1').reason).toBe("state key 'findings' (sum) needs a finite number to add");

    const schema = searches({ schema: { type: 'object', properties: { findings: { type: 'array', maxItems: 1 } } } });
    let snap = step(withResult(started(schema), 's1', ok({ hit: 'a' })), 2_000).snap;
    snap = step(withResult(snap, 's2', ok({ hit: 'secret-value' })), 3_000).snap;
    expect(rowOf(snap, 's2')).toMatchObject({ status: 'Failed', failureClass: 'ValidationFailed', reason: "state after writing 'findings' does not match state.schema" });
    expect(foldState(schema.state!, snap.stateLog!)).toEqual({ topic: 'tides', findings: ['a'] });
    expect(JSON.stringify(snap.nodes.map((n) => n.reason))).not.toContain('secret-value');
  });

  it('fails a write that would take the state past MAX_RUN_STATE_BYTES (ValidationFailed, naming the option)', () => {
    const r = step(withResult(started(searches()), 's1', ok({ hit: 'x'.repeat(200) })), 2_000, { maxRunStateBytes: 100 });
    expect(rowOf(r.snap, 's1')).toMatchObject({ status: 'Failed', failureClass: 'ValidationFailed' });
    expect(rowOf(r.snap, 's1').reason).toMatch(/over MAX_RUN_STATE_BYTES \(100\)/);
  });

  it('routes an edge on state.* as of its source commit, and keeps that verdict when the state changes later', () => {
    const g = graphOf(
      [
        node('start', 'Start'),
        node('a', 'Tool', { writes: { ready: 'output.ok' } }),
        node('b', 'Tool', { writes: { ready: 'output.ok' } }),
        node('go', 'Tool'),
        node('end', 'End', { joinPolicy: 'Any' }),
      ],
      [
        edge('e1', 'start', 'a'),
        edge('e2', 'start', 'b'),
        edge('e3', 'a', 'go', { condition: { path: 'state.ready', op: 'Eq', value: true } }),
        edge('e4', 'b', 'go'),
        edge('e5', 'go', 'end'),
        edge('e6', 'a', 'end'),
      ],
    );
    g.state = { schema: null, reducers: {}, initial: {} };
    let snap = step(snapshotOf(g), 1_000).snap;
    snap = step(withResult(snap, 'a', ok({ ok: true })), 2_000).snap;
    expect(rowOf(snap, 'a').output!.state).toEqual({ ready: true });
    snap = step(withResult(snap, 'b', ok({ ok: false })), 3_000).snap;
    expect(foldState(g.state, snap.stateLog!)).toEqual({ ready: false });
    // go waited on b (All): a's edge still reads the state a committed with
    expect(rowOf(snap, 'go').status).toBe('Queued');
    expect(rowOf(snap, 'go').input!.upstream['a']!.state).toEqual({ ready: true });
  });

  it('costs a graph without state nothing: no state in documents, no state writes, no state events', () => {
    const g = searches();
    delete g.state;
    for (const n of g.nodes) delete n.writes;
    let snap = step(snapshotOf(g, { topic: 'tides' }), 1_000).snap;
    const r = step(withResult(snap, 's1', ok({ hit: 'a' })), 2_000);
    snap = r.snap;
    expect(r.result.stateWrites).toBeUndefined();
    expect(r.result.events.map((e) => e.kind)).not.toContain('state.updated');
    expect('state' in rowOf(snap, 's1').input!).toBe(false);
    expect(snap.stateLog).toBeUndefined();
  });
});
