import { describe, expect, it } from 'vitest';
import { EVENT_KINDS } from '../model';
import { attemptOfEvent, nodeStatusAfterEvent } from './event-status';

describe('nodeStatusAfterEvent', () => {
  it('names the status each node event leaves its node in', () => {
    expect(nodeStatusAfterEvent('node.queued', { attempt: 1 })).toBe('Queued');
    expect(nodeStatusAfterEvent('node.started', {})).toBe('Running');
    expect(nodeStatusAfterEvent('gate.requested', {})).toBe('WaitingForApproval');
    expect(nodeStatusAfterEvent('node.completed', {})).toBe('Succeeded');
    expect(nodeStatusAfterEvent('node.failed', { class: 'NodeFailed' })).toBe('Failed');
    expect(nodeStatusAfterEvent('node.failed', { retrying: true })).toBe('Pending');
    expect(nodeStatusAfterEvent('node.interrupted', { retrying: true })).toBe('Pending');
    expect(nodeStatusAfterEvent('node.retried', {})).toBe('Pending');
    expect(nodeStatusAfterEvent('node.skipped', {})).toBe('Skipped');
    expect(nodeStatusAfterEvent('node.cancelled', {})).toBe('Cancelled');
  });

  it('says nothing for events that do not fix a status, for run events and for unknown kinds', () => {
    const silent = EVENT_KINDS.filter((k) => nodeStatusAfterEvent(k, {}) === null);
    expect(silent).toEqual([
      'run.created', 'run.started', 'run.waiting', 'run.completed', 'run.failed', 'run.cancelled', 'run.paused', 'run.resumed', 'run.forked', 'run.migrated',
      'node.steered', 'node.steer-ignored', 'node.overridden', 'node.published', 'gate.decided', 'state.updated', 'waitpoint.created',
    ]);
    expect(nodeStatusAfterEvent('node.teleported', {})).toBeNull();
    expect(nodeStatusAfterEvent('node.failed', null)).toBe('Failed');
  });
});

describe('attemptOfEvent', () => {
  it('reads a whole, non-negative detail.attempt and nothing else', () => {
    expect(attemptOfEvent({ attempt: 2 })).toBe(2);
    expect(attemptOfEvent({ attempt: 0 })).toBe(0);
    for (const bad of [null, 'x', {}, { attempt: -1 }, { attempt: 1.5 }, { attempt: '2' }]) expect(attemptOfEvent(bad)).toBeNull();
  });
});
