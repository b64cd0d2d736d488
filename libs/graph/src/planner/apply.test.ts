import { describe, expect, it } from 'vitest';
import { applyPlanToSnapshot } from './apply';
import { edge, graphOf, node, snapshotOf } from './test-kit';
import type { PlanResult } from './types';

const empty: PlanResult = {
  run: null,
  nodes: [],
  events: [],
  enqueue: [],
  cancel: [],
  startChildren: [],
  cancelChildren: [],
  consumedIntentIds: [],
  consumedInvocationIds: [],
  wakeAt: null,
};

describe('applyPlanToSnapshot', () => {
  const snap = snapshotOf(graphOf([node('s', 'Start'), node('e', 'End')], [edge('1', 's', 'e')]));

  it('applies a node patch only where status and attempt still match, like the store guard', () => {
    const next = applyPlanToSnapshot(snap, {
      ...empty,
      nodes: [
        { nodeKey: 's', expect: { status: 'Pending', attempt: 0 }, set: { status: 'Succeeded' } },
        { nodeKey: 'e', expect: { status: 'Running', attempt: 0 }, set: { status: 'Succeeded' } },
      ],
    });
    expect(next.nodes.map((n) => n.status)).toEqual(['Succeeded', 'Pending']);
  });

  it('applies the run patch at the expected version, bumping version and lastSeq by the events, without the output member', () => {
    const next = applyPlanToSnapshot(snap, {
      ...empty,
      run: { expectVersion: 1, set: { status: 'Running', output: { x: 1 } } },
      events: [{ kind: 'run.started', nodeKey: null, detail: {} }],
    });
    expect(next.run).toMatchObject({ status: 'Running', version: 2, lastSeq: 2 });
    expect('output' in next.run).toBe(false);
    const stale = applyPlanToSnapshot(snap, { ...empty, run: { expectVersion: 7, set: { status: 'Running' } } });
    expect(stale.run.status).toBe('Pending');
  });

  it('removes consumed intents, results and starts', () => {
    const withInputs = {
      ...snap,
      intents: [{ id: 'i1', kind: 'cancel' as const, reason: null }],
      results: [{ invocationId: 'v1', nodeKey: 's', outcome: { ok: true as const, output: null, startedAt: null, finishedAt: 1 } }],
      started: [{ invocationId: 'v1', nodeKey: 's', at: 1 }],
    };
    const next = applyPlanToSnapshot(withInputs, { ...empty, consumedIntentIds: ['i1'], consumedInvocationIds: ['v1'] });
    expect([next.intents, next.results, next.started]).toEqual([[], [], []]);
  });
});
