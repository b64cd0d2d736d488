import { describe, expect, it } from 'vitest';
import { inflightInvocations, inflightVerdict, missingJobRemedy, type InflightRow } from './inflight';
import { commitFollowUps } from './plan-result';
import { edge, graphOf, node, ok, rowOf, snapshotOf, step, withResult } from './test-kit';
import type { RunSnapshot } from './types';

const chain = () =>
  graphOf([node('s', 'Start'), node('t', 'Tool', { timeoutSeconds: 30 }), node('e', 'End')], [edge('st', 's', 't'), edge('te', 't', 'e')]);

const queuedRow: InflightRow = { invocationId: 'inv-1', nodeKey: 't', status: 'Queued' };

describe('what the in-flight check concludes from a job’s fate', () => {
  it('takes a completed job’s outcome, and reads a failed or orphaned job as Interrupted', () => {
    expect(inflightVerdict(queuedRow, { state: 'completed', outcome: ok({ v: 1 }), finishedOn: 5 }, 9)).toEqual({
      kind: 'result',
      result: { invocationId: 'inv-1', nodeKey: 't', outcome: ok({ v: 1 }) },
    });
    const failed = inflightVerdict(queuedRow, { state: 'failed', reason: 'job stalled', finishedOn: 5 }, 9);
    expect(failed).toMatchObject({ kind: 'result', result: { outcome: { ok: false, failureClass: 'Interrupted', reason: 'worker interrupted: job stalled', finishedAt: 5 } } });
    const orphaned = inflightVerdict({ ...queuedRow, status: 'Running' }, { state: 'orphaned', processedOn: 2 }, 9);
    expect(orphaned).toMatchObject({ kind: 'result', result: { outcome: { failureClass: 'Interrupted', finishedAt: 9 } } });
  });

  it('reports a start only for a row still reading Queued, and nothing for a waiting or admitting job', () => {
    expect(inflightVerdict(queuedRow, { state: 'running', startedAt: 3 }, 9)).toEqual({ kind: 'started', started: { invocationId: 'inv-1', nodeKey: 't', at: 3 } });
    expect(inflightVerdict({ ...queuedRow, status: 'Running' }, { state: 'running', startedAt: 3 }, 9)).toEqual({ kind: 'none' });
    expect(inflightVerdict(queuedRow, { state: 'waiting' }, 9)).toEqual({ kind: 'none' });
    expect(inflightVerdict(queuedRow, { state: 'admitting' }, 9)).toEqual({ kind: 'none' });
    expect(inflightVerdict(queuedRow, { state: 'missing' }, 9)).toEqual({ kind: 'missing' });
  });
});

describe('what becomes of a row whose job is missing', () => {
  const queued = (): RunSnapshot => step(snapshotOf(chain()), 100).snap;

  it('puts the same job back on its lane, rebuilt from the committed row under the same invocation id', () => {
    const snap = queued();
    const inv = rowOf(snap, 't').invocationId!;
    const remedy = missingJobRemedy(snap, { invocationId: inv, nodeKey: 't' }, 1_000, 5_000);
    expect(remedy).toMatchObject({ kind: 'enqueue', tenantId: 't', item: { invocationId: inv, nodeKey: 't', lane: 'tool' } });
  });

  it('confirms the cancel of a Cancelling run’s missing job instead of enqueueing it', () => {
    const snap = queued();
    const inv = rowOf(snap, 't').invocationId!;
    const cancelling: RunSnapshot = { ...snap, run: { ...snap.run, status: 'Cancelling' } };
    expect(missingJobRemedy(cancelling, { invocationId: inv, nodeKey: 't' }, 1_000, 5_000)).toMatchObject({
      kind: 'result',
      result: { invocationId: inv, outcome: { ok: false, failureClass: 'Cancelled', finishedAt: 5_000 } },
    });
  });

  it('does nothing when the run is gone or the row holds another invocation by now', () => {
    const snap = queued();
    expect(missingJobRemedy(undefined, { invocationId: 'x', nodeKey: 't' }, 1_000, 5_000)).toEqual({ kind: 'none' });
    expect(missingJobRemedy(snap, { invocationId: 'an-older-one', nodeKey: 't' }, 1_000, 5_000)).toEqual({ kind: 'none' });
  });

  it('lists the invocations a snapshot holds in flight', () => {
    const snap = queued();
    expect(inflightInvocations(snap)).toEqual([{ invocationId: rowOf(snap, 't').invocationId, nodeKey: 't' }]);
    expect(inflightInvocations(snapshotOf(chain()))).toEqual([]);
  });
});

describe('the follow-ups of a committed plan', () => {
  it('pings the run’s last event at lastSeq plus the plan’s events, and is due again at once only when its wake has come', () => {
    const first = step(snapshotOf(chain()), 100);
    const f = commitFollowUps(snapshotOf(chain()), first.result, 100);
    expect(f.lastEvent).toEqual({ seq: 1 + first.result.events.length, kind: first.result.events.at(-1)!.kind });
    expect(f.wake).toEqual([]);
    expect(f.dueNow).toBe(first.result.wakeAt !== null && first.result.wakeAt <= 100);
    expect(commitFollowUps(first.snap, { ...first.result, events: [], wakeAt: 50 }, 100)).toMatchObject({ lastEvent: null, dueNow: true });
    expect(commitFollowUps(first.snap, { ...first.result, wakeAt: 150 }, 100).dueNow).toBe(false);
  });

  it('wakes cancelled children, and the parent only when the run’s status changed', () => {
    const queued = step(snapshotOf(chain(), { q: 1 }, { parentRunId: 'parent-1' }), 100).snap;
    const done = step(withResult(queued, 't', ok({ v: 1 })), 200);
    expect(done.result.run?.set.status).toBe('Completed');
    expect(commitFollowUps(queued, done.result, 200).wake).toEqual(['parent-1']);
    const same = { ...done.result, run: { expectVersion: 1, set: {} }, startChildren: [], cancelChildren: ['c-2'] };
    expect(commitFollowUps(queued, same, 200).wake).toEqual(['c-2']);
  });
});
