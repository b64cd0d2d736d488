import { describe, expect, it } from 'vitest';
import { EVENT_KINDS } from '../model';
import { plan } from './plan';
import { contextAt, edge, failed, graphOf, node, ok, rowOf, snapshotOf, step, withResult } from './test-kit';
import type { RunSnapshot } from './types';

const chain = () =>
  graphOf([node('s', 'Start'), node('t', 'Tool'), node('e', 'End', { config: { outcome: 'ok', resultPath: 'input.output.r' } })], [
    edge('st', 's', 't'),
    edge('te', 't', 'e'),
  ]);

describe('run start and admission', () => {
  it('starts a Pending run, runs Start inline and queues the first work node in one plan call', () => {
    const { snap, result } = step(snapshotOf(chain()), 100);
    expect(snap.run.status).toBe('Running');
    expect(result.events[0]).toEqual({ kind: 'run.started', nodeKey: null, detail: {} });
    expect(rowOf(snap, 's').status).toBe('Succeeded');
    expect(rowOf(snap, 's').output?.output).toEqual({ input: { q: 1 } });
    const t = rowOf(snap, 't');
    expect(t).toMatchObject({ status: 'Queued', attempt: 1, deadlineAt: 100 + 600_000, queuedAt: 100 });
    expect(result.enqueue).toHaveLength(1);
    expect(result.enqueue[0]).toMatchObject({ lane: 'tool', nodeKey: 't', attempt: 1, invocationId: t.invocationId, deadlineAt: 600_100 });
    expect(snap.run.totalAttempts).toBe(1);
    expect(result.wakeAt).toBe(600_100);
  });

  it('numbers node.started of an inline node and of a gate with the attempt its row and node.completed carry', () => {
    const g = graphOf([node('s', 'Start'), node('p', 'Pause'), node('e', 'End')], [edge('sp', 's', 'p'), edge('pe', 'p', 'e')]);
    const { snap, result } = step(snapshotOf(g), 100);
    const started = (key: string) => result.events.find((e) => e.kind === 'node.started' && e.nodeKey === key)?.detail;
    const completed = result.events.find((e) => e.kind === 'node.completed' && e.nodeKey === 's')?.detail;
    expect(started('s')).toMatchObject({ attempt: 1, inline: true });
    expect(completed).toMatchObject({ attempt: rowOf(snap, 's').attempt });
    expect(rowOf(snap, 's').attempt).toBe(1);
    expect(started('p')).toEqual({ attempt: 1 });
    expect(rowOf(snap, 'p')).toMatchObject({ status: 'WaitingForApproval', attempt: 1 });
  });

  it('keeps a Pending run Pending while the tenant has no run slot', () => {
    const snap = { ...snapshotOf(chain()), runSlotAvailable: false };
    const result = plan(snap, contextAt(1));
    expect(result.run).toBeNull();
    expect(result.nodes).toEqual([]);
  });

  it('completes with the first End output once a result lands', () => {
    let { snap } = step(snapshotOf(chain()), 100);
    const r = step(withResult(snap, 't', ok({ r: 42 }, 150)), 200);
    snap = r.snap;
    expect(r.result.events.map((e) => e.kind)).toEqual(['node.started', 'node.completed', 'node.started', 'node.completed', 'run.completed']);
    expect(snap.run.status).toBe('Completed');
    expect(r.result.run?.set.output).toEqual({ outcome: 'ok', result: 42 });
    expect(rowOf(snap, 't').startedAt).toBe(150);
  });

  it('moves a Queued row to Running on WorkStarted and emits node.started', () => {
    const { snap } = step(snapshotOf(chain()), 100);
    const inv = rowOf(snap, 't').invocationId!;
    const r = step({ ...snap, started: [{ invocationId: inv, nodeKey: 't', at: 120 }] }, 130);
    expect(rowOf(r.snap, 't')).toMatchObject({ status: 'Running', startedAt: 120 });
    expect(r.result.events).toEqual([{ kind: 'node.started', nodeKey: 't', detail: { attempt: 1, invocationId: inv } }]);
    expect(r.result.consumedInvocationIds).toEqual([inv]);
  });

  it('ignores and consumes a result whose invocation id does not match the row', () => {
    const { snap } = step(snapshotOf(chain()), 100);
    const stray = { ...snap, results: [{ invocationId: 'other', nodeKey: 't', outcome: ok({}) }] };
    const r = step(stray, 110);
    expect(rowOf(r.snap, 't').status).toBe('Queued');
    expect(r.result.consumedInvocationIds).toEqual(['other']);
    expect(r.snap.results).toEqual([]);
  });

  it('fails a node whose output envelope exceeds MAX_OUTPUT_JSON_BYTES with OutputTooLarge, not retried', () => {
    const { snap } = step(snapshotOf(chain()), 100);
    const r = step(withResult(snap, 't', ok({ big: 'x'.repeat(500) })), 110, { maxOutputJsonBytes: 200 });
    expect(rowOf(r.snap, 't')).toMatchObject({ status: 'Failed', failureClass: 'OutputTooLarge' });
    expect(r.snap.run).toMatchObject({ status: 'Failed', failureClass: 'OutputTooLarge' });
  });

  it('fails a node whose output does not match its outputSchema with ValidationFailed', () => {
    const g = chain();
    g.nodes[1]!.outputSchema = { type: 'object', required: ['r'] };
    const { snap } = step(snapshotOf(g), 100);
    const r = step(withResult(snap, 't', ok({ nope: 1 })), 110);
    expect(rowOf(r.snap, 't')).toMatchObject({ status: 'Failed', failureClass: 'ValidationFailed' });
  });

  it('fails a node whose input document does not match its inputSchema before queueing it', () => {
    const g = chain();
    g.nodes[1]!.inputSchema = { type: 'object', required: ['nothing'] };
    const r = step(snapshotOf(g), 100);
    expect(rowOf(r.snap, 't')).toMatchObject({ status: 'Failed', failureClass: 'ValidationFailed' });
    expect(r.result.enqueue).toEqual([]);
  });

  it('uses an operator input override as the input member of the node input document', () => {
    const s0 = snapshotOf(chain());
    s0.nodes[1] = { ...s0.nodes[1]!, inputOverride: { input: { edited: true } } };
    const r = step(s0, 100);
    expect(r.result.enqueue[0]!.input.input).toEqual({ edited: true });
  });
});

describe('run status recompute', () => {
  it('fails the run with the class of the lowest-keyed failed node and cancels other live work at once', () => {
    const g = graphOf(
      [node('s', 'Start'), node('b', 'Tool', { maxAttempts: 1 }), node('a', 'Tool', { maxAttempts: 1 }), node('c', 'Tool'), node('e', 'End')],
      [edge('1', 's', 'a'), edge('2', 's', 'b'), edge('3', 's', 'c'), edge('4', 'a', 'e'), edge('5', 'b', 'e'), edge('6', 'c', 'e')],
    );
    let { snap } = step(snapshotOf(g), 10);
    snap = withResult(withResult(snap, 'b', failed('ValidationFailed', 'bad b')), 'a', failed('NodeFailed', 'bad a'));
    const r = step(snap, 20);
    expect(r.snap.run).toMatchObject({ status: 'Failed', failureClass: 'AttemptsExhausted' });
    expect(r.snap.run.reason).toContain("'a'");
    expect(rowOf(r.snap, 'c').status).toBe('Cancelled');
    expect(r.result.cancel.map((c) => c.nodeKey)).toEqual(['c']);
    expect(r.result.events.filter((e) => e.kind === 'run.failed')).toHaveLength(1);
  });

  it('does not fail the run for an onError Continue node and routes its failed envelope', () => {
    const g = graphOf(
      [node('s', 'Start'), node('t', 'Tool', { onError: 'Continue', maxAttempts: 1 }), node('ok', 'End', { config: { outcome: 'ok' } }), node('bad', 'End', { config: { outcome: 'bad' } })],
      [
        edge('1', 's', 't'),
        edge('2', 't', 'ok', { condition: { path: 'status', op: 'Eq', value: 'succeeded' } }),
        edge('3', 't', 'bad', { condition: { path: 'status', op: 'Eq', value: 'failed' } }),
      ],
    );
    const { snap } = step(snapshotOf(g), 10);
    const r = step(withResult(snap, 't', failed('NodeFailed')), 20);
    expect(rowOf(r.snap, 't')).toMatchObject({ status: 'Failed', failureClass: 'AttemptsExhausted' });
    expect(rowOf(r.snap, 't').output).toMatchObject({ status: 'failed', branch: '3', error: { class: 'AttemptsExhausted' } });
    expect(r.snap.run.status).toBe('Completed');
    expect(r.result.run?.set.output).toMatchObject({ outcome: 'bad' });
  });

  it('cancels the run with a reason naming the unreached ends when nothing is live and no End succeeded', () => {
    const g = graphOf(
      [node('s', 'Start'), node('c', 'Condition'), node('x', 'Tool'), node('e', 'End')],
      [edge('1', 's', 'c'), edge('2', 'c', 'x', { condition: { path: 'output.input.go', op: 'Eq', value: true } }), edge('3', 'c', 'x', { condition: { path: 'output.input.go', op: 'Eq', value: 1 } }), edge('4', 'x', 'e')],
    );
    const r = step(snapshotOf(g, { go: false }), 10);
    expect(r.snap.run.status).toBe('Cancelled');
    expect(r.snap.run.reason).toContain("'e' (Skipped)");
    expect(r.result.events.at(-1)?.kind).toBe('run.cancelled');
  });

  it('reads WaitingForApproval while a gate waits, outranking running work, and Running again once decided', () => {
    const g = graphOf(
      [node('s', 'Start'), node('p', 'Pause', { config: { prompt: 'ok?', allowedDecisions: ['Approve'] } }), node('t', 'Tool'), node('e', 'End')],
      [edge('1', 's', 'p'), edge('2', 's', 't'), edge('3', 'p', 'e'), edge('4', 't', 'e')],
    );
    const r = step(snapshotOf(g), 10);
    expect(r.snap.run.status).toBe('WaitingForApproval');
    expect(rowOf(r.snap, 'p')).toMatchObject({ status: 'WaitingForApproval', pendingDecisionKind: 'Approve' });
    expect(r.result.events.map((e) => e.kind)).toContain('gate.requested');
    expect(r.result.events.map((e) => e.kind)).toContain('run.waiting');
  });

  it('sets wakeAt to the earliest future backoff or deadline and null when none', () => {
    const { snap, result } = step(snapshotOf(chain()), 100);
    expect(result.wakeAt).toBe(600_100);
    const r = step(withResult(snap, 't', failed('NodeFailed')), 200);
    expect(r.result.wakeAt).toBe(200 + 500);
    const done = step(withResult(step(r.snap, 700).snap, 't', ok({ r: 1 })), 800);
    expect(done.result.wakeAt).toBeNull();
  });

  it('fails the run instead of throwing on a snapshot whose rows do not match the graph', () => {
    const s = snapshotOf(chain());
    const bad: RunSnapshot = { ...s, nodes: s.nodes.slice(1) };
    const r = plan(bad, contextAt(5));
    expect(r.run?.set).toMatchObject({ status: 'Failed' });
    expect(r.run?.set.reason).toContain("'s' has no row");
    expect(() => plan({} as RunSnapshot, contextAt(5))).not.toThrow();
    expect(() => plan({ ...s, graph: null } as unknown as RunSnapshot, contextAt(5))).not.toThrow();
  });

  it('emits only event kinds from the closed list', () => {
    const { result } = step(snapshotOf(chain()), 1);
    for (const e of result.events) expect(EVENT_KINDS).toContain(e.kind);
  });
});

describe('retries and deadlines', () => {
  it('returns a retryable failure to Pending with backoff notBefore = now + min(maxMs, initialMs*multiplier^(attempt-1))', () => {
    const g = chain();
    g.nodes[1]!.retryBackoff = { initialMs: 100, multiplier: 3, maxMs: 500 };
    let { snap } = step(snapshotOf(g), 0);
    let r = step(withResult(snap, 't', failed('NodeFailed', 'x')), 1_000);
    expect(rowOf(r.snap, 't')).toMatchObject({ status: 'Pending', attempt: 1, notBefore: 1_100, failureClass: 'NodeFailed' });
    expect(r.result.events.map((e) => e.kind)).toEqual(['node.started', 'node.failed', 'node.retried']);
    expect(r.snap.run.status).toBe('Running');
    expect(step(r.snap, 1_050).result.enqueue).toEqual([]);
    snap = step(r.snap, 1_100).snap;
    expect(rowOf(snap, 't')).toMatchObject({ status: 'Queued', attempt: 2 });
    r = step(withResult(snap, 't', failed('Timeout')), 2_000);
    expect(rowOf(r.snap, 't').notBefore).toBe(2_300);
  });

  it('fails the last allowed attempt AttemptsExhausted and keeps the real cause in reason and the event', () => {
    const g = chain();
    g.nodes[1]!.maxAttempts = 1;
    const { snap } = step(snapshotOf(g, null), 0);
    const r = step(withResult(snap, 't', failed('NodeFailed', 'provider said no')), 10);
    expect(rowOf(r.snap, 't')).toMatchObject({ status: 'Failed', failureClass: 'AttemptsExhausted' });
    expect(rowOf(r.snap, 't').reason).toContain('NodeFailed: provider said no');
    const ev = r.result.events.find((e) => e.kind === 'node.failed');
    expect(ev?.detail).toMatchObject({ class: 'AttemptsExhausted', cause: 'NodeFailed' });
  });

  it('never retries a non-retryable class', () => {
    const { snap } = step(snapshotOf(chain()), 0);
    const r = step(withResult(snap, 't', failed('ValidationFailed', 'no')), 10);
    expect(rowOf(r.snap, 't')).toMatchObject({ status: 'Failed', failureClass: 'ValidationFailed', reason: 'no' });
    // a worker's capacity refusal (the model cannot be loaded) is final too
    const cap = step(withResult(snap, 't', failed('CapacityRejected', 'no memory')), 10);
    expect(rowOf(cap.snap, 't')).toMatchObject({ status: 'Failed', failureClass: 'CapacityRejected', reason: 'no memory' });
    expect(cap.result.events.some((e) => e.kind === 'node.retried')).toBe(false);
  });

  it('stops retrying when the run retry budget is spent', () => {
    const { snap } = step(snapshotOf(chain()), 0, { maxTotalAttempts: 0 });
    const r = step(withResult(snap, 't', failed('NodeFailed', 'x')), 10, { maxTotalAttempts: 0 });
    expect(rowOf(r.snap, 't')).toMatchObject({ status: 'Failed', failureClass: 'AttemptsExhausted' });
    expect(rowOf(r.snap, 't').reason).toContain('run retry budget');
  });

  it('times out Queued or Running work past its deadline and cancels the invocation', () => {
    const g = chain();
    g.nodes[1]!.timeoutSeconds = 5;
    const { snap } = step(snapshotOf(g), 0);
    const inv = rowOf(snap, 't').invocationId!;
    expect(step(snap, 4_999).result.cancel).toEqual([]);
    const r = step(snap, 5_000);
    expect(r.result.cancel).toEqual([{ nodeKey: 't', invocationId: inv, reason: 'deadline passed' }]);
    expect(rowOf(r.snap, 't')).toMatchObject({ status: 'Pending', failureClass: 'Timeout' });
  });
});
