/**
 * CONTRACT §1.1–1.4 and §8 rules that the rest of the suite left unpinned: each test here
 * fails when the rule it names is taken out of the parser or the planner (each was checked
 * by disabling the rule in the source and running the suite).
 */
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../model';
import { edge as planEdge, failed, graphOf, node as planNode, ok, rowOf, snapshotOf, step, withResult } from '../planner/test-kit';
import type { Intent, RunSnapshot } from '../planner/types';
import { around, baseline, edge, errorsOf, node, only, parse, router, valid, warningsOf } from './fixtures/builders';
import type { Doc } from './fixtures/builders';

describe('CONTRACT §1.1 node members', () => {
  it('accepts node and edge keys of exactly 64 characters of [A-Za-z0-9_-] and refuses 65', () => {
    const k64 = 'Az09_-'.repeat(11).slice(0, 64);
    const e64 = `E${k64.slice(1)}`;
    const d = baseline();
    node(d, 'work').key = k64;
    edge(d, 'e1').to = k64;
    edge(d, 'e2').from = k64;
    edge(d, 'e2').key = e64;
    valid(d);
    const d65 = baseline();
    node(d65, 'work').key = `${k64}x`;
    edge(d65, 'e1').to = `${k64}x`;
    edge(d65, 'e2').from = `${k64}x`;
    only(d65, `${k64}x`, /must be 1–64 characters/);
  });

  it.each(['wo.rk', 'wörk', 'w/k'])('refuses the node key %j (outside the charset)', (key) => {
    const d = baseline();
    node(d, 'work').key = key;
    edge(d, 'e1').to = key;
    edge(d, 'e2').from = key;
    only(d, key, /must be 1–64 characters/);
  });

  const kinds: Array<[string, number, JsonObject]> = [
    ['LlmCall', 3, { kind: 'LlmCall', config: { prompt: 'p' } }],
    ['Agent', 3, { kind: 'Agent', config: { instructions: 'i' } }],
    ['Tool', 3, { kind: 'Tool', config: { toolName: 'echo' } }],
    ['DecisionModel', 3, { kind: 'DecisionModel', config: { question: 'q', labels: ['a', 'b'] } }],
    ['Condition', 1, { kind: 'Condition' }],
    ['Parallel', 1, { kind: 'Parallel' }],
    ['Join', 1, { kind: 'Join' }],
    ['Pause', 1, { kind: 'Pause', config: { prompt: 'p', allowedDecisions: ['Approve'] } }],
    ['ChatInput', 1, { kind: 'ChatInput', config: { prompt: 'p' } }],
    ['Loop', 1, { kind: 'Loop', config: { body: 'def-1', maxIterations: 2 } }],
    ['Subworkflow', 1, { kind: 'Subworkflow', config: { definitionId: 'def-2' } }],
  ];
  it.each(kinds)('defaults maxAttempts of a %s node to %i (Start and End to 1)', (kind, expected, doc) => {
    const d: Doc = { ...around(doc), ...(kind === 'ChatInput' ? { kind: 'Chat' } : {}) };
    if (kind === 'Condition') d.edges.push({ key: 'e3', from: 'work', to: 'done', condition: { path: 'output.x', op: 'Exists' } });
    const r = parse(d);
    expect(r.ok, JSON.stringify(r.ok ? null : r.errors)).toBe(true);
    if (!r.ok) return;
    const byKey = new Map(r.graph.nodes.map((n) => [n.key, n]));
    expect(byKey.get('work')!.maxAttempts).toBe(expected);
    expect(byKey.get('start')!.maxAttempts).toBe(1);
    expect(byKey.get('done')!.maxAttempts).toBe(1);
  });
});

describe('CONTRACT §1.2 edges and conditions', () => {
  it.each(['Gt', 'Gte', 'Lt', 'Lte', 'gte', 'LTE'])('refuses the relational operator %s against a boolean', (op) => {
    only(router({ kind: 'Parallel' }, { condition: { path: 'output.x', op, value: true } }, {}), 'ra', /cannot compare against a boolean/);
  });

  it('accepts Eq and Ne against a boolean', () => {
    valid(router({ kind: 'Parallel' }, { condition: { path: 'output.x', op: 'Eq', value: true } }, { condition: { path: 'output.x', op: 'Ne', value: false } }));
  });

  it.each([['2'], [' +1 '], [3]])('refuses the numeric operator token %j as a numeric token', (op) => {
    only(router({ kind: 'Parallel' }, { condition: { path: 'output.x', op, value: 1 } }, {}), 'ra', /numeric token/);
  });

  it('keys a condition without a path to its edge when the Condition source has no config.path to inherit', () => {
    const d = router({ kind: 'Condition' }, { condition: { op: 'Eq', value: 1 } }, { condition: { op: 'Eq', value: 2 } });
    const errs = errorsOf(d);
    expect(errs.map((e) => e.key)).toEqual(['ra', 'rb']);
    for (const e of errs) expect(e.message).toMatch(/no path/);
  });

  it('lets a default edge share its pair with the unconditional edge (a default is not unconditional)', () => {
    valid(router({ kind: 'Parallel' }, {}, {}, [{ key: 'ra2', from: 'r', to: 'a', default: true }]));
    valid(router({ kind: 'Parallel' }, { default: true }, {}, [{ key: 'ra2', from: 'r', to: 'a' }]));
  });
});

describe('CONTRACT §1.4 warnings', () => {
  it('warns, without refusing, about a node fed only by a ChatInput', () => {
    const d: Doc = { ...around({ kind: 'ChatInput', config: { prompt: 'p' } }), kind: 'Chat' };
    expect(errorsOf(d)).toEqual([]);
    expect(warningsOf(d)).toEqual([{ key: 'done', message: expect.stringMatching(/every inbound edge of 'done' leaves a Pause\/ChatInput \('work'\)/) }]);
  });
});

describe('CONTRACT §8 lifecycle details (planner)', () => {
  /** s → t1 → e1 ("one") and s → t2 → e2 ("two"): e1 comes first in document order. */
  const twoEnds = () =>
    graphOf(
      [
        planNode('s', 'Start'),
        planNode('t1', 'Tool'),
        planNode('t2', 'Tool'),
        planNode('e1', 'End', { config: { outcome: 'one' } }),
        planNode('e2', 'End', { config: { outcome: 'two' } }),
      ],
      [planEdge('a', 's', 't1'), planEdge('b', 's', 't2'), planEdge('c', 't1', 'e1'), planEdge('d', 't2', 'e2')],
    );

  it('takes the run output from the first End to succeed, not the first in document order', () => {
    let { snap } = step(snapshotOf(twoEnds()), 100);
    snap = step(withResult(snap, 't2', ok({ n: 2 }, 150)), 200).snap;
    expect(rowOf(snap, 'e2').status).toBe('Succeeded');
    expect(snap.run.status).toBe('Running');
    const last = step(withResult(snap, 't1', ok({ n: 1 }, 250)), 300);
    expect(rowOf(last.snap, 'e1').status).toBe('Succeeded');
    expect(last.snap.run.status).toBe('Completed');
    expect(last.result.run?.set.output).toMatchObject({ outcome: 'two' });
  });

  it('takes the first End in document order when two Ends succeed in the same tick', () => {
    let { snap } = step(snapshotOf(twoEnds()), 100);
    snap = withResult(withResult(snap, 't2', ok({}, 150)), 't1', ok({}, 150));
    const r = step(snap, 200);
    expect(r.snap.run.status).toBe('Completed');
    expect(r.result.run?.set.output).toMatchObject({ outcome: 'one' });
  });

  it('does not fail the run for an onError Continue node that fails before it is queued, and routes its failed envelope', () => {
    const g = graphOf(
      [
        planNode('s', 'Start'),
        planNode('t', 'Tool', { onError: 'Continue', inputSchema: { type: 'object', required: ['absent'] } }),
        planNode('ok', 'End', { config: { outcome: 'ok' } }),
        planNode('bad', 'End', { config: { outcome: 'bad' } }),
      ],
      [
        planEdge('1', 's', 't'),
        planEdge('2', 't', 'ok', { condition: { path: 'status', op: 'Eq', value: 'succeeded' } }),
        planEdge('3', 't', 'bad', { condition: { path: 'status', op: 'Eq', value: 'failed' } }),
      ],
    );
    const r = step(snapshotOf(g), 10);
    expect(rowOf(r.snap, 't')).toMatchObject({ status: 'Failed', failureClass: 'ValidationFailed' });
    expect(r.result.enqueue).toEqual([]);
    expect(r.result.events.map((e) => e.kind)).not.toContain('run.failed');
    expect(r.snap.run.status).toBe('Completed');
    expect(r.result.run?.set.output).toMatchObject({ outcome: 'bad' });
  });
});

describe('CONTRACT §8 operator verbs (planner)', () => {
  const withIntents = (snap: RunSnapshot, ...intents: Intent[]): RunSnapshot => ({ ...snap, intents: [...snap.intents, ...intents] });
  /** s → t1 (Tool) → p (Pause) → t2 (Tool) → e; after the first tick t1 is Queued and p, t2 are Pending. */
  const gated = () =>
    graphOf(
      [
        planNode('s', 'Start'),
        planNode('t1', 'Tool'),
        planNode('p', 'Pause', { config: { prompt: 'ok?', allowedDecisions: ['Approve'] } }),
        planNode('t2', 'Tool'),
        planNode('e', 'End'),
      ],
      [planEdge('1', 's', 't1'), planEdge('2', 't1', 'p'), planEdge('3', 'p', 't2'), planEdge('4', 't2', 'e')],
    );

  it('completes a Pending non-human node with the operator output', () => {
    const { snap } = step(snapshotOf(gated()), 0);
    expect(rowOf(snap, 't2').status).toBe('Pending');
    const r = step(withIntents(snap, { id: 'c1', kind: 'complete', nodeKey: 't2', output: { by: 'hand' } }), 10);
    expect(rowOf(r.snap, 't2')).toMatchObject({ status: 'Succeeded', output: { status: 'succeeded', output: { by: 'hand' } } });
    expect(r.result.consumedIntentIds).toEqual(['c1']);
  });

  it('refuses to complete a Pending Pause, and a Succeeded or Skipped node, leaving each row as it was', () => {
    let { snap } = step(snapshotOf(gated()), 0);
    snap = step(withIntents(snap, { id: 'k1', kind: 'skip', nodeKey: 't2' }), 5).snap;
    expect(rowOf(snap, 't2').status).toBe('Skipped');
    const before = ['p', 's', 't2'].map((k) => rowOf(snap, k));
    expect(before.map((row) => row.status)).toEqual(['Pending', 'Succeeded', 'Skipped']);
    const r = step(
      withIntents(
        snap,
        { id: 'c1', kind: 'complete', nodeKey: 'p', output: { decision: 'Approve' } },
        { id: 'c2', kind: 'complete', nodeKey: 's', output: { other: true } },
        { id: 'c3', kind: 'complete', nodeKey: 't2', output: { other: true } },
      ),
      10,
    );
    expect(['p', 's', 't2'].map((k) => rowOf(r.snap, k))).toEqual(before);
    expect(r.result.consumedIntentIds).toEqual(['c1', 'c2', 'c3']);
  });

  /** One tick after a steer recorded against the Queued node `t` of kind `kind`. */
  const steerQueued = (kind: 'Tool' | 'Agent' | 'LlmCall') => {
    const g = graphOf([planNode('s', 'Start'), planNode('t', kind), planNode('e', 'End')], [planEdge('1', 's', 't'), planEdge('2', 't', 'e')]);
    const { snap } = step(snapshotOf(g), 0);
    const queued = rowOf(snap, 't');
    expect(queued.status).toBe('Queued');
    const steered: RunSnapshot = {
      ...withIntents(snap, { id: 'st1', kind: 'steer', nodeKey: 't', operationId: 'o1' }),
      nodes: snap.nodes.map((n) => (n.nodeKey === 't' ? { ...n, steering: [{ operationId: 'o1', message: 'm', atUtc: 5, attempt: 1, applied: false }] } : n)),
    };
    return { queued, r: step(steered, 10) };
  };

  it('steers only an Agent or LlmCall: a steer recorded on a Queued Tool is ignored and its invocation kept', () => {
    const { queued, r } = steerQueued('Tool');
    expect(rowOf(r.snap, 't')).toMatchObject({ status: 'Queued', attempt: 1, invocationId: queued.invocationId });
    expect(r.result.cancel).toEqual([]);
    expect(r.result.events.map((e) => e.kind)).toEqual(['node.steer-ignored']);
  });

  it.each(['Agent', 'LlmCall'] as const)('re-queues a Queued %s with the steering message on the same attempt', (kind) => {
    const { queued, r } = steerQueued(kind);
    expect(rowOf(r.snap, 't')).toMatchObject({ status: 'Queued', attempt: 1 });
    expect(r.result.cancel).toEqual([{ nodeKey: 't', invocationId: queued.invocationId, reason: 'steered' }]);
    expect(r.result.enqueue[0]).toMatchObject({ nodeKey: 't', attempt: 1, steering: ['m'] });
  });

  it('gives a retried node maxAttempts more attempts while its attempt counter continues', () => {
    const g = graphOf([planNode('s', 'Start'), planNode('t', 'Tool', { maxAttempts: 2 }), planNode('e', 'End')], [planEdge('1', 's', 't'), planEdge('2', 't', 'e')]);
    const retry = (snap: RunSnapshot) => withIntents(snap, { id: 'r1', kind: 'retry', nodeKey: 't' });
    let { snap } = step(snapshotOf(g), 0);
    snap = step(withResult(snap, 't', failed('NodeFailed')), 10).snap;
    snap = step(snap, 1_000).snap;
    snap = step(withResult(snap, 't', failed('NodeFailed')), 1_010).snap;
    expect(rowOf(snap, 't')).toMatchObject({ status: 'Failed', attempt: 2, failureClass: 'AttemptsExhausted' });
    expect(snap.run.status).toBe('Failed');

    snap = step(retry(snap), 1_020).snap;
    expect(rowOf(snap, 't')).toMatchObject({ status: 'Queued', attempt: 3, attemptLimit: 4 });
    snap = step(withResult(snap, 't', failed('NodeFailed')), 1_030).snap;
    expect(rowOf(snap, 't')).toMatchObject({ status: 'Pending', attempt: 3, failureClass: 'NodeFailed' });
    expect(snap.run.status).toBe('Running');
    snap = step(snap, 5_000).snap;
    expect(rowOf(snap, 't')).toMatchObject({ status: 'Queued', attempt: 4 });
    snap = step(withResult(snap, 't', failed('NodeFailed')), 5_010).snap;
    expect(rowOf(snap, 't')).toMatchObject({ status: 'Failed', attempt: 4, failureClass: 'AttemptsExhausted' });
  });
});
