import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EVENT_KINDS, TERMINAL_NODE_STATUSES, TERMINAL_RUN_STATUSES, type FailureClass, type GraphEdge, type GraphNode, type JoinPolicy } from '../model';
import { canReachNode, canReachRun, nodeStatusAfterEvent } from '../state-machine';
import { applyPlanToSnapshot } from './apply';
import { plan } from './plan';
import { contextAt, edge, graphOf, node, snapshotOf } from './test-kit';
import type { RunSnapshot, WorkItem, WorkOutcome } from './types';

interface Spec {
  kinds: ('Tool' | 'LlmCall' | 'Condition' | 'Parallel' | 'Join' | 'End')[];
  parents: number[][];
  conds: (null | number | 'default')[][];
  policies: number[];
  onError: boolean[];
  maxAttempts: number[];
}

const MAX = 10;
const specArb: fc.Arbitrary<Spec> = fc.integer({ min: 1, max: MAX }).chain((n) =>
  fc.record({
    kinds: fc.array(fc.constantFrom('Tool', 'LlmCall', 'Condition', 'Parallel', 'Join', 'End', 'Tool') as fc.Arbitrary<Spec['kinds'][number]>, { minLength: n, maxLength: n }),
    parents: fc.array(fc.array(fc.nat(), { minLength: 1, maxLength: 3 }), { minLength: n, maxLength: n }),
    conds: fc.array(fc.array(fc.oneof(fc.constant(null), fc.constant(null), fc.integer({ min: 0, max: 2 }), fc.constant('default' as const)), { minLength: 3, maxLength: 3 }), { minLength: n, maxLength: n }),
    policies: fc.array(fc.nat({ max: 5 }), { minLength: n, maxLength: n }),
    onError: fc.array(fc.boolean(), { minLength: n, maxLength: n }),
    maxAttempts: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: n, maxLength: n }),
  }),
);

/** Start = n0, middle nodes n1..nk, a final End `end` catching every node without an out-edge. */
function buildGraph(spec: Spec) {
  const nodes: GraphNode[] = [node('n0', 'Start')];
  const edges: GraphEdge[] = [];
  const hasDefault = new Set<string>();
  spec.kinds.forEach((kind, idx) => {
    const i = idx + 1;
    const key = `n${i}`;
    const parents = [...new Set(spec.parents[idx]!.map((p) => p % i))];
    parents.forEach((p, j) => {
      const c = spec.conds[idx]![j] ?? null;
      const from = `n${p}`;
      if (nodes[p]!.kind === 'End') return;
      const isDefault = c === 'default' && !hasDefault.has(from);
      if (isDefault) hasDefault.add(from);
      edges.push(
        edge(`e${p}_${i}`, from, key, {
          default: isDefault,
          condition: typeof c === 'number' ? { path: 'output.v', op: 'Eq', value: c } : null,
        }),
      );
    });
    const inbound = edges.filter((e) => e.to === key).length;
    const pol = spec.policies[idx]!;
    let joinPolicy: JoinPolicy = 'All';
    if (inbound >= 2) joinPolicy = pol === 1 ? 'Any' : pol === 2 ? 'First' : pol === 3 ? { quorum: 2 } : 'All';
    const work = kind === 'Tool' || kind === 'LlmCall';
    const realKind = inbound === 0 ? 'Parallel' : kind;
    if (inbound === 0) edges.push(edge(`e0_${i}`, 'n0', key));
    nodes.push(
      node(key, realKind, {
        joinPolicy,
        onError: spec.onError[idx] ? 'Continue' : 'FailRun',
        maxAttempts: work ? spec.maxAttempts[idx]! : 1,
        timeoutSeconds: 5,
        retryBackoff: { initialMs: 10, multiplier: 2, maxMs: 100 },
        config: realKind === 'End' ? { outcome: key } : {},
      }),
    );
  });
  nodes.push(node('end', 'End', { joinPolicy: 'Any', config: { outcome: 'end' } }));
  const leaves = nodes.filter((n) => n.kind !== 'End' && !edges.some((e) => e.from === n.key));
  for (const l of leaves) edges.push(edge(`${l.key}_end`, l.key, 'end'));
  const endInbound = edges.filter((e) => e.to === 'end').length;
  if (endInbound === 0) edges.push(edge('n0_end', 'n0', 'end'));
  if (endInbound < 2) nodes[nodes.length - 1]!.joinPolicy = 'All';
  return graphOf(nodes, edges);
}

const CLASSES: FailureClass[] = ['NodeFailed', 'Timeout', 'Interrupted', 'ValidationFailed'];

describe('plan on random graphs', () => {
  it('always reaches a terminal run status, queues a node again only with a higher attempt, moves rows only along the state machine, and emits only known event kinds', () => {
    fc.assert(
      fc.property(specArb, fc.array(fc.nat({ max: 99 }), { minLength: 20, maxLength: 60 }), (spec, dice) => {
        const graph = buildGraph(spec);
        let snap: RunSnapshot = snapshotOf(graph, { v: 1 });
        let roll = 0;
        const die = () => dice[roll++ % dice.length]!;
        const lastAttempt = new Map<string, number>();
        let outstanding: WorkItem[] = [];
        let now = 1_000;
        for (let tick = 0; tick < 400; tick++) {
          const started = outstanding.filter(() => die() < 30).map((w) => ({ invocationId: w.invocationId, nodeKey: w.nodeKey, at: now }));
          const delivered: WorkItem[] = [];
          const kept: WorkItem[] = [];
          for (const w of outstanding) {
            const d = die();
            if (d < 8) continue; // lost: its deadline must settle it
            if (d < 20) kept.push(w);
            else delivered.push(w);
          }
          const results = delivered.map((w) => {
            const d = die();
            const outcome: WorkOutcome =
              d < 65
                ? { ok: true, output: { v: d % 3 }, startedAt: null, finishedAt: now }
                : { ok: false, failureClass: CLASSES[d % CLASSES.length]!, reason: 'scripted', startedAt: null, finishedAt: now };
            return { invocationId: w.invocationId, nodeKey: w.nodeKey, outcome };
          });
          snap = { ...snap, started: [...snap.started, ...started], results: [...snap.results, ...results] };
          const r = plan(snap, contextAt(now, {}, `k${tick}`));
          for (const e of r.events) expect(EVENT_KINDS).toContain(e.kind);
          for (const w of r.enqueue) {
            expect(w.attempt).toBeGreaterThan(lastAttempt.get(w.nodeKey) ?? 0);
            lastAttempt.set(w.nodeKey, w.attempt);
          }
          const next = applyPlanToSnapshot(snap, r);
          // the tick's events, folded over the rows before it, say where each row is after it
          const folded = new Map(snap.nodes.map((n) => [n.nodeKey, n.status]));
          for (const e of r.events) {
            const s = e.nodeKey === null ? null : nodeStatusAfterEvent(e.kind, e.detail);
            if (s !== null) folded.set(e.nodeKey!, s);
          }
          for (const row of next.nodes) expect(folded.get(row.nodeKey), `${row.nodeKey} after ${r.events.map((e) => e.kind).join(' ')}`).toBe(row.status);
          for (const row of next.nodes) {
            const prev = snap.nodes.find((p) => p.nodeKey === row.nodeKey)!;
            if (prev.status === row.status) continue;
            expect(TERMINAL_NODE_STATUSES.has(prev.status), `${prev.nodeKey}: ${prev.status} -> ${row.status}`).toBe(false);
            expect(canReachNode(prev.status, row.status), `${prev.status} -> ${row.status}`).toBe(true);
          }
          if (next.run.status !== snap.run.status) expect(canReachRun(snap.run.status, next.run.status)).toBe(true);
          expect(next.results).toEqual([]);
          snap = next;
          outstanding = [...kept, ...r.enqueue].filter((w) => {
            const row = snap.nodes.find((n) => n.nodeKey === w.nodeKey);
            return row?.invocationId === w.invocationId && (row.status === 'Queued' || row.status === 'Running');
          });
          if (TERMINAL_RUN_STATUSES.has(snap.run.status)) {
            expect(r.enqueue).toEqual([]);
            expect(snap.nodes.some((n) => n.status === 'Queued' || n.status === 'Running' || n.status === 'WaitingForApproval')).toBe(false);
            return;
          }
          now = Math.max(now + 1, r.wakeAt ?? now + 1);
        }
        throw new Error(`run did not end: ${snap.run.status} ${JSON.stringify(snap.nodes.map((n) => [n.nodeKey, n.status]))}`);
      }),
      { numRuns: 300 },
    );
  });

  it('never throws on a corrupted snapshot, failing the run with a reason instead', () => {
    const fields = ['nodes', 'graph', 'run', 'results', 'started', 'intents', 'children', 'row.status', 'row.output', 'row.steering', 'run.edgeOverrides', 'run.input'] as const;
    fc.assert(
      fc.property(specArb, fc.constantFrom(...fields), fc.anything(), (spec, field, junk) => {
        const s = snapshotOf(buildGraph(spec));
        const [head, member] = field.split('.') as [string, string | undefined];
        let bad: unknown;
        if (head === 'row') bad = { ...s, nodes: s.nodes.map((n, i) => (i === 0 ? { ...n, [member!]: junk } : n)) };
        else if (head === 'run' && member) bad = { ...s, run: { ...s.run, [member]: junk } };
        else bad = { ...s, [head]: junk };
        const r = plan(bad as RunSnapshot, contextAt(1));
        expect(r).toBeTypeOf('object');
        if (r.run?.set.status === 'Failed') expect(r.run.set.reason).toBeTypeOf('string');
      }),
      { numRuns: 300 },
    );
  });
});
