import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canReachNode, canReachRun } from '../state-machine';
import { CANCEL_UNCONFIRMED_PREFIX } from './drain';
import { drive, edge, failed, graphOf, node, ok, rowOf, snapshotOf, step, withResult } from './test-kit';
import type { Intent, PlanResult, RunSnapshot } from './types';

const gate = { prompt: 'ok?', allowedDecisions: ['Approve'] };

/** Start → Tools a, b and Pause g → End (All). */
const fan = (aExtra = {}) =>
  graphOf(
    [node('s', 'Start'), node('a', 'Tool', aExtra), node('b', 'Tool'), node('g', 'Pause', { config: gate }), node('e', 'End')],
    [edge('1', 's', 'a'), edge('2', 's', 'b'), edge('3', 's', 'g'), edge('4', 'a', 'e'), edge('5', 'b', 'e'), edge('6', 'g', 'e')],
  );

/** Start → Tools a, b → End (All). */
const pair = () =>
  graphOf(
    [node('s', 'Start'), node('a', 'Tool'), node('b', 'Tool'), node('e', 'End')],
    [edge('1', 's', 'a'), edge('2', 's', 'b'), edge('3', 'a', 'e'), edge('4', 'b', 'e')],
  );

const withIntents = (snap: RunSnapshot, ...intents: Intent[]): RunSnapshot => ({ ...snap, intents: [...snap.intents, ...intents] });
const cancel = (snap: RunSnapshot, reason: string | null = 'stop'): RunSnapshot => withIntents(snap, { id: 'cx', kind: 'cancel', reason });
const kinds = (r: PlanResult, key: string | null) => r.events.filter((e) => e.nodeKey === key).map((e) => e.kind);

describe('the Cancelling drain', () => {
  it('sends each lane row its cancel once and keeps it live until its worker reports an outcome; a gate is cancelled at once', () => {
    const started = step(snapshotOf(fan()), 0).snap;
    const invA = rowOf(started, 'a').invocationId!;
    const invB = rowOf(started, 'b').invocationId!;
    const r1 = step(cancel(started), 100);
    expect(r1.result.cancel).toEqual([
      { nodeKey: 'a', invocationId: invA, reason: 'run cancelled: stop' },
      { nodeKey: 'b', invocationId: invB, reason: 'run cancelled: stop' },
    ]);
    expect(rowOf(r1.snap, 'a')).toMatchObject({ status: 'Queued', failureClass: 'Cancelled', reason: 'run cancelled: stop', deadlineAt: 10_100 });
    expect(rowOf(r1.snap, 'g')).toMatchObject({ status: 'Cancelled', reason: 'run cancelled: stop' });
    expect(r1.snap.run.status).toBe('Cancelling');
    expect(r1.result.wakeAt).toBe(10_100);
    expect(r1.result.events.map((e) => e.kind)).toEqual(['node.cancelled']);

    // a worker takes a: it reads Running, still awaiting its confirmation; nothing is sent again
    const r2 = step({ ...r1.snap, started: [{ invocationId: invA, nodeKey: 'a', at: 150 }] }, 200);
    expect(rowOf(r2.snap, 'a')).toMatchObject({ status: 'Running', failureClass: 'Cancelled', deadlineAt: 10_100 });
    expect(r2.result.cancel).toEqual([]);
    expect(r2.snap.run.status).toBe('Cancelling');
    expect(r2.result.wakeAt).toBe(10_100);

    const r3 = step(withResult(r2.snap, 'a', failed('Cancelled', 'cancelled by the engine')), 300);
    expect(rowOf(r3.snap, 'a')).toMatchObject({ status: 'Cancelled', failureClass: 'Cancelled', reason: 'run cancelled: stop', deadlineAt: null });
    expect(r3.result.events).toEqual([
      { kind: 'node.cancelled', nodeKey: 'a', detail: { reason: 'run cancelled: stop', confirmed: true, invocationId: invA, outcome: 'Cancelled' } },
    ]);
    expect(r3.snap.run.status).toBe('Cancelling');

    // any outcome confirms: a success that lost the race still reads Cancelled
    const r4 = step(withResult(r3.snap, 'b', ok({ x: 1 })), 400);
    expect(rowOf(r4.snap, 'b')).toMatchObject({ status: 'Cancelled', output: null });
    expect(r4.result.events[0]?.detail).toMatchObject({ confirmed: true, outcome: 'succeeded' });
    expect(r4.snap.run).toMatchObject({ status: 'Cancelled', failureClass: 'Cancelled', reason: 'stop', finishedAt: 400 });
    expect(r4.result.events.at(-1)).toEqual({ kind: 'run.cancelled', nodeKey: null, detail: { reason: 'stop', survivors: [] } });
    expect(rowOf(r4.snap, 'e').status).toBe('Pending');
    expect(r4.result.wakeAt).toBeNull();
  });

  it('confirms with a retryable failure without backing off, and names no operator reason when none was given', () => {
    const started = step(snapshotOf(pair()), 0).snap;
    const r1 = step(cancel(started, null), 10);
    expect(rowOf(r1.snap, 'a').reason).toBe('run cancelled');
    const r2 = step(withResult(withResult(r1.snap, 'a', failed('NodeFailed')), 'b', failed('Interrupted')), 20);
    expect(rowOf(r2.snap, 'a')).toMatchObject({ status: 'Cancelled', attempt: 1 });
    expect(rowOf(r2.snap, 'b')).toMatchObject({ status: 'Cancelled', attempt: 1 });
    expect(r2.result.events.map((e) => e.kind)).not.toContain('node.retried');
    expect(r2.snap.run).toMatchObject({ status: 'Cancelled', reason: 'run cancelled' });
  });

  it('settles as usual a result that lands in the cancel’s own tick (its cancel was never sent)', () => {
    const started = step(snapshotOf(pair()), 0).snap;
    const r = step(withResult(withResult(cancel(started), 'a', ok({ v: 1 })), 'b', ok({ v: 2 })), 10);
    expect(rowOf(r.snap, 'a').status).toBe('Succeeded');
    expect(r.result.cancel).toEqual([]);
    expect(r.snap.run.status).toBe('Cancelled');
    expect(rowOf(r.snap, 'e').status).toBe('Pending');
  });

  it('lets only the grace deadline (CANCEL_DRAIN_GRACE_MS), not the attempt deadline, end a row awaiting its cancel: it survives, Failed Interrupted, and the run says so', () => {
    const opts = { cancelDrainGraceMs: 5_000 };
    const started = step(snapshotOf(fan({ timeoutSeconds: 1 })), 0, opts).snap;
    expect(rowOf(started, 'a').deadlineAt).toBe(1_000);
    const invA = rowOf(started, 'a').invocationId!;
    let r = step(cancel(started), 100, opts);
    expect(rowOf(r.snap, 'a').deadlineAt).toBe(5_100);
    r = step(withResult(r.snap, 'b', failed('Cancelled')), 200, opts);
    r = step(r.snap, 3_000, opts);
    expect(rowOf(r.snap, 'a')).toMatchObject({ status: 'Queued', failureClass: 'Cancelled' });
    expect(r.result.cancel).toEqual([]);
    expect(r.result.events).toEqual([]);
    expect(r.result.wakeAt).toBe(5_100);

    r = step(r.snap, 5_100, opts);
    const a = rowOf(r.snap, 'a');
    expect(a).toMatchObject({ status: 'Failed', failureClass: 'Interrupted', invocationId: invA, deadlineAt: null, finishedAt: 5_100 });
    expect(a.cause).toBe('CancelUnconfirmed');
    expect(a.reason?.startsWith(CANCEL_UNCONFIRMED_PREFIX)).toBe(true);
    expect(a.reason).toMatch(/may still be running/);
    expect(a.output).toMatchObject({ status: 'failed', error: { class: 'Interrupted' } });
    expect(r.result.events.find((e) => e.kind === 'node.failed')?.detail).toMatchObject({ class: 'Interrupted', cancelUnconfirmed: true, invocationId: invA });
    expect(r.snap.run).toMatchObject({ status: 'Cancelled', failureClass: 'Cancelled' });
    expect(r.snap.run.reason).toMatch(/^stop; cancel not confirmed for 'a'/);
    expect(r.result.events.at(-1)).toEqual({ kind: 'run.cancelled', nodeKey: null, detail: { reason: 'stop', survivors: [{ nodeKey: 'a', invocationId: invA }] } });
    expect(r.result.wakeAt).toBeNull();

    // a late outcome for the survivor is consumed and ignored
    const late = step(withResult(r.snap, 'a', failed('Cancelled')), 9_000, opts);
    expect(late.result.consumedInvocationIds).toEqual([invA]);
    expect(late.result.nodes).toEqual([]);
    expect(late.result.events).toEqual([]);
    expect(rowOf(late.snap, 'a').status).toBe('Failed');
  });

  it('reopens the run when its survivor is retried: the rows its cancel cancelled return to Pending and the run can complete', () => {
    const started = step(snapshotOf(pair()), 0).snap;
    let r = step(cancel(started), 10);
    r = step(withResult(r.snap, 'b', failed('Cancelled')), 20);
    r = step(r.snap, 10_010);
    expect(r.snap.run.status).toBe('Cancelled');
    expect(rowOf(r.snap, 'a').status).toBe('Failed');

    r = step(withIntents(r.snap, { id: 'r1', kind: 'retry', nodeKey: 'a' }), 20_000);
    expect(r.snap.run).toMatchObject({ status: 'Running', failureClass: 'None', reason: null, finishedAt: null, cancelReason: null });
    expect(rowOf(r.snap, 'a')).toMatchObject({ status: 'Queued', attempt: 2, failureClass: 'None' });
    expect(rowOf(r.snap, 'b')).toMatchObject({ status: 'Queued', attempt: 2, failureClass: 'None' });
    expect(r.result.events.find((e) => e.kind === 'run.resumed')?.detail).toEqual({ reopened: true, by: 'retry', from: 'Cancelled' });
    expect(kinds(r.result, 'b')).toEqual(['node.retried', 'node.queued']);
    const done = drive(r.snap, () => ok({ v: 1 }));
    expect(done.snap.run.status).toBe('Completed');
  });

  it('reopens a run with a gate and several survivors only once the last survivor is retried or completed', () => {
    const started = step(snapshotOf(fan()), 0).snap;
    let r = step(cancel(started), 10);
    r = step(r.snap, 10_010);
    expect(r.result.events.at(-1)?.detail).toMatchObject({ survivors: [{ nodeKey: 'a' }, { nodeKey: 'b' }] });

    r = step(withIntents(r.snap, { id: 'r1', kind: 'retry', nodeKey: 'a' }), 20_000);
    expect(rowOf(r.snap, 'a').status).toBe('Pending');
    expect(r.snap.run.status).toBe('Cancelled');
    expect(r.result.enqueue).toEqual([]);

    r = step(withIntents(r.snap, { id: 'c1', kind: 'complete', nodeKey: 'b', output: { by: 'hand' } }), 21_000);
    expect(rowOf(r.snap, 'b')).toMatchObject({ status: 'Succeeded' });
    expect(r.result.cancel).toEqual([]);
    expect(r.snap.run.status).toBe('WaitingForApproval');
    expect(rowOf(r.snap, 'a').status).toBe('Queued');
    expect(rowOf(r.snap, 'g').status).toBe('WaitingForApproval');
    expect(r.result.events.find((e) => e.kind === 'run.resumed')?.detail).toMatchObject({ by: 'complete', from: 'Cancelled' });
  });

  it('lists a survivor whose deadline passed while a child run was still draining, once the child ended', () => {
    const g = graphOf(
      [node('s', 'Start'), node('a', 'Tool'), node('w', 'Subworkflow', { config: { definitionId: 'd' } }), node('e', 'End')],
      [edge('1', 's', 'a'), edge('2', 's', 'w'), edge('3', 'a', 'e'), edge('4', 'w', 'e')],
    );
    const started = step(snapshotOf(g), 0).snap;
    const invA = rowOf(started, 'a').invocationId!;
    const childRunId = rowOf(started, 'w').childRunId!;
    let r = step(cancel(started), 10);
    expect(r.result.cancelChildren).toEqual([childRunId]);
    r = step(r.snap, 10_010);
    expect(rowOf(r.snap, 'a').status).toBe('Failed');
    expect(r.snap.run.status).toBe('Cancelling');
    const childEnded: RunSnapshot = {
      ...r.snap,
      children: [{ childRunId, nodeKey: 'w', status: 'Cancelled', output: null, failureClass: 'Cancelled', reason: 'parent run cancelled' }],
    };
    r = step(childEnded, 10_500);
    expect(rowOf(r.snap, 'w').status).toBe('Cancelled');
    expect(r.snap.run.status).toBe('Cancelled');
    expect(r.result.events.at(-1)?.detail).toEqual({ reason: 'stop', survivors: [{ nodeKey: 'a', invocationId: invA }] });
  });

  it('refuses retry and complete on a Cancelled run for anything but a survivor', () => {
    const started = step(snapshotOf(pair()), 0).snap;
    let r = step(cancel(started), 10);
    r = step(withResult(withResult(r.snap, 'a', failed('Cancelled')), 'b', failed('Cancelled')), 20);
    expect(r.snap.run.status).toBe('Cancelled');
    const failedRow = { ...rowOf(r.snap, 'b'), status: 'Failed' as const, failureClass: 'NodeFailed' as const, reason: 'boom' };
    const snap = { ...r.snap, nodes: r.snap.nodes.map((n) => (n.nodeKey === 'b' ? failedRow : n)) };
    const refused = step(
      withIntents(snap, { id: 'r1', kind: 'retry', nodeKey: 'a' }, { id: 'r2', kind: 'retry', nodeKey: 'b' }, { id: 'c1', kind: 'complete', nodeKey: 'b', output: {} }),
      30,
    );
    expect(refused.result.consumedIntentIds).toEqual(['r1', 'r2', 'c1']);
    expect(refused.result.nodes).toEqual([]);
    expect(refused.result.events).toEqual([]);
    expect(refused.snap.run.status).toBe('Cancelled');
  });
});

describe('the Cancelling drain on random timings', () => {
  it('reads Cancelling while any lane row is unconfirmed before its deadline, ends by the deadline with exactly the unconfirmed rows as survivors, and a retry of every survivor reopens a run that then completes', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.record({ at: fc.integer({ min: 0, max: 12 }), ok: fc.boolean(), started: fc.boolean() }), { minLength: 6, maxLength: 6 }),
        fc.integer({ min: 1, max: 8 }),
        (n, fates, graceTicks) => {
          const keys = Array.from({ length: n }, (_, i) => `t${i}`);
          const graph = graphOf(
            [node('s', 'Start'), ...keys.map((k) => node(k, 'Tool')), node('e', 'End')],
            [...keys.map((k) => edge(`s-${k}`, 's', k)), ...keys.map((k) => edge(`${k}-e`, k, 'e'))],
          );
          const opts = { cancelDrainGraceMs: graceTicks * 100 };
          let snap = step(snapshotOf(graph), 0, opts).snap;
          snap = step(cancel(snap), 100, opts).snap;
          const invocations = new Map(keys.map((k) => [k, rowOf(snap, k).invocationId!]));
          const confirmedBy = new Map<string, number>();
          let survivors: { nodeKey: string; invocationId: string }[] | null = null;
          for (let tick = 2; tick <= 14; tick++) {
            const now = tick * 100;
            const prev = snap;
            const results = keys.flatMap((k, i) =>
              fates[i]!.at === tick ? [{ invocationId: invocations.get(k)!, nodeKey: k, outcome: fates[i]!.ok ? ok({ v: 1 }, now) : failed('Cancelled', 'x', now) }] : [],
            );
            const started = keys.flatMap((k, i) => (fates[i]!.started && fates[i]!.at === tick - 1 ? [{ invocationId: invocations.get(k)!, nodeKey: k, at: now }] : []));
            const r = step({ ...snap, results, started }, now, opts);
            snap = r.snap;
            expect(r.result.cancel).toEqual([]);
            expect(r.result.enqueue).toEqual([]);
            for (const row of snap.nodes) {
              const before = rowOf(prev, row.nodeKey);
              if (before.status !== row.status) expect(canReachNode(before.status, row.status)).toBe(true);
            }
            if (prev.run.status !== snap.run.status) expect(canReachRun(prev.run.status, snap.run.status)).toBe(true);
            // results are applied before the drain judges deadlines: one landing in the deadline's tick still confirms
            for (const res of results) if (prev.run.status === 'Cancelling' && !confirmedBy.has(res.nodeKey)) confirmedBy.set(res.nodeKey, now);
            const ended = r.result.events.find((e) => e.kind === 'run.cancelled');
            if (ended) survivors = ended.detail['survivors'] as typeof survivors;
            const deadline = 100 + opts.cancelDrainGraceMs;
            const allConfirmed = keys.every((k) => confirmedBy.has(k));
            expect(snap.run.status).toBe(allConfirmed || now >= deadline ? 'Cancelled' : 'Cancelling');
          }
          const expected = keys.filter((k) => !confirmedBy.has(k)).map((k) => ({ nodeKey: k, invocationId: invocations.get(k)! }));
          expect(survivors).toEqual(expected);
          for (const k of keys) expect(rowOf(snap, k).status).toBe(confirmedBy.has(k) ? 'Cancelled' : 'Failed');
          if (expected.length === 0) return;
          const retried = step(withIntents(snap, ...expected.map((s, i) => ({ id: `r${i}`, kind: 'retry' as const, nodeKey: s.nodeKey }))), 5_000, opts);
          expect(retried.snap.run.status).toBe('Running');
          expect(keys.every((k) => rowOf(retried.snap, k).status === 'Queued')).toBe(true);
          expect(drive(retried.snap, () => ok({ v: 2 }), opts).snap.run.status).toBe('Completed');
        },
      ),
      { numRuns: 200 },
    );
  });
});
