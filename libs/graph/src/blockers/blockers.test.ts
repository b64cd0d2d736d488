import { describe, expect, it } from 'vitest';
import { edge, graphOf, node, snapshotOf } from '../planner/test-kit';
import type { NodeRunState, RunSnapshot } from '../planner/types';
import { blockers } from './blockers';
import type { BlockerFacts, BlockerKind } from './types';

const NOW = 10_000;

/** start → work(Tool) → end */
const chain = graphOf([node('start', 'Start'), node('work', 'Tool'), node('end', 'End')], [edge('e1', 'start', 'work'), edge('e2', 'work', 'end')]);

/** A Running run with rows patched per key. */
function running(graph = chain, rows: Record<string, Partial<NodeRunState>> = {}, run: Partial<RunSnapshot['run']> = {}): RunSnapshot {
  const snap = snapshotOf(graph, { q: 1 }, { status: 'Running', startedAt: 100, ...run });
  return { ...snap, nodes: snap.nodes.map((r) => ({ ...r, ...rows[r.nodeKey] })) };
}
const done = (at = 200): Partial<NodeRunState> => ({ status: 'Succeeded', attempt: 1, finishedAt: at, output: { status: 'succeeded', attempt: 1, branch: null, output: {} } });
const queued = (extra: Partial<NodeRunState> = {}): Partial<NodeRunState> => ({
  status: 'Queued', attempt: 1, invocationId: 'inv-1', queuedAt: 300, deadlineAt: NOW + 60_000, ...extra,
});

function only(snap: RunSnapshot, key: string, facts: Partial<BlockerFacts> = {}) {
  const found = blockers(snap, { now: NOW, ...facts }).find((b) => b.nodeKey === key);
  if (!found) throw new Error(`no blocker for ${key}`);
  return found;
}
const kindOf = (snap: RunSnapshot, key: string, facts: Partial<BlockerFacts> = {}): BlockerKind => only(snap, key, facts).kind;

describe('blockers', () => {
  it('lists nothing for a finished run and skips terminal nodes of a live one', () => {
    expect(blockers(running(chain, {}, { status: 'Completed' }), { now: NOW })).toEqual([]);
    const keys = blockers(running(chain, { start: done() }), { now: NOW }).map((b) => b.nodeKey);
    expect(keys).toEqual(['work', 'end']);
  });

  it('reports shardOwner for every node when the run shard lease has expired', () => {
    const snap = running(chain, { start: done() });
    const b = only(snap, 'work', { shard: { shard: 3, owner: 'd-1', expiresAt: NOW - 5 } });
    expect(b).toMatchObject({ kind: 'shardOwner', since: NOW - 5, details: { shard: 3, owner: 'd-1' } });
    expect(kindOf(snap, 'end', { shard: { shard: 3, owner: null, expiresAt: null } })).toBe('shardOwner');
    expect(kindOf(snap, 'work', { shard: { shard: 3, owner: 'd-1', expiresAt: NOW + 5 } })).not.toBe('shardOwner');
  });

  it('reports unavailable, naming what is missing, for a Queued, Running or Pending node whose tool is gone, ahead of its lane or upstream', () => {
    const gone = { unavailable: { work: ["tool 'slack' is no longer registered"] } };
    const q = running(chain, { start: done() , work: queued() });
    expect(only(q, 'work', { ...gone, jobs: { 'inv-1': { state: 'waiting', position: 1, depth: 1 } } })).toMatchObject({
      kind: 'unavailable', details: { missing: ["tool 'slack' is no longer registered"] },
    });
    expect(kindOf(running(chain, { start: done(), work: queued({ status: 'Running', startedAt: 400 }) }), 'work', gone)).toBe('unavailable');
    expect(kindOf(running(chain), 'work', gone)).toBe('unavailable');
    // without the fact, the same node waits on its lane as before
    expect(kindOf(q, 'work', { jobs: { 'inv-1': { state: 'waiting', position: 1, depth: 1 } } })).toBe('laneBacklog');
  });

  it('reports runSlot with the tenant usage for a Pending run without a slot', () => {
    const snap = { ...snapshotOf(chain, {}, { createdAt: 50 }), runSlotAvailable: false };
    expect(only(snap, 'start', { slots: { live: 100, limit: 100, ahead: 2 } })).toMatchObject({
      kind: 'runSlot', since: 50, details: { live: 100, limit: 100, ahead: 2 },
    });
    expect(only({ ...snap, runSlotAvailable: true }, 'start')).toMatchObject({ kind: 'tick' });
  });

  it('reports a Scheduled run (a delayed start) as a timer until its notBefore, then like a Pending run', () => {
    const snap = snapshotOf(chain, {}, { status: 'Scheduled', createdAt: 50, notBefore: NOW + 500 });
    expect(only(snap, 'start')).toEqual({ nodeKey: 'start', status: 'Pending', kind: 'timer', since: 50, details: { until: NOW + 500 } });
    expect(kindOf(snap, 'end')).toBe('timer');
    const due = { ...snapshotOf(chain, {}, { status: 'Scheduled', createdAt: 50, notBefore: NOW - 1 }), runSlotAvailable: false };
    expect(kindOf(due, 'start')).toBe('runSlot');
    expect(only({ ...due, runSlotAvailable: true }, 'start')).toMatchObject({ kind: 'tick' });
  });

  it('reports concurrencyKey with the key, value and usage for a Pending run whose key is full (after runSlot)', () => {
    const snap = { ...snapshotOf(chain, {}, { createdAt: 50 }), concurrencyKeyAvailable: false };
    const concurrency = { key: 'input.customerId', value: 'acme', live: 2, limit: 2, ahead: 1 };
    expect(only(snap, 'start', { concurrency })).toMatchObject({ kind: 'concurrencyKey', since: 50, details: concurrency });
    expect(kindOf({ ...snap, runSlotAvailable: false }, 'start', { concurrency })).toBe('runSlot');
    expect(kindOf({ ...snap, concurrencyKeyAvailable: true }, 'start', { concurrency })).toBe('tick');
  });

  it('reports a parked Wait as a timer until its wake time, then as due on the next tick', () => {
    const g = graphOf([node('start', 'Start'), node('nap', 'Wait', { config: { for: 'PT1H' } }), node('end', 'End')], [edge('e1', 'start', 'nap'), edge('e2', 'nap', 'end')]);
    const parked = (wake: number) => running(g, { start: done(), nap: { status: 'Running', attempt: 1, startedAt: 300, deadlineAt: wake } }, { status: 'WaitingForApproval' });
    expect(only(parked(NOW + 5000), 'nap')).toMatchObject({ kind: 'timer', since: 300, details: { until: NOW + 5000 } });
    expect(only(parked(NOW - 1), 'nap')).toMatchObject({ kind: 'tick', details: { reason: expect.stringContaining('fires on the next tick') } });
  });

  it('reports a signal Wait as signal (its channel), a token Wait as token (waitpoint, callback URL, expiry) and a composite as wait with its arms', () => {
    const waitOn = (config: Record<string, unknown>) =>
      graphOf([node('start', 'Start'), node('w', 'Wait', { config: config as never }), node('end', 'End')], [edge('e1', 'start', 'w'), edge('e2', 'w', 'end')]);
    const parked = (config: Record<string, unknown>, deadlineAt: number | null) =>
      running(waitOn(config), { start: done(), w: { status: 'Running', attempt: 1, startedAt: 300, deadlineAt } }, { status: 'WaitingForApproval' });
    expect(only(parked({ signal: 'review' }, null), 'w')).toMatchObject({ kind: 'signal', since: 300, details: { channel: 'review' } });
    const wp = { id: 'wp-1', nodeKey: 'w', index: 0, kind: 'token' as const, status: 'waiting' as const, payload: null, completedAt: null, expiresAt: NOW + 60_000, eventName: null, createdAt: 300 };
    const token = { ...parked({ token: { timeout: 'PT1M' } }, NOW + 60_000), waitpoints: [wp] };
    expect(only(token, 'w', { callbackUrls: { 'wp-1': 'https://x/w/wp-1/sig' } })).toMatchObject({
      kind: 'token', details: { waitpointId: 'wp-1', callbackUrl: 'https://x/w/wp-1/sig', until: NOW + 60_000 },
    });
    const composite = { ...parked({ any: [{ token: { timeout: 'PT1M' } }, { signal: 'review' }, { event: 'paid' }] }, NOW + 60_000), waitpoints: [wp] };
    expect(only(composite, 'w')).toMatchObject({
      kind: 'wait', details: { mode: 'any', until: NOW + 60_000, arms: [{ index: 0, kind: 'token', waitpointId: 'wp-1' }, { index: 1, kind: 'signal', channel: 'review' }, { index: 2, kind: 'event', event: 'paid' }] },
    });
    expect(only({ ...token, waitpoints: [{ ...wp, status: 'completed' as const }] }, 'w')).toMatchObject({ kind: 'tick' });
  });

  it('reports upstream with the open predecessor and since the run started', () => {
    expect(only(running(chain), 'work')).toMatchObject({ kind: 'upstream', since: 100, details: { waitingOn: ['start'] } });
  });

  it('reports join with policy, satisfied and needed counts and the sources still open', () => {
    const g = graphOf(
      [node('start', 'Start'), node('a', 'Tool'), node('b', 'Tool'), node('j', 'Join', { joinPolicy: { quorum: 2 } }), node('end', 'End')],
      [edge('s1', 'start', 'a'), edge('s2', 'start', 'b'), edge('ja', 'a', 'j'), edge('jb', 'b', 'j'), edge('je', 'j', 'end')],
    );
    const snap = running(g, { start: done(150), a: done(400), b: queued() });
    expect(only(snap, 'j')).toMatchObject({ kind: 'join', since: 400, details: { waitingOn: ['b'], joinPolicy: { quorum: 2 }, satisfied: 1, needed: 2 } });
  });

  it('reports heldDecision when the only open inbound edge leaves a held DecisionModel', () => {
    const g = graphOf([node('start', 'Start'), node('dm', 'DecisionModel'), node('end', 'End')], [edge('e1', 'start', 'dm'), edge('e2', 'dm', 'end')]);
    const snap = running(g, { start: done(), dm: { ...done(500), held: true, pendingDecisionKind: 'Operator' } });
    expect(only(snap, 'end')).toMatchObject({ kind: 'heldDecision', since: 500, details: { waitingOn: ['dm'] } });
  });

  it('reports timer until the retry backoff ends', () => {
    const snap = running(chain, { start: done(), work: { status: 'Pending', attempt: 1, notBefore: NOW + 900, finishedAt: 700 } });
    expect(only(snap, 'work')).toMatchObject({ kind: 'timer', since: 700, details: { until: NOW + 900 } });
  });

  it('reports breakpoint for an eligible node on a breakpoint, runPaused on a paused run, and tick once a step allows it', () => {
    expect(only(running(chain, { start: done(220) }, { breakpoints: ['work'] }), 'work')).toMatchObject({ kind: 'breakpoint', since: 220 });
    expect(kindOf(running(chain, { start: done() }, { paused: true }), 'work')).toBe('runPaused');
    const stepped = running(chain, { start: done() }, { paused: true, stepAllowance: { id: 's', mode: 'one', nodeKey: null } });
    expect(kindOf(stepped, 'work')).toBe('tick');
    const otherNode = running(chain, { start: done() }, { paused: true, stepAllowance: { id: 's', mode: 'node', nodeKey: 'end' } });
    expect(kindOf(otherNode, 'work')).toBe('runPaused');
  });

  it('reports laneBacklog with the position and depth of the queued job', () => {
    const snap = running(chain, { start: done(), work: queued() });
    expect(only(snap, 'work', { jobs: { 'inv-1': { state: 'waiting', position: 3, depth: 7 } } })).toMatchObject({
      kind: 'laneBacklog', since: 300, details: { invocationId: 'inv-1', window: 'lane', position: 3, depth: 7 },
    });
    expect(only(snap, 'work', { jobs: { 'inv-1': { state: 'held', position: 2, depth: 4 } } })).toMatchObject({
      kind: 'laneBacklog', details: { window: 'held', position: 2, depth: 4 },
    });
  });

  it('reports admission for a job a worker holds while it waits for provider capacity', () => {
    const snap = running(chain, { start: done(), work: queued() });
    expect(kindOf(snap, 'work', { jobs: { 'inv-1': { state: 'admitting' } } })).toBe('admission');
  });

  it('reports worker for a running job with its deadline, and tick once the deadline passed', () => {
    const snap = running(chain, { start: done(), work: queued({ status: 'Running', startedAt: 350 }) });
    expect(only(snap, 'work', { jobs: { 'inv-1': { state: 'running' } } })).toMatchObject({
      kind: 'worker', since: 350, details: { deadlineAt: NOW + 60_000 },
    });
    const late = running(chain, { start: done(), work: queued({ status: 'Running', deadlineAt: NOW - 1 }) });
    expect(only(late, 'work')).toMatchObject({ kind: 'tick', since: NOW - 1 });
  });

  it('reports tick for a queued job missing from its lane, orphaned or finished', () => {
    const snap = running(chain, { start: done(), work: queued() });
    for (const state of ['missing', 'orphaned', 'finished'] as const) {
      expect(kindOf(snap, 'work', { jobs: { 'inv-1': { state } } })).toBe('tick');
    }
  });

  it('reports gate with the decision kind and the scope that may decide', () => {
    const g = graphOf([node('start', 'Start'), node('p', 'Pause'), node('end', 'End')], [edge('e1', 'start', 'p'), edge('e2', 'p', 'end')]);
    const snap = running(g, { start: done(), p: { status: 'WaitingForApproval', attempt: 1, startedAt: 600, pendingDecisionKind: 'Approve' } });
    expect(only(snap, 'p')).toMatchObject({ kind: 'gate', since: 600, details: { decisionKind: 'Approve', scope: 'run' } });
    expect(kindOf({ ...snap, intents: [{ id: 'i', kind: 'decide', nodeKey: 'p', operationId: 'o' }] }, 'p')).toBe('tick');
  });

  it("gives a policy gate's approval the reader's standing: may decide, or the rule that refuses it", () => {
    const approval = { quorums: [{ name: 'ops', scope: 'run', min: 2 }], forbid: ['initiator'] };
    const g = graphOf([node('start', 'Start'), node('p', 'Pause', { config: { approval } }), node('end', 'End')], [edge('e1', 'start', 'p'), edge('e2', 'p', 'end')]);
    const votes = [{ principal: 'key:b', scopes: ['run'], groups: [], decision: 'Approve' as const, path: 'console' as const, comment: null, at: 700 }];
    const snap = running(g, { start: done(), p: { status: 'WaitingForApproval', attempt: 1, startedAt: 600, pendingDecisionKind: 'Approve', approvals: votes } });
    const viewer = (id: string) => ({ viewer: { decider: { id, scopes: ['read', 'run'], groups: [] }, initiator: 'key:a', definitionAuthor: null } });
    const of = (id: string) => (only(snap, 'p', viewer(id)).details.approval as { viewer: unknown; quorums: unknown[]; decisions: unknown[] });
    expect(of('key:c').viewer).toEqual({ principal: 'key:c', canDecide: true, rule: null, message: null, quorums: ['ops'] });
    expect(of('key:a').viewer).toMatchObject({ canDecide: false, rule: 'initiator' });
    expect(of('key:b').viewer).toMatchObject({ canDecide: false, rule: 'alreadyDecided' });
    expect(of('key:c').quorums).toEqual([{ name: 'ops', min: 2, scope: 'run', approvals: 1, rejections: 0, met: false }]);
    expect(of('key:c').decisions).toEqual([{ principal: 'key:b', decision: 'Approve', path: 'console', comment: null, at: new Date(700).toISOString() }]);
    // no reader known: no standing
    expect(only(snap, 'p').details.approval).not.toHaveProperty('viewer');
  });

  it('reports child for a Subworkflow until its child run ends', () => {
    const g = graphOf([node('start', 'Start'), node('sub', 'Subworkflow'), node('end', 'End')], [edge('e1', 'start', 'sub'), edge('e2', 'sub', 'end')]);
    const rows = { start: done(), sub: { status: 'Running' as const, attempt: 1, childRunId: 'c-1', startedAt: 800 } };
    const child = { childRunId: 'c-1', nodeKey: 'sub', output: null, failureClass: 'None' as const, reason: null };
    const snap = { ...running(g, rows), children: [{ ...child, status: 'WaitingForApproval' as const }] };
    expect(only(snap, 'sub')).toMatchObject({ kind: 'child', since: 800, details: { childRunId: 'c-1', childStatus: 'WaitingForApproval' } });
    expect(kindOf({ ...snap, children: [{ ...child, status: 'Completed' }] }, 'sub')).toBe('tick');
  });

  it('reports cancelDrain for in-flight work and runCancelling for unreached nodes of a Cancelling run', () => {
    const snap = running(chain, { start: done(), work: queued({ status: 'Running', deadlineAt: NOW + 5 }) }, { status: 'Cancelling' });
    expect(only(snap, 'work')).toMatchObject({ kind: 'cancelDrain', details: { invocationId: 'inv-1', deadlineAt: NOW + 5 } });
    expect(kindOf(snap, 'end')).toBe('runCancelling');
  });

  it('reports tick for a node whose outcome or intent is not applied yet, and for an eligible or doomed node', () => {
    const snap = running(chain, { start: done(), work: queued() });
    const withResult = { ...snap, results: [{ invocationId: 'inv-1', nodeKey: 'work', outcome: { ok: true as const, output: {}, startedAt: 1, finishedAt: 2 } }] };
    expect(kindOf(withResult, 'work')).toBe('tick');
    expect(kindOf(running(chain, { start: done() }), 'work')).toBe('tick');
    const skipped = running(chain, { start: done(), work: { status: 'Skipped' } });
    expect(only(skipped, 'end').details.reason).toMatch(/skipped/);
  });
});

describe('blockers of a run a spent budget failed', () => {
  const failedRow = (attempt: number): Partial<NodeRunState> => ({ status: 'Failed', attempt, failureClass: 'AttemptsExhausted', finishedAt: 500 });
  const failedRun = { status: 'Failed' as const, failureClass: 'AttemptsExhausted' as const, reason: 'retry budget spent', finishedAt: 500 };

  it('names the spent MAX_TOTAL_ATTEMPTS retry budget on every row the failure left Pending', () => {
    const snap = running(chain, { start: done(), work: failedRow(3) }, failedRun);
    const list = blockers(snap, { now: NOW, maxTotalAttempts: 2 });
    expect(list).toEqual([
      { nodeKey: 'end', status: 'Pending', kind: 'budgetExhausted', since: 500, details: { budget: 'MAX_TOTAL_ATTEMPTS', limit: 2, spent: 2, reason: 'retry budget spent' } },
    ]);
  });

  it("names the run's own budget on a run failed BudgetExceeded", () => {
    const snap = running(chain, { start: done() }, { status: 'Failed', failureClass: 'BudgetExceeded', reason: 'maxAttempts 1 exceeded', finishedAt: 400 });
    expect(only(snap, 'work')).toMatchObject({ kind: 'budgetExhausted', details: { budget: 'run', reason: 'maxAttempts 1 exceeded' } });
  });

  it("lists nothing when a node's own maxAttempts ran out with retry budget left, or the run failed otherwise", () => {
    expect(blockers(running(chain, { start: done(), work: failedRow(3) }, failedRun), { now: NOW, maxTotalAttempts: 50 })).toEqual([]);
    expect(blockers(running(chain, { start: done(), work: failedRow(1) }, { ...failedRun, failureClass: 'NodeFailed' }), { now: NOW, maxTotalAttempts: 0 })).toEqual([]);
  });

  it('reports branchPlace for an eligible branch of a Parallel whose maxConcurrency branches all work', () => {
    const g = graphOf(
      [node('start', 'Start'), node('par', 'Parallel', { config: { maxConcurrency: 1 } }), node('a', 'Tool'), node('b', 'Tool'), node('end', 'End', { joinPolicy: 'Any' })],
      [edge('e1', 'start', 'par'), edge('e2', 'par', 'a'), edge('e3', 'par', 'b'), edge('e4', 'a', 'end'), edge('e5', 'b', 'end')],
    );
    const snap = running(g, { start: done(150), par: done(200), a: queued() });
    expect(only(snap, 'b')).toMatchObject({ kind: 'branchPlace', since: 200, details: { parallel: 'par', maxConcurrency: 1, working: 1 } });
    expect(kindOf(running(g, { start: done(150), par: done(200), a: done(300) }), 'b')).toBe('tick');
  });
});
