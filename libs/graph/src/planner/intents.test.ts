import { describe, expect, it } from 'vitest';
import { edge, failed, graphOf, node, ok, rowOf, snapshotOf, step, withResult } from './test-kit';
import type { GateDecision, Intent, RunSnapshot } from './types';

const chain = () =>
  graphOf([node('s', 'Start'), node('t', 'LlmCall'), node('u', 'Tool'), node('e', 'End')], [edge('1', 's', 't'), edge('2', 't', 'u'), edge('3', 'u', 'e')]);

const withIntents = (snap: RunSnapshot, ...intents: Intent[]): RunSnapshot => ({ ...snap, intents: [...snap.intents, ...intents] });

describe('operator intents', () => {
  it('skips a Pending node on a skip intent and refuses to skip a node in any other state', () => {
    let { snap } = step(snapshotOf(chain()), 0);
    const r = step(withIntents(snap, { id: 'k1', kind: 'skip', nodeKey: 'u' }, { id: 'k2', kind: 'skip', nodeKey: 't' }), 10);
    snap = r.snap;
    expect(rowOf(snap, 'u')).toMatchObject({ status: 'Skipped', reason: 'skipped by operator' });
    expect(rowOf(snap, 't').status).toBe('Queued');
    expect(r.result.consumedIntentIds).toEqual(['k1', 'k2']);
  });

  it('retries a failed node with maxAttempts more attempts and reopens the run it failed, returning cancelled collateral to Pending', () => {
    const g = graphOf(
      [node('s', 'Start'), node('a', 'Tool', { maxAttempts: 1 }), node('b', 'Tool'), node('e', 'End')],
      [edge('1', 's', 'a'), edge('2', 's', 'b'), edge('3', 'a', 'e'), edge('4', 'b', 'e')],
    );
    let { snap } = step(snapshotOf(g), 0);
    snap = step(withResult(snap, 'a', failed('NodeFailed')), 10).snap;
    expect(snap.run.status).toBe('Failed');
    expect(rowOf(snap, 'b')).toMatchObject({ status: 'Cancelled', cause: 'RunFailure' });
    const r = step(withIntents(snap, { id: 'r1', kind: 'retry', nodeKey: 'a' }), 20);
    snap = r.snap;
    expect(snap.run).toMatchObject({ status: 'Running', failureClass: 'None', reason: null });
    expect(rowOf(snap, 'a')).toMatchObject({ status: 'Queued', attempt: 2, attemptLimit: 2 });
    expect(rowOf(snap, 'b')).toMatchObject({ status: 'Queued', attempt: 2, cause: 'None' });
    expect(r.result.events.map((e) => e.kind)).toEqual(expect.arrayContaining(['node.retried', 'run.resumed', 'node.queued']));
  });

  it('tells the collateral a reopened run returns to Pending by its cause, never by its reason text', () => {
    const g = graphOf(
      [node('s', 'Start'), node('a', 'Tool', { maxAttempts: 1 }), node('b', 'Tool'), node('c', 'Tool'), node('e', 'End')],
      [edge('1', 's', 'a'), edge('2', 's', 'b'), edge('3', 's', 'c'), edge('4', 'a', 'e'), edge('5', 'b', 'e'), edge('6', 'c', 'e')],
    );
    let { snap } = step(snapshotOf(g), 0);
    snap = step(withResult(snap, 'a', failed('NodeFailed')), 10).snap;
    expect(rowOf(snap, 'c')).toMatchObject({ status: 'Cancelled', cause: 'RunFailure' });
    // 'c' keeps the collateral's reason text but was cancelled for another cause
    const relabelled = { ...snap, nodes: snap.nodes.map((n) => (n.nodeKey === 'c' ? { ...n, cause: 'JoinSatisfied' as const } : n)) };
    const r = step(withIntents(relabelled, { id: 'r1', kind: 'retry', nodeKey: 'a' }), 20);
    expect(rowOf(r.snap, 'b').status).toBe('Queued');
    expect(rowOf(r.snap, 'c')).toMatchObject({ status: 'Cancelled', cause: 'JoinSatisfied', reason: "run failed at node 'a'" });
  });

  it('completes a Running node with operator output, cancels its invocation, and reopens a Failed run', () => {
    let { snap } = step(snapshotOf(chain()), 0);
    const inv = rowOf(snap, 't').invocationId!;
    const r = step(withIntents(snap, { id: 'c1', kind: 'complete', nodeKey: 't', output: { text: 'by hand' } }), 10);
    snap = r.snap;
    expect(rowOf(snap, 't')).toMatchObject({ status: 'Succeeded' });
    expect(rowOf(snap, 't').output?.output).toEqual({ text: 'by hand' });
    expect(r.result.cancel).toEqual([{ nodeKey: 't', invocationId: inv, reason: 'completed by operator' }]);
    expect(r.result.events.map((e) => e.kind)).toContain('node.overridden');
    snap = step(withResult(snap, 'u', { ok: false, failureClass: 'ValidationFailed', reason: 'x', startedAt: 1, finishedAt: 1 }), 20).snap;
    expect(snap.run.status).toBe('Failed');
    const r2 = step(withIntents(snap, { id: 'c2', kind: 'complete', nodeKey: 'u', output: { fine: true } }), 30);
    expect(r2.snap.run.status).toBe('Completed');
  });

  it('times an operator completion of a Failed node from the completion, not from the attempt that failed long before', () => {
    const g = graphOf([node('s', 'Start'), node('a', 'Tool', { maxAttempts: 1 }), node('e', 'End')], [edge('1', 's', 'a'), edge('2', 'a', 'e')]);
    let { snap } = step(snapshotOf(g), 0);
    snap = step(withResult(snap, 'a', failed('NodeFailed', 'boom', 1_000)), 1_000).snap;
    expect(rowOf(snap, 'a')).toMatchObject({ status: 'Failed', startedAt: 1_000 });
    snap = step(withIntents(snap, { id: 'c', kind: 'complete', nodeKey: 'a', output: { by: 'hand' } }), 3_600_000).snap;
    expect(rowOf(snap, 'a')).toMatchObject({ status: 'Succeeded', startedAt: 3_600_000, finishedAt: 3_600_000 });
  });

  it('times an operator completion of a Running node from its attempt start (it ran until cut short)', () => {
    let { snap } = step(snapshotOf(chain()), 0);
    snap = step({ ...snap, started: [{ invocationId: rowOf(snap, 't').invocationId!, nodeKey: 't', at: 5 }] }, 5).snap;
    expect(rowOf(snap, 't')).toMatchObject({ status: 'Running', startedAt: 5 });
    snap = step(withIntents(snap, { id: 'c', kind: 'complete', nodeKey: 't', output: { text: 'by hand' } }), 90).snap;
    expect(rowOf(snap, 't')).toMatchObject({ status: 'Succeeded', startedAt: 5, finishedAt: 90 });
  });

  it('refuses operator completion of a Pause node', () => {
    const g = graphOf([node('s', 'Start'), node('p', 'Pause', { config: { prompt: 'x', allowedDecisions: ['Approve'] } }), node('e', 'End')], [edge('1', 's', 'p'), edge('2', 'p', 'e')]);
    const { snap } = step(snapshotOf(g), 0);
    const r = step(withIntents(snap, { id: 'c', kind: 'complete', nodeKey: 'p', output: {} }), 10);
    expect(rowOf(r.snap, 'p').status).toBe('WaitingForApproval');
    expect(r.result.consumedIntentIds).toEqual(['c']);
  });

  it('drains a cancelled run: live work is sent its cancel, and the run reads Cancelled once the worker confirms', () => {
    const { snap } = step(snapshotOf(chain()), 0);
    const r = step(withIntents(snap, { id: 'x', kind: 'cancel', reason: 'stop' }), 10);
    expect(rowOf(r.snap, 't')).toMatchObject({ status: 'Queued', failureClass: 'Cancelled', reason: 'run cancelled: stop' });
    expect(r.result.cancel).toHaveLength(1);
    expect(r.snap.run.status).toBe('Cancelling');
    expect(r.result.enqueue).toEqual([]);
    const done = step(withResult(r.snap, 't', failed('Cancelled', 'cancelled')), 20);
    expect(rowOf(done.snap, 't')).toMatchObject({ status: 'Cancelled', reason: 'run cancelled: stop' });
    expect(done.snap.run).toMatchObject({ status: 'Cancelled', reason: 'stop' });
    expect(done.result.events.at(-1)).toEqual({ kind: 'run.cancelled', nodeKey: null, detail: { reason: 'stop', survivors: [] } });
  });

  it('cancels a Pending run that never started', () => {
    const r = step(withIntents(snapshotOf(chain()), { id: 'x', kind: 'cancel', reason: null }), 10);
    expect(r.snap.run.status).toBe('Cancelled');
    expect(r.result.events.map((e) => e.kind)).toEqual(['run.cancelled']);
  });
});

describe('steering', () => {
  const steered = (snap: RunSnapshot, operationId: string): RunSnapshot => ({
    ...snap,
    nodes: snap.nodes.map((n) =>
      n.nodeKey === 't' ? { ...n, steering: [...n.steering, { operationId, message: `msg ${operationId}`, atUtc: 5, attempt: n.attempt, applied: false }] } : n,
    ),
    intents: [...snap.intents, { id: `steer-${operationId}`, kind: 'steer', nodeKey: 't', operationId }],
  });

  it('sends a Running LlmCall back through Pending on the same attempt, cancels the old invocation and re-queues with steering', () => {
    const { snap } = step(snapshotOf(chain()), 0);
    const old = rowOf(snap, 't').invocationId!;
    const r = step(steered(steered(snap, 'o1'), 'o2'), 10);
    const row = rowOf(r.snap, 't');
    expect(row).toMatchObject({ status: 'Queued', attempt: 1 });
    expect(row.invocationId).not.toBe(old);
    expect(row.steering.map((s) => s.applied)).toEqual([true, true]);
    expect(r.snap.run.totalAttempts).toBe(1);
    expect(r.result.cancel).toEqual([{ nodeKey: 't', invocationId: old, reason: 'steered' }]);
    expect(r.result.events.filter((e) => e.kind === 'node.steered')).toHaveLength(2);
    expect(r.result.enqueue[0]).toMatchObject({ attempt: 1, steering: ['msg o1', 'msg o2'] });
    const late = step(withResult({ ...r.snap, results: [] }, 't', ok({})), 20);
    expect(rowOf(late.snap, 't').status).toBe('Succeeded');
  });

  it('ignores a steer recorded against an earlier attempt', () => {
    const { snap } = step(snapshotOf(chain()), 0);
    const s2 = steered(snap, 'old');
    const r = step({ ...s2, nodes: s2.nodes.map((n) => (n.nodeKey === 't' ? { ...n, steering: n.steering.map((e) => ({ ...e, attempt: 0 })) } : n)) }, 10);
    expect(rowOf(r.snap, 't').status).toBe('Queued');
    expect(r.result.events.map((e) => e.kind)).toEqual(['node.steer-ignored']);
  });

  it('records a steer on a settled node as ignored', () => {
    let { snap } = step(snapshotOf(chain()), 0);
    snap = step(withResult(snap, 't', ok({ text: 'x' })), 10).snap;
    const r = step(steered(snap, 'late'), 20);
    expect(r.result.events.filter((e) => e.kind === 'node.steer-ignored').map((e) => e.detail['operationId'])).toEqual(['late']);
    expect(rowOf(r.snap, 't').status).toBe('Succeeded');
  });
});

describe('gates and decisions', () => {
  const decision = (d: GateDecision['decision'], payload: GateDecision['payload'] = null): GateDecision => ({
    operationId: 'op',
    decision: d,
    comment: d === 'Reject' ? 'no' : null,
    payload,
    at: 5,
    applied: false,
  });
  const decided = (snap: RunSnapshot, key: string, d: GateDecision): RunSnapshot => ({
    ...snap,
    nodes: snap.nodes.map((n) => (n.nodeKey === key ? { ...n, decision: d } : n)),
    intents: [{ id: 'dec', kind: 'decide', nodeKey: key, operationId: d.operationId }],
  });
  const pauseGraph = (withRejectEdge: boolean) =>
    graphOf(
      [
        node('s', 'Start'),
        node('p', 'Pause', { config: { prompt: 'ok?', allowedDecisions: ['Approve', 'Reject'] } }),
        node('yes', 'End', { config: { outcome: 'approved' } }),
        ...(withRejectEdge ? [node('no', 'End', { config: { outcome: 'rejected' } })] : []),
      ],
      [
        edge('1', 's', 'p'),
        edge('2', 'p', 'yes', { label: 'approved', condition: { path: 'output.decision', op: 'Eq', value: 'Approve' } }),
        ...(withRejectEdge ? [edge('3', 'p', 'no', { condition: { path: 'output.decision', op: 'Eq', value: 'Reject' } })] : []),
      ],
    );

  it('settles a Pause from its recorded decision with output { decision, comment, payload }', () => {
    const { snap } = step(snapshotOf(pauseGraph(true)), 0);
    const r = step(decided(snap, 'p', decision('Approve', { k: 1 })), 10);
    expect(rowOf(r.snap, 'p')).toMatchObject({ status: 'Succeeded', pendingDecisionKind: null });
    expect(rowOf(r.snap, 'p').output).toMatchObject({ branch: 'approved', output: { decision: 'Approve', comment: null, payload: { k: 1 } } });
    expect(rowOf(r.snap, 'p').decision?.applied).toBe(true);
    expect(r.result.events.map((e) => e.kind)).toContain('gate.decided');
    expect(r.snap.run.status).toBe('Completed');
  });

  it('routes a Reject through its out-edge as an outcome rather than a failure', () => {
    const { snap } = step(snapshotOf(pauseGraph(true)), 0);
    const r = step(decided(snap, 'p', decision('Reject')), 10);
    expect(rowOf(r.snap, 'p').status).toBe('Succeeded');
    expect(rowOf(r.snap, 'yes').status).toBe('Skipped');
    expect(r.result.run?.set.output).toMatchObject({ outcome: 'rejected' });
  });

  it('succeeds a rejected Pause whose rejection fires no out-edge and cancels the run with class GateRejected', () => {
    const { snap } = step(snapshotOf(pauseGraph(false)), 0);
    const r = step(decided(snap, 'p', decision('Reject')), 10);
    expect(rowOf(r.snap, 'p')).toMatchObject({ status: 'Succeeded', failureClass: 'None' });
    expect(rowOf(r.snap, 'yes').status).toBe('Skipped');
    expect(r.snap.run).toMatchObject({ status: 'Cancelled', failureClass: 'GateRejected' });
    expect(r.snap.run.reason).toContain("gate 'p' was rejected");
  });

  it('settles a ChatInput with { decision: "Answer", text } and parks it with pendingDecisionKind Answer', () => {
    const g = graphOf([node('s', 'Start'), node('c', 'ChatInput', { config: { prompt: 'say' } }), node('e', 'End', { config: { outcome: 'ok', resultPath: 'input.output.text' } })], [edge('1', 's', 'c'), edge('2', 'c', 'e')]);
    const { snap } = step(snapshotOf(g), 0);
    expect(rowOf(snap, 'c').pendingDecisionKind).toBe('Answer');
    const r = step(decided(snap, 'c', decision('Answer', { text: 'hello' })), 10);
    expect(rowOf(r.snap, 'c').output?.output).toEqual({ decision: 'Answer', text: 'hello' });
    expect(r.result.run?.set.output).toEqual({ outcome: 'ok', result: 'hello' });
  });

  it('ignores a decide whose operation id does not match the recorded decision', () => {
    const { snap } = step(snapshotOf(pauseGraph(true)), 0);
    const s2 = decided(snap, 'p', decision('Approve'));
    const r = step({ ...s2, intents: [{ id: 'dec', kind: 'decide', nodeKey: 'p', operationId: 'other' }] }, 10);
    expect(rowOf(r.snap, 'p').status).toBe('WaitingForApproval');
  });

  it('holds the out-edges of a DecisionModel that answered held, reading WaitingForApproval until an override', () => {
    const g = graphOf(
      [node('s', 'Start'), node('d', 'DecisionModel'), node('a', 'End', { config: { outcome: 'a' } }), node('b', 'End', { config: { outcome: 'b' } })],
      [edge('1', 's', 'd'), edge('da', 'd', 'a', { condition: { path: 'output.choice', op: 'Eq', value: 'a' } }), edge('db', 'd', 'b', { condition: { path: 'output.choice', op: 'Eq', value: 'b' } })],
    );
    let { snap } = step(snapshotOf(g), 0);
    snap = step(withResult(snap, 'd', ok({ choice: 'a', confidence: 0.2, held: true })), 10).snap;
    expect(rowOf(snap, 'd')).toMatchObject({ status: 'Succeeded', held: true, pendingDecisionKind: 'Operator' });
    expect(rowOf(snap, 'a').status).toBe('Pending');
    expect(snap.run.status).toBe('WaitingForApproval');
    const r = step({ ...snap, run: { ...snap.run, edgeOverrides: { db: true } } }, 20);
    expect(rowOf(r.snap, 'a').status).toBe('Skipped');
    expect(r.result.run?.set.output).toMatchObject({ outcome: 'b' });
  });

  it('retries a held DecisionModel back to Pending and queues it again, keeping its held answer while it asks', () => {
    const g = graphOf([node('s', 'Start'), node('d', 'DecisionModel'), node('a', 'End')], [edge('1', 's', 'd'), edge('2', 'd', 'a')]);
    let { snap } = step(snapshotOf(g), 0);
    snap = step(withResult(snap, 'd', ok({ choice: 'a', held: true })), 10).snap;
    const r = step(withIntents(snap, { id: 'r', kind: 'retry', nodeKey: 'd' }), 20);
    expect(rowOf(r.snap, 'd')).toMatchObject({ status: 'Queued', attempt: 2, held: true, pendingDecisionKind: null });
    expect(rowOf(r.snap, 'd').output?.output).toEqual({ choice: 'a', held: true });
    expect(r.snap.run.status).toBe('Running');
  });
});
