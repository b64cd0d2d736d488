import { describe, expect, it } from 'vitest';
import type { Json } from '../model';
import { edge, graphOf, node, rowOf, snapshotOf, step } from './test-kit';
import type { ApprovalVote } from '../approval/policy';
import type { RunSnapshot } from './types';

const gate = (approval: Record<string, Json>) =>
  graphOf(
    [
      node('s', 'Start'),
      node('p', 'Pause', { config: { prompt: 'ok?', allowedDecisions: ['Approve', 'Reject'], approval } }),
      node('yes', 'End', { config: { outcome: 'approved' } }),
      node('no', 'End', { config: { outcome: 'rejected' } }),
    ],
    [
      edge('1', 's', 'p'),
      edge('2', 'p', 'yes', { condition: { path: 'output.decision', op: 'Eq', value: 'Approve' } }),
      edge('3', 'p', 'no', { condition: { path: 'output.decision', op: 'Eq', value: 'Reject' } }),
    ],
  );
const vote = (principal: string, at: number): ApprovalVote => ({ principal, scopes: [], groups: [], decision: 'Approve', path: 'rest', comment: null, at });
const withVotes = (snap: RunSnapshot, votes: ApprovalVote[]): RunSnapshot => ({
  ...snap, nodes: snap.nodes.map((n) => (n.nodeKey === 'p' ? { ...n, approvals: votes } : n)),
});

describe('Pause with an approval policy', () => {
  it('parks with its timeout as the run wake time, then the timeout action settles it', () => {
    const parked = step(snapshotOf(gate({ quorums: [{ name: 'a', principals: ['x', 'y'], min: 2 }], timeout: 'PT10S', onTimeout: 'reject' })), 1000);
    expect(rowOf(parked.snap, 'p')).toMatchObject({ status: 'WaitingForApproval', deadlineAt: 11_000 });
    expect(parked.result.wakeAt).toBe(11_000);
    expect(parked.result.events.find((e) => e.kind === 'gate.requested')?.detail).toMatchObject({ approval: true });
    const early = step(withVotes(parked.snap, [vote('x', 2000)]), 10_999);
    expect(rowOf(early.snap, 'p').status).toBe('WaitingForApproval');
    const due = step(early.snap, 11_000);
    expect(rowOf(due.snap, 'p')).toMatchObject({ status: 'Succeeded', output: { output: { decision: 'Reject', approval: { status: 'rejected', by: 'timeout', decisions: [{ principal: 'x' }] } } } });
    expect(due.result.events.find((e) => e.kind === 'gate.decided')?.detail).toEqual({ decision: 'Reject', by: 'timeout' });
    expect(rowOf(due.snap, 'no').status).toBe('Succeeded');
  });

  it('approves at an escalation when the decisions already cast meet the added quorum', () => {
    const parked = step(snapshotOf(gate({
      quorums: [{ name: 'team', principals: ['x', 'y', 'z'], min: 3 }], approveRule: 'anyQuorum',
      escalate: [{ after: 'PT5S', addQuorum: { name: 'any2', principals: ['x', 'y', 'z'], min: 2 } }],
    })), 0);
    expect(parked.result.wakeAt).toBe(5000);
    const voted = withVotes(parked.snap, [vote('x', 1), vote('y', 2)]);
    expect(rowOf(step(voted, 4999).snap, 'p').status).toBe('WaitingForApproval');
    const due = step(voted, 5000);
    expect(rowOf(due.snap, 'p').output?.output).toMatchObject({ decision: 'Approve', approval: { status: 'approved', by: 'quorum' } });
    expect(due.snap.run.status).toBe('Completed');
  });

  it('settles with onTimeout approve', () => {
    const parked = step(snapshotOf(gate({ quorums: [{ name: 'a', scope: 'operate', min: 1 }], timeout: 'PT1S', onTimeout: 'approve' })), 0);
    const due = step(parked.snap, 1000);
    expect(rowOf(due.snap, 'p').output?.output).toMatchObject({ decision: 'Approve', approval: { by: 'timeout' } });
    expect(rowOf(due.snap, 'yes').status).toBe('Succeeded');
  });
});
