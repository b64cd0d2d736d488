import { describe, expect, it } from 'vitest';
import { edge, graphOf, node, snapshotOf } from '../planner/test-kit';
import type { NodeRunState, RunSnapshot } from '../planner/types';
import { stuckFindings } from './watchdog';

const NOW = 100_000;
const GRACE = 5_000;
const g = graphOf([node('start', 'Start'), node('work', 'Tool'), node('end', 'End')], [edge('e1', 'start', 'work'), edge('e2', 'work', 'end')]);

function snap(work: Partial<NodeRunState>, run: Partial<RunSnapshot['run']> = {}): RunSnapshot {
  const s = snapshotOf(g, {}, { status: 'Running', ...run });
  return { ...s, nodes: s.nodes.map((r) => (r.nodeKey === 'work' ? { ...r, ...work } : r)) };
}

describe('stuckFindings', () => {
  it('finds a Running node past its deadline that no wake covers', () => {
    const s = snap({ status: 'Running', invocationId: 'i', deadlineAt: NOW - GRACE - 1 });
    expect(stuckFindings(s, null, NOW, GRACE)).toEqual([{ runId: 'run-1', invariant: 'runningPastDeadline', nodeKey: 'work', dueAt: NOW - GRACE - 1 }]);
    expect(stuckFindings(s, NOW + 60_000, NOW, GRACE).map((f) => f.invariant)).toEqual(['runningPastDeadline']);
  });

  it('leaves a deadline to the sweep while the stored wake covers it or the grace has not passed', () => {
    expect(stuckFindings(snap({ status: 'Queued', deadlineAt: NOW - 1 }), null, NOW, GRACE)).toEqual([]);
    expect(stuckFindings(snap({ status: 'Running', deadlineAt: NOW - GRACE - 10 }), NOW - 1, NOW, GRACE)).toEqual([]);
  });

  it('finds a run due long ago and not ticked, an ended backoff without a wake, and unapplied input without a wake', () => {
    expect(stuckFindings(snap({}), NOW - GRACE, NOW, GRACE)).toEqual([{ runId: 'run-1', invariant: 'dueNotTicked', nodeKey: null, dueAt: NOW - GRACE }]);
    expect(stuckFindings(snap({ status: 'Pending', notBefore: NOW - GRACE - 5 }), null, NOW, GRACE)).toMatchObject([{ invariant: 'dueNotTicked', nodeKey: 'work' }]);
    const withIntent = { ...snap({}), intents: [{ id: 'x', kind: 'cancel' as const, reason: null }] };
    expect(stuckFindings(withIntent, null, NOW, GRACE)).toMatchObject([{ invariant: 'dueNotTicked', nodeKey: null, dueAt: NOW }]);
    expect(stuckFindings(snap({}), null, NOW, GRACE)).toEqual([]);
  });

  it('finds nothing in a finished run', () => {
    expect(stuckFindings(snap({ status: 'Running', deadlineAt: 0 }, { status: 'Failed' }), 0, NOW, GRACE)).toEqual([]);
  });
});
