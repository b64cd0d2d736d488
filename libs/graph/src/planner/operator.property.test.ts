import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EVENT_KINDS, TERMINAL_RUN_STATUSES, type GraphEdge, type GraphNode } from '../model';
import { canReachNode, canReachRun } from '../state-machine';
import { applyPlanToSnapshot } from './apply';
import { plan } from './plan';
import { contextAt, edge, graphOf, node, snapshotOf } from './test-kit';
import type { Intent, RunSnapshot, WorkItem, WorkOutcome } from './types';

/** A layered graph of Tools, Pauses and DecisionModels, every node reaching one End. */
function layered(kinds: number[]) {
  const nodes: GraphNode[] = [node('n0', 'Start')];
  const edges: GraphEdge[] = [];
  kinds.forEach((k, idx) => {
    const i = idx + 1;
    const kind = (['Tool', 'Pause', 'DecisionModel', 'Tool', 'Condition'] as const)[k % 5]!;
    const parent = `n${Math.floor(idx / 2)}`;
    nodes.push(
      node(`n${i}`, kind, {
        onError: k % 3 === 0 ? 'Continue' : 'FailRun',
        maxAttempts: kind === 'Tool' || kind === 'DecisionModel' ? 1 + (k % 2) : 1,
        retryBackoff: { initialMs: 5, multiplier: 2, maxMs: 20 },
        config: kind === 'Pause' ? { prompt: 'ok?', allowedDecisions: ['Approve', 'Reject'] } : {},
      }),
    );
    edges.push(edge(`e${i}`, parent, `n${i}`, k % 4 === 1 ? { condition: { path: 'output.v', op: 'Ne', value: 9 } } : {}));
  });
  nodes.push(node('end', 'End', { joinPolicy: 'Any', config: { outcome: 'end' } }));
  const leaves = nodes.filter((n) => n.kind !== 'End' && !edges.some((e) => e.from === n.key));
  for (const l of leaves) edges.push(edge(`${l.key}_end`, l.key, 'end'));
  if (leaves.length < 2) nodes.at(-1)!.joinPolicy = 'All';
  return graphOf(nodes, edges);
}

describe('plan under operator intents', () => {
  it('keeps rows on the state machine and ends every run once the operator cancels, whatever intents arrive', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 19 }), { minLength: 1, maxLength: 9 }), fc.array(fc.nat({ max: 99 }), { minLength: 30, maxLength: 80 }), (kinds, dice) => {
        const graph = layered(kinds);
        let snap: RunSnapshot = snapshotOf(graph, { v: 1 });
        let roll = 0;
        const die = () => dice[roll++ % dice.length]!;
        let outstanding: WorkItem[] = [];
        let now = 100;
        let intentSeq = 0;
        for (let tick = 0; tick < 300; tick++) {
          const results = outstanding.map((w) => {
            const d = die();
            const outcome: WorkOutcome =
              d < 60
                ? { ok: true, output: { v: d % 3, held: w.kind === 'DecisionModel' && d % 4 === 0 }, startedAt: null, finishedAt: now }
                : { ok: false, failureClass: d % 2 ? 'NodeFailed' : 'ValidationFailed', reason: 'x', startedAt: null, finishedAt: now };
            return { invocationId: w.invocationId, nodeKey: w.nodeKey, outcome };
          });
          const intents: Intent[] = [];
          const nodes = snap.nodes.map((n) => {
            if (n.status === 'WaitingForApproval' && !n.decision) {
              const decision = die() < 50 ? 'Approve' : 'Reject';
              intents.push({ id: `i${++intentSeq}`, kind: 'decide', nodeKey: n.nodeKey, operationId: `op${tick}` });
              return { ...n, decision: { operationId: `op${tick}`, decision, comment: null, payload: null, at: now, applied: false } as const };
            }
            return n;
          });
          const target = graph.nodes[die() % graph.nodes.length]!.key;
          const act = die();
          if (act < 10) intents.push({ id: `i${++intentSeq}`, kind: 'retry', nodeKey: target });
          else if (act < 15) intents.push({ id: `i${++intentSeq}`, kind: 'skip', nodeKey: target });
          else if (act < 20) intents.push({ id: `i${++intentSeq}`, kind: 'complete', nodeKey: target, output: { v: 1 } });
          if (tick > 150) intents.push({ id: `i${++intentSeq}`, kind: 'cancel', reason: 'enough' });
          snap = { ...snap, nodes, results, intents };
          const r = plan(snap, contextAt(now, {}, `k${tick}`));
          for (const e of r.events) expect(EVENT_KINDS).toContain(e.kind);
          const next = applyPlanToSnapshot(snap, r);
          for (const row of next.nodes) {
            const prev = snap.nodes.find((p) => p.nodeKey === row.nodeKey)!;
            if (prev.status !== row.status) expect(canReachNode(prev.status, row.status), `${row.nodeKey} ${prev.status} -> ${row.status}`).toBe(true);
          }
          if (next.run.status !== snap.run.status) expect(canReachRun(snap.run.status, next.run.status), `${snap.run.status} -> ${next.run.status}`).toBe(true);
          snap = next;
          outstanding = r.enqueue;
          if (TERMINAL_RUN_STATUSES.has(snap.run.status) && outstanding.length === 0) {
            expect(snap.nodes.some((n) => n.status === 'Queued' || n.status === 'Running' || n.status === 'WaitingForApproval')).toBe(false);
            return;
          }
          now = Math.max(now + 1, r.wakeAt ?? now + 1);
        }
        throw new Error(`run did not end: ${snap.run.status}`);
      }),
      { numRuns: 300 },
    );
  });
});
