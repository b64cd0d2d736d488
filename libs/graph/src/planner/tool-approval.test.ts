import { describe, expect, it } from 'vitest';
import { blockers } from '../blockers';
import type { GateDecision, RunSnapshot, WorkOutcome } from './types';
import { edge, graphOf, node, ok, rowOf, snapshotOf, step, withResult } from './test-kit';

const graph = graphOf(
  [node('start', 'Start'), node('agent', 'Agent', { config: { instructions: 'refund', tools: ['mcp:pay/refund'], toolApprovals: ['mcp:pay/refund'] } }), node('end', 'End')],
  [edge('e1', 'start', 'agent'), edge('e2', 'agent', 'end')],
);

const parked = (at = 5): WorkOutcome => ({
  ok: 'park',
  request: { kind: 'ToolCall', tool: 'mcp:pay/refund', arguments: { amount: 120 }, step: 4 },
  startedAt: at,
  finishedAt: at,
  usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15, model: 'm' },
});

/** A run whose Agent is queued (attempt 1). */
function queued(): RunSnapshot {
  return step(snapshotOf(graph), 1_000).snap;
}

/** The run after the Agent's worker parked it on its tool call. */
function parkedRun(): RunSnapshot {
  return step(withResult(queued(), 'agent', parked()), 2_000).snap;
}

const decided = (snap: RunSnapshot, d: Omit<GateDecision, 'at' | 'applied'>): RunSnapshot => ({
  ...snap,
  nodes: snap.nodes.map((n) => (n.nodeKey === 'agent' ? { ...n, decision: { ...d, at: 2_500, applied: false } } : n)),
  intents: [{ id: `decide-${d.operationId}`, kind: 'decide', nodeKey: 'agent', operationId: d.operationId }],
});

describe('an Agent parked on a tool call', () => {
  it('reads WaitingForApproval on its attempt, holds no worker and no deadline, and asks with the tool and its arguments', () => {
    const { snap, result } = step(withResult(queued(), 'agent', parked()), 2_000);
    const row = rowOf(snap, 'agent');
    expect(row).toMatchObject({ status: 'WaitingForApproval', pendingDecisionKind: 'ToolCall', attempt: 1, invocationId: null, deadlineAt: null, decision: null });
    expect(result.events.find((e) => e.kind === 'gate.requested')).toMatchObject({
      nodeKey: 'agent',
      detail: { decisionKind: 'ToolCall', tool: 'mcp:pay/refund', arguments: { amount: 120 }, step: 4, attempt: 1 },
    });
    // parked on a person only: the run holds no run slot (Running holds one, WaitingForApproval none)
    expect(snap.run.status).toBe('WaitingForApproval');
    expect(result.wakeAt).toBeNull();
    expect(result.enqueue).toEqual([]);
    // what the model spent before parking counts
    expect(snap.run.usage).toMatchObject({ inputTokens: 10, outputTokens: 5 });
  });

  it('shows the gate as its blocker, naming the decision kind and, from its transcript, the tool and its arguments', () => {
    const snap = parkedRun();
    const b = blockers(snap, { now: 3_000 }).find((x) => x.nodeKey === 'agent');
    expect(b).toMatchObject({ kind: 'gate', details: { decisionKind: 'ToolCall' } });
    const shown = blockers(snap, { now: 3_000, toolCalls: { agent: { tool: 'mcp:pay/refund', arguments: { amount: 120 } } } }).find((x) => x.nodeKey === 'agent');
    expect(shown?.details).toEqual({ decisionKind: 'ToolCall', scope: 'run', tool: 'mcp:pay/refund', arguments: { amount: 120 } });
  });

  it('is queued again on the SAME attempt once approved, its job carrying the decision and the edited arguments', () => {
    const before = parkedRun();
    const totalBefore = before.run.totalAttempts;
    const { snap, result } = step(decided(before, { operationId: 'op-1', decision: 'Approve', comment: null, payload: { arguments: { amount: 100 } } }), 3_000);
    const row = rowOf(snap, 'agent');
    expect(row).toMatchObject({ status: 'Queued', attempt: 1, pendingDecisionKind: null });
    expect(snap.run.totalAttempts).toBe(totalBefore);
    expect(result.events.map((e) => e.kind)).toEqual(expect.arrayContaining(['gate.decided', 'node.queued']));
    expect(result.enqueue).toHaveLength(1);
    expect(result.enqueue[0]!.agent).toEqual({
      generation: 1,
      decision: { operationId: 'op-1', decision: 'Approve', comment: null, payload: { arguments: { amount: 100 } } },
    });
    expect(snap.run.status).toBe('Running');
  });

  it('is queued again with a Reject too (the worker hands the model the refusal), then completes the run on its output', () => {
    const { snap } = step(decided(parkedRun(), { operationId: 'op-2', decision: 'Reject', comment: 'too much', payload: null }), 3_000);
    expect(rowOf(snap, 'agent').status).toBe('Queued');
    const done = step(withResult(snap, 'agent', ok({ text: 'refund refused', steps: [] }, 3_500)), 4_000).snap;
    expect(rowOf(done, 'agent').status).toBe('Succeeded');
    expect(done.run.status).toBe('Completed');
  });

  it('parks again on its next tool call with the previous decision cleared, so the gate takes a new one', () => {
    const resumed = step(decided(parkedRun(), { operationId: 'op-1', decision: 'Approve', comment: null, payload: null }), 3_000).snap;
    const again = step(withResult(resumed, 'agent', parked(3_500)), 4_000).snap;
    expect(rowOf(again, 'agent')).toMatchObject({ status: 'WaitingForApproval', pendingDecisionKind: 'ToolCall', decision: null, attempt: 1 });
  });

  it('ignores a decision intent whose operation is not the recorded one', () => {
    const snap = parkedRun();
    const stale = { ...decided(snap, { operationId: 'op-1', decision: 'Approve', comment: null, payload: null }), intents: [{ id: 'x', kind: 'decide' as const, nodeKey: 'agent', operationId: 'other' }] };
    expect(rowOf(step(stale, 3_000).snap, 'agent').status).toBe('WaitingForApproval');
  });

  it('is cancelled at once by a run cancel (no worker to wait for)', () => {
    const snap = { ...parkedRun(), intents: [{ id: 'c', kind: 'cancel' as const, reason: 'stop' }] };
    const after = step(snap, 3_000).snap;
    expect(rowOf(after, 'agent').status).toBe('Cancelled');
    expect(after.run.status).toBe('Cancelled');
  });

  it('starts a new transcript life after an operator retry of a failed attempt, and keeps it over automatic retries', () => {
    const first = step(withResult(queued(), 'agent', { ok: false, failureClass: 'Interrupted', reason: 'worker lost', startedAt: 1, finishedAt: 1 }), 2_000).snap;
    const requeued = step(first, 10_000);
    expect(requeued.result.enqueue[0]!.agent).toEqual({ generation: 1 });
    const failed = step(withResult(requeued.snap, 'agent', { ok: false, failureClass: 'ValidationFailed', reason: 'bad', startedAt: 1, finishedAt: 1 }), 11_000).snap;
    expect(failed.run.status).toBe('Failed');
    const retried = step({ ...failed, intents: [{ id: 'r', kind: 'retry', nodeKey: 'agent' }] }, 12_000);
    expect(retried.result.enqueue[0]).toMatchObject({ attempt: 3, agent: { generation: 3 } });
  });

  it('fails a non-Agent node that reports a park', () => {
    const g = graphOf([node('start', 'Start'), node('llm', 'LlmCall', { config: { prompt: 'x' } }), node('end', 'End')], [edge('a', 'start', 'llm'), edge('b', 'llm', 'end')]);
    const snap = step(snapshotOf(g), 1_000).snap;
    const after = step(withResult(snap, 'llm', parked()), 2_000).snap;
    expect(rowOf(after, 'llm').status).not.toBe('WaitingForApproval');
  });
});
