import { describe, expect, it } from 'vitest';
import type { GraphEdge } from '../model';
import { edge, graphOf, node, ok, rowOf, snapshotOf, step, withResult } from './test-kit';
import type { Intent, RunSnapshot } from './types';

const eq = (path: string, value: string | boolean): GraphEdge['condition'] => ({ path, op: 'Eq', value });
const withIntents = (snap: RunSnapshot, ...intents: Intent[]): RunSnapshot => ({ ...snap, intents: [...snap.intents, ...intents] });
const skip = (nodeKey: string, prune?: boolean): Intent => ({ id: `skip-${nodeKey}`, kind: 'skip', nodeKey, ...(prune === undefined ? {} : { prune }) });
const SKIPPED = { status: 'skipped', attempt: 0, branch: null, output: null };

/** s → a (Tool) → b (Tool) → e (End, result = its input document's upstream) */
const chain = () =>
  graphOf(
    [node('s', 'Start'), node('a', 'Tool'), node('b', 'Tool'), node('e', 'End', { config: { outcome: 'ok', resultPath: 'upstream' } })],
    [edge('1', 's', 'a'), edge('2', 'a', 'b'), edge('3', 'b', 'e')],
  );

describe('operator skip', () => {
  it('declares a Pending node not taken: its dependents proceed and see it skipped with a null output', () => {
    let { snap } = step(snapshotOf(chain()), 0);
    const r = step(withIntents(snap, skip('b')), 10);
    snap = r.snap;
    expect(rowOf(snap, 'b')).toMatchObject({ status: 'Skipped', cause: 'NotTaken', output: SKIPPED, reason: 'skipped by operator' });
    expect(r.result.events.find((e) => e.kind === 'node.skipped')?.detail).toMatchObject({ by: 'operator', notTaken: true });
    snap = step(withResult(snap, 'a', ok({ v: 1 })), 20).snap;
    expect(rowOf(snap, 'e').status).toBe('Succeeded');
    expect(rowOf(snap, 'e').input?.upstream).toEqual({ b: SKIPPED });
    expect(snap.run.status).toBe('Completed');
  });

  it("evaluates the not-taken node's conditional out-edges against its skipped envelope", () => {
    const g = graphOf(
      [node('s', 'Start'), node('a', 'Tool'), node('x', 'Tool'), node('y', 'Tool'), node('d', 'Tool'), node('e1', 'End'), node('e2', 'End'), node('e3', 'End')],
      [
        edge('1', 's', 'a'),
        edge('ax', 'a', 'x', { condition: eq('status', 'skipped') }),
        edge('ay', 'a', 'y', { condition: eq('output.ok', true) }),
        edge('ad', 'a', 'd', { default: true }),
        edge('x1', 'x', 'e1'),
        edge('y2', 'y', 'e2'),
        edge('d3', 'd', 'e3'),
      ],
    );
    // a is admitted on the first tick: pause the run so it stays Pending
    const paused = snapshotOf(g, { q: 1 }, { paused: true });
    let { snap } = step(paused, 0);
    expect(rowOf(snap, 'a').status).toBe('Pending');
    snap = step(withIntents(snap, skip('a')), 10).snap;
    expect(rowOf(snap, 'a')).toMatchObject({ status: 'Skipped', cause: 'NotTaken' });
    snap = step({ ...snap, run: { ...snap.run, paused: false } }, 20).snap;
    expect(rowOf(snap, 'x').status).toBe('Queued');
    expect(rowOf(snap, 'x').input?.input).toEqual(SKIPPED);
    expect(rowOf(snap, 'y').status).toBe('Skipped');
    expect(rowOf(snap, 'd').status).toBe('Skipped');
  });

  it('keeps the old meaning under prune: the node and what only it feeds are skipped, and the run ends without its End', () => {
    let { snap } = step(snapshotOf(chain()), 0);
    const r = step(withIntents(snap, skip('b', true)), 10);
    snap = r.snap;
    expect(rowOf(snap, 'b')).toMatchObject({ status: 'Skipped', cause: 'None' });
    expect(rowOf(snap, 'e').status).toBe('Skipped');
    expect(r.result.events.find((e) => e.kind === 'node.skipped' && e.nodeKey === 'b')?.detail).toMatchObject({ by: 'operator', prune: 'true' });
    snap = step(withResult(snap, 'a', ok({ v: 1 })), 20).snap;
    expect(snap.run.status).toBe('Cancelled');
  });

  it("skips a gate waiting on a person: its request is withdrawn and the node after it runs", () => {
    const g = graphOf(
      [node('s', 'Start'), node('p', 'Pause', { config: { prompt: 'ok?', allowedDecisions: ['Approve'] } }), node('t', 'Tool'), node('e', 'End')],
      [edge('1', 's', 'p'), edge('2', 'p', 't'), edge('3', 't', 'e')],
    );
    let { snap } = step(snapshotOf(g), 0);
    expect(rowOf(snap, 'p')).toMatchObject({ status: 'WaitingForApproval', pendingDecisionKind: 'Approve' });
    expect(snap.run.status).toBe('WaitingForApproval');
    const r = step(withIntents(snap, skip('p')), 10);
    snap = r.snap;
    expect(rowOf(snap, 'p')).toMatchObject({ status: 'Skipped', cause: 'NotTaken', pendingDecisionKind: null });
    expect(r.result.events.find((e) => e.kind === 'node.skipped')?.detail).toMatchObject({ withdrawn: 'Approve' });
    expect(rowOf(snap, 't').status).toBe('Queued');
    expect(rowOf(snap, 't').input?.input).toMatchObject({ status: 'skipped', output: null });
    expect(snap.run.status).toBe('Running');
  });

  it('prunes a waiting gate too, withdrawing its request', () => {
    const g = graphOf(
      [node('s', 'Start'), node('p', 'ChatInput', { config: { prompt: 'more?' } }), node('e', 'End')],
      [edge('1', 's', 'p'), edge('2', 'p', 'e')],
    );
    let { snap } = step({ ...snapshotOf(g), graph: { ...g, kind: 'Chat' } }, 0);
    expect(rowOf(snap, 'p')).toMatchObject({ status: 'WaitingForApproval', pendingDecisionKind: 'Answer' });
    snap = step(withIntents(snap, skip('p', true)), 10).snap;
    expect(rowOf(snap, 'p')).toMatchObject({ status: 'Skipped', cause: 'None', pendingDecisionKind: null });
    expect(rowOf(snap, 'e').status).toBe('Skipped');
    expect(snap.run.status).toBe('Cancelled');
  });

  it('lets a not-taken node satisfy an All join beside a node that ran', () => {
    const g = graphOf(
      [node('s', 'Start'), node('a', 'Tool'), node('b', 'Tool'), node('j', 'Join'), node('e', 'End')],
      [edge('1', 's', 'a'), edge('2', 's', 'b'), edge('3', 'a', 'j'), edge('4', 'b', 'j'), edge('5', 'j', 'e')],
    );
    let { snap } = step(snapshotOf(g, { q: 1 }, { breakpoints: ['b'] }), 0);
    expect(rowOf(snap, 'b').status).toBe('Pending');
    snap = step(withIntents(snap, skip('b')), 10).snap;
    snap = step(withResult(snap, 'a', ok({ v: 1 })), 20).snap;
    expect(rowOf(snap, 'j').status).toBe('Succeeded');
    expect(rowOf(snap, 'j').output?.output).toMatchObject({ a: { status: 'succeeded' }, b: SKIPPED });
    expect(snap.run.status).toBe('Completed');
  });
});
