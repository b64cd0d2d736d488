import { describe, expect, it } from 'vitest';
import type { Blocker, BlockerKind } from '@flowline/client';
import { describeBlocker } from './blockers';

const b = (kind: BlockerKind, details: Record<string, unknown> = {}): Blocker => ({ nodeKey: 'n', status: 'Pending', kind, since: null, details });

describe('describeBlocker', () => {
  it('says what each kind of blocker waits for, with its details', () => {
    expect(describeBlocker(b('upstream', { waitingOn: ['a', 'b'] }))).toBe('Waiting on upstream: a, b.');
    expect(describeBlocker(b('join', { waitingOn: ['c'], joinPolicy: 'All', satisfied: 1, needed: 2 }))).toBe('Join (All) has 1 of 2: waiting on c.');
    expect(describeBlocker(b('join', { waitingOn: ['c'], joinPolicy: { quorum: 2 }, satisfied: 1, needed: 2 }))).toContain('{"quorum":2}');
    expect(describeBlocker(b('laneBacklog', { lane: 'tool', window: 'lane', position: 3, depth: 10 }))).toBe('Queued on the tool lane: position 3 of 10.');
    expect(describeBlocker(b('laneBacklog', { lane: 'llm', window: 'held', position: 1, depth: 4 }))).toBe('Held in the dispatch window: position 1 of 4.');
    expect(describeBlocker(b('laneBacklog', { lane: 'tool', position: null, depth: null }))).toBe('Queued on the tool lane.');
    expect(describeBlocker(b('runSlot', { active: 5, limit: 5, ahead: 2 }))).toBe("The tenant's run slots are all taken (5 of 5); 2 runs ahead.");
    expect(describeBlocker(b('timer', { until: Date.parse('2026-01-01T00:00:05Z') }))).toBe('Backing off before its next attempt, until 2026-01-01 00:00:05 UTC.');
    expect(describeBlocker(b('gate', { decisionKind: 'Answer' }))).toBe('Waiting for a person: an answer.');
    expect(describeBlocker(b('child', { childRunId: 'abcdef0123', childStatus: 'Running' }))).toBe('Waiting for its child run abcdef01 (Running).');
    expect(describeBlocker(b('shardOwner', { shard: 7, owner: null }))).toBe('No dispatcher owns shard 7: the run moves once a dispatcher takes the shard.');
    expect(describeBlocker(b('tick', { reason: 'due now' }))).toBe("Waiting for the dispatcher's next tick: due now.");
    expect(describeBlocker(b('budgetExhausted', { budget: 'MAX_TOTAL_ATTEMPTS', limit: 50, spent: 50 }))).toBe(
      'Never runs: the run spent its retry budget (50 of 50 retries, MAX_TOTAL_ATTEMPTS). Retry the failed node to reopen the run.',
    );
    expect(describeBlocker(b('budgetExhausted', { budget: 'run', reason: 'budget maxTokens 10 exceeded' }))).toBe(
      'Never runs: the run went past its budget (budget maxTokens 10 exceeded).',
    );
  });

  it('says what a parked Wait waits for, and tells its timer from a retry backoff by the node status', () => {
    const running = (kind: BlockerKind, details: Record<string, unknown>): Blocker => ({ ...b(kind, details), status: 'Running' });
    expect(describeBlocker(running('timer', { until: '2026-01-01T01:00:00Z' }))).toBe('A Wait on a timer: it fires at 2026-01-01 01:00:00 UTC.');
    expect(describeBlocker(running('signal', { channel: 'review' }))).toBe('A Wait on a signal on channel review.');
    expect(describeBlocker(running('event', { event: 'payment.settled' }))).toBe('A Wait on an event named payment.settled.');
    expect(describeBlocker(running('token', { until: '2026-01-02T00:00:00Z', callbackUrl: 'http://x/w/1/s' }))).toBe('A Wait on a callback to its token (it expires at 2026-01-02 00:00:00 UTC).');
    expect(
      describeBlocker(running('wait', { mode: 'all', until: '2026-01-01T01:00:00Z', arms: [{ index: 0, kind: 'signal', channel: 'a' }, { index: 1, kind: 'event', event: 'e' }, { index: 2, kind: 'timer' }] })),
    ).toBe('A Wait on all of: signal a, event e, timer; it wakes at 2026-01-01 01:00:00 UTC.');
    expect(describeBlocker(b('gate', { decisionKind: 'ToolCall', tool: 'mcp:pay/refund' }))).toBe('Waiting for a person: a tool call approval (mcp:pay/refund).');
  });

  it('has a sentence for every kind, and for a kind it does not know', () => {
    const kinds: BlockerKind[] = ['shardOwner', 'runSlot', 'cancelDrain', 'runCancelling', 'upstream', 'join', 'heldDecision', 'timer', 'breakpoint', 'runPaused', 'laneBacklog', 'admission', 'worker', 'child', 'gate', 'budgetExhausted', 'tick'];
    for (const k of kinds) expect(describeBlocker(b(k)).length, k).toBeGreaterThan(10);
    expect(describeBlocker(b('teleport' as BlockerKind))).toBe('Waiting (teleport).');
  });
});
