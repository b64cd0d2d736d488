import { describe, expect, it } from 'vitest';
import type { Graph } from '../model';
import { edge, graphOf, node, ok, rowOf, snapshotOf, step, withResult } from '../planner/test-kit';
import type { RunSnapshot } from '../planner/types';
import { migrateSnapshot } from './apply-migration';
import { planMigration } from './migration-plan';

const pause = node('p', 'Pause', { config: { prompt: 'ok?', allowedDecisions: ['Approve', 'Reject'] } });
const v1 = graphOf(
  [node('s', 'Start'), node('t', 'Tool', { config: { toolName: 'echo' } }), pause, node('done', 'End')],
  [edge('e1', 's', 't'), edge('e2', 't', 'p'), edge('e3', 'p', 'done')],
);
/** v1 with a Tool `after` between the Pause and the End */
const v2 = graphOf(
  [node('s', 'Start'), node('t', 'Tool', { config: { toolName: 'echo' } }), pause, node('after', 'Tool', { config: { toolName: 'echo' } }), node('done', 'End')],
  [edge('e1', 's', 't'), edge('e2', 't', 'p'), edge('e3b', 'p', 'after'), edge('e4', 'after', 'done')],
);

/** v1 driven until the Pause waits. */
function parkedOnPause(graph: Graph = v1): RunSnapshot {
  let snap = step(snapshotOf(graph), 1000).snap;
  snap = step(withResult(snap, 't', ok({ v: 1 })), 1001).snap;
  expect(rowOf(snap, 'p').status).toBe('WaitingForApproval');
  return snap;
}

function request(snap: RunSnapshot, to: Graph, nodeMap?: Record<string, string>) {
  return { from: snap.graph, to, nodes: snap.nodes, edgeOverrides: snap.run.edgeOverrides, runStatus: snap.run.status, ...(nodeMap ? { nodeMap } : {}) };
}

function approve(snap: RunSnapshot, at: number): RunSnapshot {
  const nodes = snap.nodes.map((r) => (r.nodeKey === 'p' ? { ...r, decision: { operationId: 'op', decision: 'Approve' as const, comment: null, payload: null, at, applied: false } } : r));
  return { ...snap, nodes, intents: [{ id: 'i1', kind: 'decide', nodeKey: 'p', operationId: 'op' }] };
}

describe('planMigration', () => {
  it('moves a run parked on a Pause to a version adding a node after it, which the run then runs', () => {
    const snap = parkedOnPause();
    const plan = planMigration(request(snap, v2));
    expect(plan.verdict).toBe('compatible');
    expect(plan.reasons).toEqual([]);
    expect(plan.mapping).toContainEqual({ from: 'p', to: 'p', kind: 'Pause', status: 'WaitingForApproval', action: 'keep' });
    expect(plan.mapping).toContainEqual({ from: null, to: 'after', kind: 'Tool', status: 'Pending', action: 'add' });
    let moved = migrateSnapshot(snap, v2, plan);
    moved = step(approve(moved, 2000), 2000).snap;
    expect(rowOf(moved, 'after').status).toBe('Queued');
    moved = step(withResult(moved, 'after', ok({ fine: true })), 2001).snap;
    expect(moved.run.status).toBe('Completed');
    expect(rowOf(moved, 'done').status).toBe('Succeeded');
  });

  it('needs a mapping for a renamed node that ran, and accepts one', () => {
    const snap = parkedOnPause();
    const renamed = graphOf(
      [node('s', 'Start'), node('tool2', 'Tool', { config: { toolName: 'echo' } }), pause, node('done', 'End')],
      [edge('e1', 's', 'tool2'), edge('e2', 'tool2', 'p'), edge('e3', 'p', 'done')],
    );
    const without = planMigration(request(snap, renamed));
    expect(without.verdict).toBe('needsMapping');
    expect(without.reasons).toEqual([expect.objectContaining({ code: 'NodeMissing', nodeKey: 't' })]);
    const mapped = planMigration(request(snap, renamed, { t: 'tool2' }));
    expect(mapped.verdict).toBe('compatible');
    expect(mapped.mapping).toContainEqual({ from: 't', to: 'tool2', kind: 'Tool', status: 'Succeeded', action: 'carry' });
    expect(migrateSnapshot(snap, renamed, mapped).nodes.map((r) => [r.nodeKey, r.status])).toEqual([
      ['s', 'Succeeded'], ['tool2', 'Succeeded'], ['p', 'WaitingForApproval'], ['done', 'Pending'],
    ]);
  });

  it('refuses a live node of another kind, with no node of its kind to map it to', () => {
    const snap = parkedOnPause();
    const g = graphOf(
      [node('s', 'Start'), node('t', 'Tool', { config: { toolName: 'echo' } }), node('p', 'Tool', { config: { toolName: 'echo' } }), node('done', 'End')],
      [edge('e1', 's', 't'), edge('e2', 't', 'p'), edge('e3', 'p', 'done')],
    );
    const plan = planMigration(request(snap, g));
    expect(plan.verdict).toBe('incompatible');
    expect(plan.reasons).toEqual([expect.objectContaining({ code: 'KindChanged', nodeKey: 'p' })]);
  });

  it('refuses a node added upstream of work already done', () => {
    const snap = parkedOnPause();
    const g = graphOf(
      [node('s', 'Start'), node('pre', 'Tool', { config: { toolName: 'echo' } }), node('t', 'Tool', { config: { toolName: 'echo' } }), pause, node('done', 'End')],
      [edge('e0', 's', 'pre'), edge('e1', 'pre', 't'), edge('e2', 't', 'p'), edge('e3', 'p', 'done')],
    );
    const plan = planMigration(request(snap, g));
    expect(plan.verdict).toBe('incompatible');
    const diverges = plan.reasons.find((r) => r.code === 'ReplayDiverges');
    expect(diverges).toMatchObject({ nodeKey: 't' });
    expect(diverges!.message).toContain("would wait on 'pre'");
    expect(plan.reasons).toContainEqual(expect.objectContaining({ code: 'RoutingChanged', nodeKey: 's' }));
  });

  it('refuses a version whose conditions route a settled node elsewhere', () => {
    const snap = parkedOnPause();
    const g = graphOf(
      [node('s', 'Start'), node('t', 'Tool', { config: { toolName: 'echo' } }), pause, node('other', 'End', { config: { outcome: 'x' } }), node('done', 'End')],
      [
        edge('e1', 's', 't'),
        edge('e2', 't', 'p', { condition: { path: 'output.v', op: 'Eq', value: 2 } }),
        edge('e2b', 't', 'other', { default: true }),
        edge('e3', 'p', 'done'),
      ],
    );
    const plan = planMigration(request(snap, g));
    expect(plan.verdict).toBe('incompatible');
    expect(plan.reasons.map((r) => [r.code, r.nodeKey])).toContainEqual(['ReplayDiverges', 'p']);
  });

  it('re-queues a running lane node whose config changed, refunding its attempt', () => {
    let snap = step(snapshotOf(v1), 1000).snap;
    snap = { ...snap, started: [{ invocationId: rowOf(snap, 't').invocationId!, nodeKey: 't', at: 1000 }] };
    snap = step(snap, 1001).snap;
    expect(rowOf(snap, 't')).toMatchObject({ status: 'Running', attempt: 1 });
    const g = graphOf(
      [node('s', 'Start'), node('t', 'Tool', { config: { toolName: 'echo', arguments: { a: 1 } } }), pause, node('done', 'End')],
      v1.edges,
    );
    const plan = planMigration(request(snap, g));
    expect(plan.verdict).toBe('compatible');
    expect(plan.mapping).toContainEqual({ from: 't', to: 't', kind: 'Tool', status: 'Running', action: 'requeue' });
    const moved = migrateSnapshot(snap, g, plan);
    expect(rowOf(moved, 't')).toMatchObject({ status: 'Pending', attempt: 0, invocationId: null });
    expect(moved.run.totalAttempts).toBe(snap.run.totalAttempts - 1);
    const next = step(moved, 1002);
    expect(rowOf(next.snap, 't')).toMatchObject({ status: 'Queued', attempt: 1 });
    expect(next.result.enqueue[0]?.config).toEqual({ toolName: 'echo', arguments: { a: 1 } });
  });

  it('keeps a running node whose work is unchanged on its invocation', () => {
    const snap = step(snapshotOf(v1), 1000).snap;
    const plan = planMigration(request(snap, v2));
    expect(plan.mapping).toContainEqual({ from: 't', to: 't', kind: 'Tool', status: 'Queued', action: 'keep' });
    expect(rowOf(migrateSnapshot(snap, v2, plan), 't').invocationId).toBe(rowOf(snap, 't').invocationId);
  });

  it('refuses a Pause holding a decision the new version no longer allows', () => {
    const snap = approve(parkedOnPause(), 1500);
    const g = graphOf([...v1.nodes.filter((n) => n.key !== 'p'), node('p', 'Pause', { config: { prompt: 'ok?', allowedDecisions: ['Reject'] } })], v1.edges);
    const plan = planMigration(request(snap, g));
    expect(plan.reasons).toEqual([expect.objectContaining({ code: 'DecisionNotAllowed', nodeKey: 'p' })]);
    expect(plan.verdict).toBe('incompatible');
  });

  it('answers keyed mapping errors for a bad nodeMap', () => {
    const snap = parkedOnPause();
    const plan = planMigration(request(snap, v2, { nope: 't', t: 'missing', s: 'after', done: 'after' }));
    expect(plan.verdict).toBe('needsMapping');
    expect(plan.reasons.map((r) => [r.code, r.nodeKey])).toEqual(
      expect.arrayContaining([['MapUnknownSource', 'nope'], ['MapUnknownTarget', 't'], ['MapTargetTaken', 'done']]),
    );
  });

  it('lets a node mapped onto a key take it: the old node of that key is dropped when it never started, missing when it did', () => {
    const snap = parkedOnPause(v2);
    // v2's `after` (never started) gives its key to the Pause; the Pause's own key is then free
    const g = graphOf(
      [node('s', 'Start'), node('t', 'Tool', { config: { toolName: 'echo' } }), { ...pause, key: 'after' }, node('done', 'End')],
      [edge('e1', 's', 't'), edge('e2', 't', 'after'), edge('e3', 'after', 'done')],
    );
    const plan = planMigration(request(snap, g, { p: 'after' }));
    expect(plan.verdict).toBe('compatible');
    expect(plan.mapping).toContainEqual({ from: 'p', to: 'after', kind: 'Pause', status: 'WaitingForApproval', action: 'keep' });
    expect(plan.mapping).toContainEqual({ from: 'after', to: null, kind: 'Tool', status: 'Pending', action: 'drop' });
    const withBreakpoints = { ...snap, run: { ...snap.run, breakpoints: ['after', 'p', 'done'] } };
    expect(migrateSnapshot(withBreakpoints, g, plan).run.breakpoints).toEqual(['after', 'done']);
    const stepping = (nodeKey: string) => ({ ...snap, run: { ...snap.run, paused: true, stepAllowance: { id: 's1', mode: 'node' as const, nodeKey } } });
    expect(migrateSnapshot(stepping('p'), g, plan).run.stepAllowance).toEqual({ id: 's1', mode: 'node', nodeKey: 'after' });
    expect(migrateSnapshot(stepping('after'), g, plan).run.stepAllowance).toBeNull();
    const started = planMigration(request(snap, g, { p: 'after', t: 'after' }));
    expect(started.reasons).toContainEqual(expect.objectContaining({ code: 'MapTargetTaken', nodeKey: 't' }));
  });

  it('judges the run state against the new state schema', () => {
    const snap = parkedOnPause();
    const g: Graph = { ...v2, state: { schema: { type: 'object', required: ['count'] }, reducers: {}, initial: {} } };
    const plan = planMigration({ ...request(snap, g), state: { other: 1 } });
    expect(plan.verdict).toBe('incompatible');
    expect(plan.reasons).toEqual([expect.objectContaining({ code: 'StateInvalid', nodeKey: null })]);
    expect(planMigration({ ...request(snap, g), state: { count: 2 } }).verdict).toBe('compatible');
  });

  it('refuses an ended run', () => {
    const snap = parkedOnPause();
    const plan = planMigration({ ...request(snap, v2), runStatus: 'Completed' });
    expect(plan.reasons).toEqual([expect.objectContaining({ code: 'RunEnded' })]);
    expect(plan.verdict).toBe('incompatible');
  });

  it('drops a node that never started and is gone from the new version', () => {
    const snap = parkedOnPause(v2);
    const plan = planMigration(request(snap, v1));
    expect(plan.verdict).toBe('compatible');
    expect(plan.mapping).toContainEqual({ from: 'after', to: null, kind: 'Tool', status: 'Pending', action: 'drop' });
  });
});
