import { describe, expect, it } from 'vitest';
import type { EdgeCondition, JoinPolicy } from '../model';
import { admission } from './admission';
import { edgeVerdict } from './edge-verdict';
import { indexGraph } from './graph-index';
import { edge, graphOf, node, ok, pendingRow, rowOf, snapshotOf, step, withResult } from './test-kit';
import type { NodeRunState } from './types';

const eq = (path: string, value: string | number | boolean): EdgeCondition => ({ path, op: 'Eq', value });

/** a, b, c feed j under `policy`; every source a Tool after Start. */
function fanIn(policy: JoinPolicy) {
  return graphOf(
    [node('s', 'Start'), node('a', 'Tool'), node('b', 'Tool'), node('c', 'Tool'), node('j', 'Tool', { joinPolicy: policy }), node('e', 'End')],
    [
      edge('sa', 's', 'a'),
      edge('sb', 's', 'b'),
      edge('sc', 's', 'c'),
      edge('aj', 'a', 'j'),
      edge('bj', 'b', 'j'),
      edge('cj', 'c', 'j'),
      edge('je', 'j', 'e'),
    ],
  );
}

function view(rows: NodeRunState[], g: ReturnType<typeof fanIn>, overrides: Record<string, boolean> = {}) {
  return { index: indexGraph(g), rows: new Map(rows.map((r) => [r.nodeKey, r])), overrides };
}

function rows(g: ReturnType<typeof fanIn>, statuses: Record<string, NodeRunState['status']>, outputs: Record<string, unknown> = {}) {
  return g.nodes.map((n) => {
    const status = statuses[n.key] ?? 'Pending';
    const r = pendingRow(n);
    const settled = status === 'Succeeded' || status === 'Failed';
    return {
      ...r,
      status,
      output: settled ? { status: status === 'Succeeded' ? 'succeeded' : 'failed', attempt: 1, branch: null, output: (outputs[n.key] ?? {}) as never } : null,
    } as NodeRunState;
  });
}

describe('edge verdicts', () => {
  const g = graphOf(
    [node('a', 'Tool'), node('x', 'Tool'), node('y', 'Tool'), node('z', 'Tool')],
    [edge('c1', 'a', 'x', { condition: eq('output.v', 1) }), edge('c2', 'a', 'y', { condition: eq('output.v', 2) }), edge('d', 'a', 'z', { default: true })],
  );
  const settled = (status: NodeRunState['status'], output: unknown, extra: Partial<NodeRunState> = {}) =>
    new Map([
      [
        'a',
        { ...pendingRow(g.nodes[0]!), status, output: { status: 'succeeded', attempt: 1, branch: null, output: output as never }, ...extra } as NodeRunState,
      ],
    ]);
  const verdicts = (r: Map<string, NodeRunState>, overrides: Record<string, boolean> = {}) =>
    g.edges.map((e) => edgeVerdict({ index: indexGraph(g), rows: r, overrides }, e));

  it('is Pending while the source is not settled', () => {
    expect(verdicts(settled('Running', {}))).toEqual(['Pending', 'Pending', 'Pending']);
  });

  it('fires a default edge only when no conditional sibling fired', () => {
    expect(verdicts(settled('Succeeded', { v: 1 }))).toEqual(['Satisfied', 'Dead', 'Dead']);
    expect(verdicts(settled('Succeeded', { v: 3 }))).toEqual(['Dead', 'Dead', 'Satisfied']);
  });

  it('is Dead on every out-edge of a source that failed without onError Continue, or was skipped or cancelled', () => {
    for (const s of ['Failed', 'Skipped', 'Cancelled'] as const) expect(verdicts(settled(s, { v: 1 }))).toEqual(['Dead', 'Dead', 'Dead']);
  });

  it('lets an override win over the condition and the status of a settled source', () => {
    expect(verdicts(settled('Succeeded', { v: 1 }), { c1: false, c2: true })).toEqual(['Dead', 'Satisfied', 'Dead']);
    for (const s of ['Failed', 'Skipped', 'Cancelled'] as const) expect(verdicts(settled(s, { v: 1 }), { d: true })).toEqual(['Dead', 'Dead', 'Satisfied']);
  });

  it('keeps an overridden edge Pending while its source is live: the override acts once the source settles', () => {
    for (const s of ['Pending', 'Queued', 'Running', 'WaitingForApproval'] as const) {
      expect(verdicts(settled(s, {}), { c1: true, c2: false, d: true })).toEqual(['Pending', 'Pending', 'Pending']);
    }
  });

  it('holds every out-edge of a held DecisionModel until one is overridden', () => {
    expect(verdicts(settled('Succeeded', { v: 1 }, { held: true }))).toEqual(['Held', 'Held', 'Held']);
    expect(verdicts(settled('Succeeded', { v: 1 }, { held: true }), { c2: true })).toEqual(['Dead', 'Satisfied', 'Dead']);
  });

  it('routes a source that failed under onError Continue on its failed envelope', () => {
    const g2 = graphOf([node('a', 'Tool', { onError: 'Continue' }), node('x', 'Tool'), node('y', 'Tool')], [
      edge('f', 'a', 'x', { condition: eq('status', 'failed') }),
      edge('u', 'a', 'y'),
    ]);
    const r = new Map([['a', { ...pendingRow(g2.nodes[0]!), status: 'Failed', output: { status: 'failed', attempt: 1, branch: null, output: null } } as NodeRunState]]);
    expect(g2.edges.map((e) => edgeVerdict({ index: indexGraph(g2), rows: r, overrides: {} }, e))).toEqual(['Satisfied', 'Satisfied']);
  });
});

describe('admission', () => {
  const policies: JoinPolicy[] = ['All', 'Any', 'First', { quorum: 1 }, { quorum: 3 }];

  it('waits while every source is live, under every policy and whatever the overrides say', () => {
    for (const policy of policies) {
      const g = fanIn(policy);
      for (const live of ['Pending', 'Queued', 'Running', 'WaitingForApproval'] as const) {
        const r = rows(g, { a: live, b: 'Running', c: 'Queued' });
        for (const overrides of [{}, { aj: true, bj: true, cj: true }, { aj: false, bj: false, cj: false }] as Record<string, boolean>[]) {
          expect(admission(view(r, g, overrides), 'j', policy)).toEqual({ kind: 'wait' });
        }
      }
    }
  });

  it('judges a node as soon as one source settled, the others still live', () => {
    const g = fanIn('First');
    expect(admission(view(rows(g, { a: 'Running', b: 'Succeeded', c: 'Queued' }), g), 'j', 'First').kind).toBe('eligible');
    expect(admission(view(rows(g, { a: 'Running', b: 'Succeeded', c: 'Queued' }), g), 'j', { quorum: 1 }).kind).toBe('eligible');
    // a source whose row is missing is not live: its edge is Dead
    const missing = rows(g, { a: 'Running', b: 'Running' }).filter((r) => r.nodeKey !== 'c');
    expect(admission(view(missing, g, { aj: false, bj: false }), 'j', { quorum: 3 }).kind).toBe('skip');
  });

  it('admits an All node only when every inbound edge is satisfied', () => {
    const g = fanIn('All');
    expect(admission(view(rows(g, { a: 'Succeeded', b: 'Succeeded', c: 'Running' }), g), 'j', 'All').kind).toBe('wait');
    expect(admission(view(rows(g, { a: 'Succeeded', b: 'Succeeded', c: 'Succeeded' }), g), 'j', 'All').kind).toBe('eligible');
  });

  it('skips an All-join once one inbound edge is dead and none is pending', () => {
    const g = fanIn('All');
    expect(admission(view(rows(g, { a: 'Skipped', b: 'Succeeded', c: 'Running' }), g), 'j', 'All').kind).toBe('wait');
    const adm = admission(view(rows(g, { a: 'Skipped', b: 'Succeeded', c: 'Succeeded' }), g), 'j', 'All');
    expect(adm.kind).toBe('skip');
  });

  it('admits an Any node on one satisfied edge only once none is pending', () => {
    const g = fanIn('Any');
    expect(admission(view(rows(g, { a: 'Succeeded', b: 'Running', c: 'Skipped' }), g), 'j', 'Any').kind).toBe('wait');
    expect(admission(view(rows(g, { a: 'Succeeded', b: 'Skipped', c: 'Skipped' }), g), 'j', 'Any').kind).toBe('eligible');
    expect(admission(view(rows(g, { a: 'Skipped', b: 'Cancelled', c: 'Skipped' }), g), 'j', 'Any').kind).toBe('skip');
  });

  it('admits a First node the moment one inbound edge is satisfied', () => {
    const g = fanIn('First');
    expect(admission(view(rows(g, { a: 'Succeeded', b: 'Running', c: 'Pending' }), g), 'j', 'First').kind).toBe('eligible');
    expect(admission(view(rows(g, { a: 'Skipped', b: 'Skipped', c: 'Skipped' }), g), 'j', 'First').kind).toBe('skip');
  });

  it('admits a quorum node once N are satisfied and skips it once fewer than N can be', () => {
    const g = fanIn({ quorum: 2 });
    expect(admission(view(rows(g, { a: 'Succeeded', b: 'Running', c: 'Skipped' }), g), 'j', { quorum: 2 }).kind).toBe('wait');
    expect(admission(view(rows(g, { a: 'Succeeded', b: 'Succeeded', c: 'Running' }), g), 'j', { quorum: 2 }).kind).toBe('eligible');
    expect(admission(view(rows(g, { a: 'Succeeded', b: 'Skipped', c: 'Skipped' }), g), 'j', { quorum: 2 }).kind).toBe('skip');
  });

  it('prefers a broken branch over a condition routed past as the one skip cause', () => {
    const g = graphOf(
      [node('a', 'Tool'), node('b', 'Tool'), node('j', 'Tool')],
      [edge('aj', 'a', 'j', { condition: eq('output.go', true) }), edge('bj', 'b', 'j')],
    );
    const r = [
      { ...pendingRow(g.nodes[0]!), status: 'Succeeded', output: { status: 'succeeded', attempt: 1, branch: null, output: { go: false } } },
      { ...pendingRow(g.nodes[1]!), status: 'Skipped' },
      pendingRow(g.nodes[2]!),
    ] as NodeRunState[];
    const adm = admission({ index: indexGraph(g), rows: new Map(r.map((x) => [x.nodeKey, x])), overrides: {} }, 'j', 'All');
    expect(adm.kind === 'skip' && adm.cause.edgeKey).toBe('bj');
    expect(adm.kind === 'skip' && adm.reason).toContain("'b'");
  });
});

describe('routing through plan', () => {
  it('skips every node behind a branch its condition routed past, in one plan call', () => {
    const g = graphOf(
      [node('s', 'Start'), node('c', 'Condition', { config: { path: 'output.input.go' } }), node('x', 'Tool'), node('x2', 'Tool'), node('y', 'Parallel'), node('e1', 'End'), node('e2', 'End')],
      [
        edge('sc', 's', 'c'),
        edge('cx', 'c', 'x', { condition: eq('output.input.go', true) }),
        edge('cy', 'c', 'y', { condition: { path: 'output.input.go', op: 'Ne', value: true } }),
        edge('xx2', 'x', 'x2'),
        edge('x2e', 'x2', 'e1'),
        edge('ye', 'y', 'e2'),
      ],
    );
    const { snap, result } = step(snapshotOf(g, { go: false }), 10);
    expect(['x', 'x2', 'e1'].map((k) => rowOf(snap, k).status)).toEqual(['Skipped', 'Skipped', 'Skipped']);
    expect(rowOf(snap, 'e2').status).toBe('Succeeded');
    expect(snap.run.status).toBe('Completed');
    expect(result.events.filter((e) => e.kind === 'node.skipped').map((e) => e.nodeKey)).toEqual(['x', 'x2', 'e1']);
  });

  it('cancels First-join sources whose every out-edge leads only into the join, and ignores their late results', () => {
    const g = fanIn('First');
    let { snap } = step(snapshotOf(g), 10);
    expect(['a', 'b', 'c'].map((k) => rowOf(snap, k).status)).toEqual(['Queued', 'Queued', 'Queued']);
    const bInvocation = rowOf(snap, 'b').invocationId!;
    const r = step(withResult(snap, 'a', ok({ a: 1 })), 20);
    snap = r.snap;
    expect(rowOf(snap, 'b').status).toBe('Cancelled');
    expect(rowOf(snap, 'b').reason).toContain("'j'");
    expect(r.result.cancel.map((c) => c.nodeKey).sort()).toEqual(['b', 'c']);
    expect(rowOf(snap, 'j').status).toBe('Queued');
    const late = step(withResult(snap, 'b', ok({ late: true })), 30);
    expect(rowOf(late.snap, 'b').status).toBe('Cancelled');
    expect(late.result.consumedInvocationIds).toContain(bInvocation);
  });

  it('does not cancel a First-join source that also feeds another node', () => {
    const g = fanIn('First');
    g.edges.push(edge('be', 'b', 'e'));
    const { snap } = step(withResult(step(snapshotOf(g), 10).snap, 'a', ok({})), 20);
    expect(rowOf(snap, 'b').status).toBe('Queued');
    expect(rowOf(snap, 'c').status).toBe('Cancelled');
  });

  it('cancels the remaining source of a quorum join once N inbound edges are satisfied', () => {
    const g = fanIn({ quorum: 2 });
    let { snap } = step(snapshotOf(g), 10);
    snap = step(withResult(snap, 'a', ok({})), 20).snap;
    expect(rowOf(snap, 'c').status).toBe('Queued');
    const r = step(withResult(snap, 'b', ok({})), 30);
    expect(rowOf(r.snap, 'c')).toMatchObject({ status: 'Cancelled' });
    expect(rowOf(r.snap, 'j').status).toBe('Queued');
    expect(Object.keys(r.result.enqueue[0]!.input.upstream)).toEqual(['a', 'b']);
  });
});
