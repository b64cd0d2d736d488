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
  const doc = (config: Json) => ({
    schemaVersion: 1,
    nodes: [{ key: 's', kind: 'Start' }, { key: 'w', kind: 'Wait', config }, { key: 'e', kind: 'End', config: { outcome: 'ok' } }],
    edges: [{ key: '1', from: 's', to: 'w' }, { key: '2', from: 'w', to: 'e' }],
  });
  const errors = (config: Json) => {
    const r = parseGraph(doc(config), OPTS);
    return r.ok ? [] : r.errors.map((e) => `${e.key}: ${e.message}`);
  };

  it.each([[{ for: 'PT3D' }], [{ until: '2030-01-31T09:00:00Z' }], [{ until: 'run.input.due' }]])('accepts %j', (config) => {
    expect(errors(config)).toEqual([]);
  });

  it.each([
    [{}, 'needs one of for'],
    [{ for: 'PT1S', until: 'run.input.due' }, 'cannot be given together'],
    [{ for: 'P1M' }, 'years and months'],
    [{ for: '10s' }, 'not an ISO-8601 duration'],
    [{ until: '2030-02-30T09:00:00Z' }, 'no real instant'],
    [{ until: 'a..b' }, 'neither an RFC 3339 timestamp nor a dot path'],
  ])('refuses %j with a keyed error', (config, text) => {
    expect(errors(config)).toEqual([expect.stringMatching(new RegExp(`^w: .*${text}`))]);
  });
});
