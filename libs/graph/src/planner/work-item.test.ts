import { describe, expect, it } from 'vitest';
import { plan } from './plan';
import { committedCounters, isEmptyPlan } from './plan-result';
import { contextAt, edge, graphOf, node, rowOf, snapshotOf, step } from './test-kit';
import type { RunSnapshot, SteerEntry } from './types';
import { inflightWorkItem } from './work-item';
import { interruptedResult, withdrawnResult } from './work-results';

const chain = () =>
  graphOf([node('s', 'Start'), node('t', 'Tool', { timeoutSeconds: 30 }), node('e', 'End')], [edge('st', 's', 't'), edge('te', 't', 'e')]);

/** Steering recorded out of time order (a later entry first), plus one not applied yet. */
const steering: SteerEntry[] = [
  { operationId: 'op-2', message: 'second', atUtc: 20, attempt: 0, applied: true },
  { operationId: 'op-3', message: 'not yet', atUtc: 5, attempt: 0, applied: false },
  { operationId: 'op-1', message: 'first', atUtc: 10, attempt: 0, applied: true },
];

function steered(): RunSnapshot {
  const snap = snapshotOf(chain());
  return { ...snap, nodes: snap.nodes.map((r) => (r.nodeKey === 't' ? { ...r, steering } : r)) };
}

describe('the WorkItem of a lane node', () => {
  it('carries the applied steering oldest first, whatever order the row recorded it in', () => {
    const { result } = step(steered(), 100);
    expect(result.enqueue).toHaveLength(1);
    expect(result.enqueue[0]?.steering).toEqual(['first', 'second']);
  });

  it('is marked chat: true in a Chat graph only (its Agents show the conversation request), and rebuilt so', () => {
    const { result: standard } = step(steered(), 100);
    expect(standard.enqueue[0]).not.toHaveProperty('chat');
    const chat: RunSnapshot = { ...steered(), graph: { ...chain(), kind: 'Chat' } };
    const { snap, result } = step(chat, 100);
    expect(result.enqueue[0]?.chat).toBe(true);
    expect(inflightWorkItem(snap, 't', 1, 5_000)).toEqual(result.enqueue[0]);
  });

  it('is rebuilt from the committed row (after Redis lost it) exactly as the planner queued it', () => {
    const { snap, result } = step(steered(), 100);
    expect(inflightWorkItem(snap, 't', 1, 5_000)).toEqual(result.enqueue[0]);
  });

  it('is rebuilt with an operator input edit in place of the input member, and none for rows without lane work', () => {
    const { snap } = step(steered(), 100);
    const edited: RunSnapshot = { ...snap, nodes: snap.nodes.map((r) => (r.nodeKey === 't' ? { ...r, inputOverride: { input: { edited: true } } } : r)) };
    expect(inflightWorkItem(edited, 't', 1, 5_000)?.input.input).toEqual({ edited: true });
    expect(inflightWorkItem(snap, 'e', 1, 5_000)).toBeNull();
    expect(inflightWorkItem(snap, 'missing', 1, 5_000)).toBeNull();
  });

  it("gives a rebuilt row without a deadline now plus its node's timeout", () => {
    const { snap } = step(steered(), 100);
    const noDeadline: RunSnapshot = { ...snap, nodes: snap.nodes.map((r) => (r.nodeKey === 't' ? { ...r, deadlineAt: null } : r)) };
    expect(inflightWorkItem(noDeadline, 't', 1, 5_000)?.deadlineAt).toBe(5_000 + 30_000);
    expect(rowOf(snap, 't').deadlineAt).toBe(100 + 30_000);
  });
});

describe('the outcomes of work no worker reported', () => {
  it('reads a failed job as Interrupted and withdrawn work as Cancelled, at the given time', () => {
    expect(interruptedResult('inv', 't', 'stalled', 7)).toEqual({
      invocationId: 'inv', nodeKey: 't',
      outcome: { ok: false, failureClass: 'Interrupted', reason: 'worker interrupted: stalled', startedAt: null, finishedAt: 7 },
    });
    expect(withdrawnResult('inv', 't', 8).outcome).toMatchObject({ ok: false, failureClass: 'Cancelled', finishedAt: 8 });
  });
});

describe('a Pending run without a tenant slot', () => {
  it('asks again slotRetryMs later when the plan is given one, and clears its wake without it', () => {
    const snap = { ...snapshotOf(chain()), runSlotAvailable: false };
    const withRetry = plan(snap, { ...contextAt(1_000), slotRetryMs: 2_000 });
    expect(isEmptyPlan(withRetry)).toBe(true);
    expect(withRetry.wakeAt).toBe(3_000);
    expect(plan(snap, contextAt(1_000)).wakeAt).toBeNull();
  });

  it('does not delay a run that has a slot', () => {
    const result = plan(snapshotOf(chain()), { ...contextAt(1_000), slotRetryMs: 2_000 });
    expect(result.run?.set.status).toBe('Running');
    expect(result.wakeAt).toBe(1_000 + 30_000);
  });
});

describe('the run counters after a committed plan', () => {
  it('bump version by one and lastSeq by the events of a written plan, and stay for an empty or skipped one', () => {
    const snap = snapshotOf(chain());
    const result = plan(snap, contextAt(1));
    const before = { version: 4, lastSeq: 10 };
    expect(committedCounters(before, result, true)).toEqual({ version: 5, lastSeq: 10 + result.events.length });
    expect(committedCounters(before, result, false)).toEqual(before);
    const empty = plan({ ...snap, runSlotAvailable: false }, contextAt(1));
    expect(committedCounters(before, empty, true)).toEqual(before);
  });
});
