import { describe, expect, it } from 'vitest';
import { NODE_STATUSES, RUN_STATUSES, TERMINAL_NODE_STATUSES } from '../model';
import type { NodeStatus, RunStatus } from '../model';
import {
  NODE_EVENTS,
  NODE_TRANSITIONS,
  RUN_EVENTS,
  RUN_TRANSITIONS,
  canReachNode,
  canReachRun,
  canTransitionNode,
  canTransitionRun,
  nextNodeStatus,
  nextRunStatus,
  nodeEventsFrom,
  runEventsFrom,
} from './index';

// The specification, written out independently of the tables: "from event to".
const NODE_SPEC = `
Pending queue Queued
Pending start Running
Queued start Running
Pending succeed Succeeded
Queued succeed Succeeded
Running succeed Succeeded
Pending fail Failed
Queued fail Failed
Running fail Failed
Queued backoff Pending
Running backoff Pending
Queued interrupt Pending
Running interrupt Pending
Queued requeueOnSteer Pending
Running requeueOnSteer Pending
Pending skip Skipped
WaitingForApproval skip Skipped
Pending cancel Cancelled
Queued cancel Cancelled
Running cancel Cancelled
WaitingForApproval cancel Cancelled
Pending park WaitingForApproval
Running park WaitingForApproval
WaitingForApproval decide Succeeded
WaitingForApproval resumeTool Pending
WaitingForApproval reject Failed
Failed retry Pending
Succeeded retryHeld Pending
Pending operatorComplete Succeeded
Queued operatorComplete Succeeded
Running operatorComplete Succeeded
Failed operatorComplete Succeeded
Cancelled reopen Pending
Skipped reopen Pending
`;

const RUN_SPEC = `
Scheduled release Pending
Scheduled cancel Cancelled
Scheduled quarantine Failed
Pending start Running
Running park WaitingForApproval
WaitingForApproval unpark Running
Running complete Completed
WaitingForApproval complete Completed
Pending fail Failed
Running fail Failed
WaitingForApproval fail Failed
Running requestCancel Cancelling
WaitingForApproval requestCancel Cancelling
Pending cancel Cancelled
Running cancel Cancelled
WaitingForApproval cancel Cancelled
Cancelling cancel Cancelled
Failed reopen Running
Cancelled reopen Running
Pending quarantine Failed
Running quarantine Failed
WaitingForApproval quarantine Failed
Cancelling quarantine Failed
Pending expire Failed
`;

function spec(text: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const line of text.trim().split('\n')) {
    const [from, event, to] = line.trim().split(/\s+/);
    m.set(`${from} ${event}`, to as string);
  }
  return m;
}

describe('node-run state machine', () => {
  const expected = spec(NODE_SPEC);

  it('answers every (status, event) pair exactly as specified, refusing all others with null', () => {
    for (const from of NODE_STATUSES) {
      for (const event of NODE_EVENTS) {
        expect({ from, event, to: nextNodeStatus(from, event) }).toEqual({
          from,
          event,
          to: expected.get(`${from} ${event}`) ?? null,
        });
      }
    }
  });

  it('has a table whose entries are exactly the specified transitions', () => {
    const fromTable = new Map<string, string>();
    for (const event of NODE_EVENTS) {
      for (const [from, to] of Object.entries(NODE_TRANSITIONS[event])) fromTable.set(`${from} ${event}`, to);
    }
    expect(fromTable).toEqual(expected);
  });

  it('lets a terminal status be left only by retry, retryHeld, operatorComplete and reopen', () => {
    const exits: string[] = [];
    for (const from of TERMINAL_NODE_STATUSES) {
      for (const event of nodeEventsFrom(from)) exits.push(`${from} ${event} ${nextNodeStatus(from, event)}`);
    }
    expect(exits.sort()).toEqual(
      [
        'Failed retry Pending',
        'Failed operatorComplete Succeeded',
        'Succeeded retryHeld Pending',
        'Cancelled reopen Pending',
        'Skipped reopen Pending',
      ].sort(),
    );
  });

  it('moves a Failed node back to Pending on retry', () => {
    expect(nextNodeStatus('Failed', 'retry')).toBe('Pending');
  });

  it('skips a gate waiting on a person (its request withdrawn) in one step', () => {
    expect(nextNodeStatus('WaitingForApproval', 'skip')).toBe('Skipped');
    expect(canTransitionNode('WaitingForApproval', 'Skipped')).toBe(true);
  });

  it('skips only Pending nodes and waiting gates', () => {
    expect(NODE_STATUSES.filter((s) => nextNodeStatus(s, 'skip') !== null)).toEqual(['Pending', 'WaitingForApproval']);
  });

  it('requeues a steered node from Queued or Running to Pending and nowhere else', () => {
    expect(NODE_STATUSES.filter((s) => nextNodeStatus(s, 'requeueOnSteer') === 'Pending')).toEqual([
      'Queued',
      'Running',
    ]);
  });

  it('refuses operator completion of a node waiting for approval', () => {
    expect(nextNodeStatus('WaitingForApproval', 'operatorComplete')).toBeNull();
  });

  it('refuses every event on a Succeeded node except retryHeld, and retry of a Succeeded node', () => {
    expect(nodeEventsFrom('Succeeded')).toEqual(['retryHeld']);
    expect(nextNodeStatus('Succeeded', 'retry')).toBeNull();
  });

  it('refuses an unknown event name instead of throwing', () => {
    expect(nextNodeStatus('Pending', 'toString' as never)).toBeNull();
    expect(nextNodeStatus('constructor' as never, 'queue')).toBeNull();
  });

  it('answers canTransitionNode as "some event moves from to to"', () => {
    for (const from of NODE_STATUSES) {
      for (const to of NODE_STATUSES) {
        const some = NODE_EVENTS.some((e) => nextNodeStatus(from, e) === to);
        expect({ from, to, ok: canTransitionNode(from, to) }).toEqual({ from, to, ok: some });
      }
    }
  });

  it('reaches a status through a chain of events only where each step is a table entry', () => {
    expect(canTransitionNode('Failed', 'Queued')).toBe(false);
    expect(canReachNode('Failed', 'Queued')).toBe(true); // retry, then admission in the same tick
    expect(canReachNode('Pending', 'Succeeded')).toBe(true);
    expect(canReachNode('Queued', 'Skipped')).toBe(true); // requeueOnSteer, then skip
  });
});

describe('run state machine', () => {
  const expected = spec(RUN_SPEC);

  it('answers every (status, event) pair exactly as specified, refusing all others with null', () => {
    for (const from of RUN_STATUSES) {
      for (const event of RUN_EVENTS) {
        expect({ from, event, to: nextRunStatus(from, event) }).toEqual({
          from,
          event,
          to: expected.get(`${from} ${event}`) ?? null,
        });
      }
    }
  });

  it('has a table whose entries are exactly the specified transitions', () => {
    const fromTable = new Map<string, string>();
    for (const event of RUN_EVENTS) {
      for (const [from, to] of Object.entries(RUN_TRANSITIONS[event])) fromTable.set(`${from} ${event}`, to);
    }
    expect(fromTable).toEqual(expected);
  });

  it('never leaves Completed, and leaves Failed or Cancelled (a cancel with survivors) only by reopen to Running', () => {
    expect(runEventsFrom('Completed')).toEqual([]);
    expect(runEventsFrom('Cancelled')).toEqual(['reopen']);
    expect(runEventsFrom('Failed')).toEqual(['reopen']);
    expect(nextRunStatus('Failed', 'reopen')).toBe('Running');
    expect(nextRunStatus('Cancelled', 'reopen')).toBe('Running');
  });

  it('goes back and forth between Running and WaitingForApproval', () => {
    expect(nextRunStatus('Running', 'park')).toBe('WaitingForApproval');
    expect(nextRunStatus('WaitingForApproval', 'unpark')).toBe('Running');
  });

  it('drains a Cancelling run only into Cancelled, unless the run is quarantined (Failed)', () => {
    expect(runEventsFrom('Cancelling')).toEqual(['cancel', 'quarantine']);
    const out = RUN_STATUSES.filter((to) => canTransitionRun('Cancelling', to));
    expect(out).toEqual(['Failed', 'Cancelled']);
  });

  it('answers canTransitionRun as "some event moves from to to"', () => {
    for (const from of RUN_STATUSES) {
      for (const to of RUN_STATUSES) {
        const some = RUN_EVENTS.some((e) => nextRunStatus(from, e) === to);
        expect({ from, to, ok: canTransitionRun(from, to) }).toEqual({ from, to, ok: some });
      }
    }
  });

  it('lets one tick chain Pending to Completed, but never reach Pending again', () => {
    expect(canTransitionRun('Pending', 'Completed')).toBe(false);
    expect(canReachRun('Pending', 'Completed')).toBe(true);
    for (const from of RUN_STATUSES) expect(canReachRun(from, 'Pending')).toBe(from === 'Scheduled');
    expect(canReachRun('Completed', 'Running')).toBe(false);
  });
});

// Types must stay closed: a status name outside the model is a compile error.
describe('a delayed start', () => {
  it('leaves Scheduled only by release to Pending, a cancel, or quarantine, and one tick may chain it to Running', () => {
    expect(runEventsFrom('Scheduled')).toEqual(['release', 'cancel', 'quarantine']);
    expect(canTransitionRun('Scheduled', 'Running')).toBe(false);
    expect(canReachRun('Scheduled', 'Running')).toBe(true);
    for (const from of RUN_STATUSES) expect(canReachRun(from, 'Scheduled')).toBe(false);
  });
});

const _typecheck: [NodeStatus, RunStatus] = ['Pending', 'Cancelling'];
void _typecheck;
