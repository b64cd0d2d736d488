import { describe, expect, it } from 'vitest';
import { unstorableValues } from '../documents/storable';
import { applyPlanToSnapshot } from './apply';
import { quarantine, QUARANTINE_CANCEL_PREFIX } from './quarantine';
import { contextAt, edge, failed, graphOf, node, ok, rowOf, snapshotOf, step, withResult } from './test-kit';
import type { RunSnapshot } from './types';

/** Start → Tool `t` (3 attempts) → End. */
const chain = () =>
  graphOf(
    [node('s', 'Start'), node('t', 'Tool', { maxAttempts: 3 }), node('e', 'End', { config: { outcome: 'done' } })],
    [edge('1', 's', 't'), edge('2', 't', 'e')],
  );

/** The run with `t` queued. */
const queued = (): RunSnapshot => step(snapshotOf(chain()), 0).snap;

describe('a worker outcome the store cannot keep', () => {
  it.each([
    ['U+0000 in a string', { body: 'a\u0000b' }, /output cannot be stored: at output\.result\.body, string contains U\+0000/],
    ['a lone surrogate in a string', { json: { s: '\ud800' } }, /at output\.result\.json\.s, string contains a lone UTF-16 surrogate/],
    ['U+0000 in a member name', { 'k\u0000': 1 }, /at output\.result\.k\\u0000, member name contains U\+0000/],
  ])('fails the node ValidationFailed, not retried, naming where (%s), and the run ends', (_what, result, reason) => {
    const r = step(withResult(queued(), 't', ok({ result })), 10);
    const t = rowOf(r.snap, 't');
    expect(t).toMatchObject({ status: 'Failed', failureClass: 'ValidationFailed', attempt: 1 });
    expect(t.reason).toMatch(reason);
    expect(r.snap.run).toMatchObject({ status: 'Failed', failureClass: 'ValidationFailed' });
    // nothing the plan writes holds what the store refuses
    expect(unstorableValues(JSON.parse(JSON.stringify(r.result)))).toEqual([]);
  });

  it.each(['LlmCall', 'Agent', 'DecisionModel'] as const)('judges an LLM-lane (%s) output the same way', (kind) => {
    const g = graphOf([node('s', 'Start'), node('t', kind, { maxAttempts: 3 }), node('e', 'End')], [edge('1', 's', 't'), edge('2', 't', 'e')]);
    const snap = step(snapshotOf(g), 0).snap;
    const t = rowOf(step(withResult(snap, 't', ok({ text: 'x\u0000y', json: null })), 10).snap, 't');
    expect(t).toMatchObject({ status: 'Failed', failureClass: 'ValidationFailed', attempt: 1 });
    expect(t.reason).toMatch(/at output\.text, string contains U\+0000/);
  });

  it('keeps a failure reason storable: U+0000 and lone surrogates become U+FFFD', () => {
    const r = step(withResult(queued(), 't', failed('ValidationFailed', 'bad\u0000byte \udc00 here')), 10);
    expect(rowOf(r.snap, 't').reason).toBe('bad\ufffdbyte \ufffd here');
    expect(unstorableValues(JSON.parse(JSON.stringify(r.result)))).toEqual([]);
  });
});

describe('quarantine', () => {
  it('fails a live run Internal, cancels its live work and consumes every intent and report', () => {
    let snap = queued();
    const inv = rowOf(snap, 't').invocationId!;
    snap = { ...withResult(snap, 't', ok({ poison: 1 })), intents: [{ id: 'k', kind: 'skip', nodeKey: 'e' }] };
    const q = quarantine(snap, contextAt(20), 'the store refused the plan 3 times in a row (22P05): unsupported Unicode escape sequence');
    const after = applyPlanToSnapshot(snap, q);
    expect(after.run).toMatchObject({ status: 'Failed', failureClass: 'Internal', finishedAt: 20 });
    expect(after.run.reason).toMatch(/refused the plan 3 times/);
    expect(rowOf(after, 't')).toMatchObject({ status: 'Cancelled', reason: QUARANTINE_CANCEL_PREFIX });
    expect(rowOf(after, 'e').status).toBe('Pending');
    expect(q.cancel).toEqual([{ nodeKey: 't', invocationId: inv, reason: QUARANTINE_CANCEL_PREFIX }]);
    expect(q.consumedIntentIds).toEqual(['k']);
    expect(q.consumedInvocationIds).toEqual([inv]);
    expect(q.events.map((e) => e.kind)).toEqual(['run.failed', 'node.cancelled']);
    expect(q.events[0]!.detail).toMatchObject({ class: 'Internal' });
    expect(q.enqueue).toEqual([]);
    expect(q.wakeAt).toBeNull();
  });

  it('ends a Cancelling run Failed Internal, and only consumes the inputs of a run already ended', () => {
    const cancelling = { ...queued(), run: { ...queued().run, status: 'Cancelling' as const } };
    expect(applyPlanToSnapshot(cancelling, quarantine(cancelling, contextAt(5), 'x')).run.status).toBe('Failed');
    const ended = { ...queued(), run: { ...queued().run, status: 'Completed' as const }, intents: [{ id: 'c', kind: 'cancel' as const, reason: null }] };
    const q = quarantine(ended, contextAt(5), 'x');
    expect(q.run).toBeNull();
    expect(q.nodes).toEqual([]);
    expect(q.events).toEqual([]);
    expect(q.consumedIntentIds).toEqual(['c']);
  });

  it('keeps its reason storable and short', () => {
    const q = quarantine(queued(), contextAt(5), `bad\u0000${'x'.repeat(2000)}`);
    expect(q.run?.set.reason).toHaveLength(500);
    expect(q.run?.set.reason?.startsWith('bad\ufffd')).toBe(true);
  });
});
