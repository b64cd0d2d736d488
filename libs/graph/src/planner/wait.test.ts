import { describe, expect, it } from 'vitest';
import { parseGraph } from '../parse';
import { OPTS } from '../parse/fixtures/builders';
import type { Json } from '../model';
import { edge, graphOf, node, rowOf, snapshotOf, step } from './test-kit';
import type { Intent, RunSnapshot } from './types';

const wait = (config: Record<string, Json>) =>
  graphOf(
    [node('s', 'Start'), node('w', 'Wait', { config }), node('e', 'End', { config: { outcome: 'ok', resultPath: 'input.output' } })],
    [edge('1', 's', 'w'), edge('2', 'w', 'e')],
  );
const withIntents = (snap: RunSnapshot, ...intents: Intent[]): RunSnapshot => ({ ...snap, intents: [...snap.intents, ...intents] });

describe('Wait node (timer)', () => {
  it('parks Running with no invocation, wakes the run at its time, then fires and the run completes', () => {
    const first = step(snapshotOf(wait({ for: 'PT2S' })), 1000);
    expect(rowOf(first.snap, 'w')).toMatchObject({ status: 'Running', invocationId: null, childRunId: null, deadlineAt: 3000 });
    expect(first.result.enqueue).toEqual([]);
    expect(first.result.wakeAt).toBe(3000);
    expect(first.result.events.find((e) => e.kind === 'node.started' && e.nodeKey === 'w')?.detail).toEqual({ attempt: 1, wakeAt: new Date(3000).toISOString() });
    // parked on a time only: the run holds no run slot
    expect(first.snap.run.status).toBe('WaitingForApproval');

    const early = step(first.snap, 2999);
    expect(rowOf(early.snap, 'w').status).toBe('Running');
    expect(early.result.wakeAt).toBe(3000);

    const due = step(early.snap, 3005);
    expect(rowOf(due.snap, 'w')).toMatchObject({ status: 'Succeeded', output: { status: 'succeeded', output: { fired: 'timer', at: new Date(3000).toISOString() } } });
    expect(due.snap.run.status).toBe('Completed');
    expect(rowOf(due.snap, 'e').output?.output).toMatchObject({ outcome: 'ok', result: { fired: 'timer' } });
  });

  it('reads until from the input document and fires at once when that time has passed', () => {
    const g = wait({ until: 'run.input.due' });
    const at = Date.UTC(2030, 0, 1);
    const parked = step(snapshotOf(g, { due: '2030-01-01T00:00:00Z' }), 0);
    expect(rowOf(parked.snap, 'w').deadlineAt).toBe(at);
    const late = step(snapshotOf(g, { due: '2030-01-01T00:00:00Z' }), at + 5);
    expect(rowOf(late.snap, 'w').status).toBe('Succeeded');
    expect(late.snap.run.status).toBe('Completed');
  });

  it('fails the node ValidationFailed when until resolves to no timestamp', () => {
    const { snap } = step(snapshotOf(wait({ until: 'run.input.due' }), { due: 42 }), 0);
    expect(rowOf(snap, 'w')).toMatchObject({ status: 'Failed', failureClass: 'ValidationFailed', reason: expect.stringContaining("path 'run.input.due' holds number") });
    expect(snap.run.status).toBe('Failed');
  });

  it('is cancelled at once by a run cancel, even past its wake time', () => {
    const { snap } = step(snapshotOf(wait({ for: 'PT1H' })), 0);
    const r = step(withIntents(snap, { id: 'c', kind: 'cancel', reason: 'stop' } as Intent), 3_600_000 + 1);
    expect(rowOf(r.snap, 'w')).toMatchObject({ status: 'Cancelled', cause: 'RunCancel' });
    expect(r.snap.run.status).toBe('Cancelled');
    expect(r.result.cancel).toEqual([]);
  });

  it('is completed by an operator with the output given', () => {
    const { snap } = step(snapshotOf(wait({ for: 'PT1H' })), 0);
    const r = step(withIntents(snap, { id: 'k', kind: 'complete', nodeKey: 'w', output: { fired: 'operator' } } as Intent), 10);
    expect(rowOf(r.snap, 'w')).toMatchObject({ status: 'Succeeded', output: { output: { fired: 'operator' } } });
    expect(r.snap.run.status).toBe('Completed');
  });

  it('still fires on a paused run, whose next node then waits for resume', () => {
    const { snap } = step(snapshotOf(wait({ for: 'PT1S' })), 0);
    const paused = step({ ...snap, run: { ...snap.run, paused: true } }, 1000);
    expect(rowOf(paused.snap, 'w').status).toBe('Succeeded');
    expect(rowOf(paused.snap, 'e').status).toBe('Pending');
    const resumed = step({ ...paused.snap, run: { ...paused.snap.run, paused: false } }, 1001);
    expect(resumed.snap.run.status).toBe('Completed');
  });

  it('keeps the run Running (holding its slot) while other work runs beside the Wait', () => {
    const g = graphOf(
      [node('s', 'Start'), node('w', 'Wait', { config: { for: 'PT1H' } }), node('t', 'Tool'), node('e', 'End')],
      [edge('1', 's', 'w'), edge('2', 's', 't'), edge('3', 'w', 'e'), edge('4', 't', 'e')],
    );
    const { snap } = step(snapshotOf(g), 0);
    expect(rowOf(snap, 't').status).toBe('Queued');
    expect(snap.run.status).toBe('Running');
  });
});

describe('Wait node config', () => {
  it('keeps the declared signal channels on the graph and refuses a malformed block', () => {
    const ok = parseGraph(doc({ signal: 'review' }), OPTS);
    expect(ok.ok && ok.graph.signals).toEqual({ review: { schema: { type: 'object' } } });
    const bad = parseGraph({ ...doc({ for: 'PT1S' }), signals: { 'no way': {}, x: { schema: 1 }, y: { other: 1 } } }, OPTS);
    expect(bad.ok ? [] : bad.errors.map((e) => e.message)).toEqual([
      expect.stringContaining('signals.no way: a channel name'),
      expect.stringContaining('signals.x: schema'),
      expect.stringContaining("signals.y: unknown member 'other'"),
    ]);
  });

  const doc = (config: Json) => ({
    schemaVersion: 1,
    signals: { review: { schema: { type: 'object' } } },
    nodes: [{ key: 's', kind: 'Start' }, { key: 'w', kind: 'Wait', config }, { key: 'e', kind: 'End', config: { outcome: 'ok' } }],
    edges: [{ key: '1', from: 's', to: 'w' }, { key: '2', from: 'w', to: 'e' }],
  });
  const errors = (config: Json) => {
    const r = parseGraph(doc(config), OPTS);
    return r.ok ? [] : r.errors.map((e) => `${e.key}: ${e.message}`);
  };

  it.each([[{ for: 'PT3D' }], [{ until: '2030-01-31T09:00:00Z' }], [{ until: 'run.input.due' }], [{ signal: 'review' }]])('accepts %j', (config) => {
    expect(errors(config)).toEqual([]);
  });

  it.each([
    [{}, 'needs one of for'],
    [{ for: 'PT1S', until: 'run.input.due' }, 'cannot be given together'],
    [{ for: 'P1M' }, 'years and months'],
    [{ for: '10s' }, 'not an ISO-8601 duration'],
    [{ until: '2030-02-30T09:00:00Z' }, 'no real instant'],
    [{ until: 'a..b' }, 'neither an RFC 3339 timestamp nor a dot path'],
    [{ signal: 'review', for: 'PT1S' }, 'config.for and config.signal cannot be given together'],
    [{ signal: 'nope' }, "names channel 'nope', which the graph's signals do not declare \\(declared: review\\)"],
  ])('refuses %j with a keyed error', (config, text) => {
    expect(errors(config)).toEqual([expect.stringMatching(new RegExp(`^w: .*${text}`))]);
  });
});

describe('Wait node (signal)', () => {
  /** s → w1 (signal review) → w2 (signal review) → e */
  const twoWaits = () => ({
    ...graphOf(
      [node('s', 'Start'), node('w1', 'Wait', { config: { signal: 'review' } }), node('w2', 'Wait', { config: { signal: 'review' } }), node('e', 'End', { config: { outcome: 'ok', resultPath: 'upstream' } })],
      [edge('1', 's', 'w1'), edge('2', 'w1', 'w2'), edge('3', 'w2', 'e')],
    ),
    signals: { review: { schema: null } },
  });
  const sig = (id: string, at: number, payload: Json, channel = 'review') => ({ id, channel, payload, at });
  const withSignals = (snap: RunSnapshot, ...signals: ReturnType<typeof sig>[]): RunSnapshot => ({ ...snap, signals });

  it('parks with no wake time and no run slot until a signal of its channel arrives, then settles on it', () => {
    const first = step(snapshotOf(twoWaits()), 0);
    expect(rowOf(first.snap, 'w1')).toMatchObject({ status: 'Running', invocationId: null, deadlineAt: null });
    expect(first.result.wakeAt).toBeNull();
    expect(first.snap.run.status).toBe('WaitingForApproval');
    expect(step(first.snap, 50).result.consumedSignals).toBeUndefined();

    const r = step(withSignals(first.snap, sig('x', 60, { ok: 1 }, 'other'), sig('a', 70, { ok: true })), 100);
    expect(r.result.consumedSignals).toEqual([{ signalId: 'a', nodeKey: 'w1' }]);
    expect(rowOf(r.snap, 'w1').output?.output).toEqual({ fired: 'signal', channel: 'review', payload: { ok: true }, at: '1970-01-01T00:00:00.070Z' });
    expect(rowOf(r.snap, 'w2').status).toBe('Running');
  });

  it('consumes signals sent before the Waits were reached, oldest first, each once, in the tick that reaches them', () => {
    const r = step(withSignals(snapshotOf(twoWaits()), sig('late', 20, 'second'), sig('early', 10, 'first')), 100);
    expect(r.result.consumedSignals).toEqual([{ signalId: 'early', nodeKey: 'w1' }, { signalId: 'late', nodeKey: 'w2' }]);
    expect(rowOf(r.snap, 'w1').output?.output).toMatchObject({ payload: 'first' });
    expect(rowOf(r.snap, 'w2').output?.output).toMatchObject({ payload: 'second' });
    expect(r.snap.run.status).toBe('Completed');
  });

  it('drops a consumed signal from the snapshot a committed plan leaves, so a later tick never reuses it', () => {
    const first = step(withSignals(snapshotOf(twoWaits()), sig('a', 1, 'only')), 10);
    expect(first.result.consumedSignals).toEqual([{ signalId: 'a', nodeKey: 'w1' }]);
    expect(first.snap.signals).toBeUndefined();
    const later = step(first.snap, 20);
    expect(rowOf(later.snap, 'w2').status).toBe('Running');
    expect(later.result.consumedSignals).toBeUndefined();
  });

  it('leaves a second signal for a later Wait when only one Wait is reached', () => {
    const g = { ...twoWaits() };
    const r = step(withSignals(snapshotOf(g, { q: 1 }, { paused: false }), sig('a', 1, 1), sig('b', 2, 2), sig('c', 3, 3)), 100);
    expect(r.result.consumedSignals?.map((c) => c.signalId)).toEqual(['a', 'b']);
  });

  it('is cancelled by a run cancel and consumes nothing while the run drains', () => {
    const { snap } = step(snapshotOf(twoWaits()), 0);
    const r = step(withIntents(withSignals(snap, sig('a', 5, 1)), { id: 'c', kind: 'cancel', reason: null } as Intent), 10);
    expect(rowOf(r.snap, 'w1').status).toBe('Cancelled');
    expect(r.result.consumedSignals).toBeUndefined();
    expect(r.snap.run.status).toBe('Cancelled');
  });
});
