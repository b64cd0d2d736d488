import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { GraphEdge, GraphNode, Json, StateReducer } from '../model';
import { Issues } from '../parse/util';
import { foldState } from '../state/fold';
import { checkConflictWriters } from '../state/parse-state';
import { applyPlanToSnapshot } from './apply';
import { plan } from './plan';
import { contextAt, edge, graphOf, node, snapshotOf } from './test-kit';
import type { RunSnapshot, WorkItem } from './types';

/**
 * Random DAGs of Tool nodes fanning out of Start, each writing some state keys, driven to
 * the end under random completion orders: which invocations a worker answers in each tick,
 * and in what order their results reach the planner.
 */
interface Spec {
  parents: number[][];
  /** per node: which of the commutative keys it writes */
  writes: { items: boolean; total: boolean; bag: boolean }[];
  /** per node: writes the rejectConflict key `once` (kept only where the writers stay ordered) */
  once: boolean[];
  onceValue: number[];
}

const specArb: fc.Arbitrary<Spec> = fc.integer({ min: 1, max: 8 }).chain((n) =>
  fc.record({
    parents: fc.array(fc.array(fc.nat(), { minLength: 1, maxLength: 3 }), { minLength: n, maxLength: n }),
    writes: fc.array(fc.record({ items: fc.boolean(), total: fc.boolean(), bag: fc.boolean() }), { minLength: n, maxLength: n }),
    once: fc.array(fc.boolean(), { minLength: n, maxLength: n }),
    onceValue: fc.array(fc.integer({ min: 0, max: 1 }), { minLength: n, maxLength: n }),
  }),
);

const REDUCERS: Record<string, StateReducer> = { items: 'append', total: 'sum', bag: 'merge', once: 'rejectConflict', topic: 'overwrite' };

/** What node `n<i>` answers: one item, a fraction that rounds differently by order, a bag member. */
function outputOf(key: string): Json {
  const i = Number(key.slice(1));
  return { item: `found by ${key}`, amount: 0.1 * i + 1e-9 * i * i, bag: { [`k${i % 3}`]: key }, once: i };
}

function buildGraph(spec: Spec, withOnce: boolean) {
  const nodes: GraphNode[] = [node('n0', 'Start', { writes: { topic: 'output.input.topic' } })];
  const edges: GraphEdge[] = [];
  spec.parents.forEach((ps, idx) => {
    const i = idx + 1;
    const key = `n${i}`;
    for (const p of new Set(ps.map((x) => x % i))) edges.push(edge(`e${p}_${i}`, `n${p}`, key));
    const w = spec.writes[idx]!;
    const writes: Record<string, string> = {};
    if (w.items) writes['items'] = 'output.item';
    if (w.total) writes['total'] = 'output.amount';
    if (w.bag) writes['bag'] = 'output.bag';
    if (withOnce && spec.once[idx]) writes['once'] = spec.onceValue[idx] === 0 ? 'output.once' : 'attempt';
    nodes.push(node(key, 'Tool', { timeoutSeconds: 600, ...(Object.keys(writes).length > 0 ? { writes } : {}) }));
  });
  nodes.push(node('end', 'End'));
  for (const n of nodes) if (n.kind !== 'End' && !edges.some((e) => e.from === n.key)) edges.push(edge(`${n.key}_end`, n.key, 'end'));
  const graph = graphOf(nodes, edges);
  graph.state = { schema: null, reducers: REDUCERS, initial: { items: [], total: 0 } };
  if (withOnce) {
    // keep `once` writers only while they stay ordered by the graph (the save-time rule)
    for (const n of nodes) {
      if (!n.writes?.['once']) continue;
      const out = new Issues();
      checkConflictWriters(graph, graph.state, out);
      if (out.errors.length > 0) delete n.writes['once'];
    }
  }
  return graph;
}

/** Drives the run to its end; `order` decides, tick by tick, which outstanding items answer and in what order. */
function run(graph: ReturnType<typeof buildGraph>, order: number[]): RunSnapshot {
  let snap: RunSnapshot = snapshotOf(graph, { topic: 'rivers' });
  let outstanding: WorkItem[] = [];
  let roll = 0;
  const die = () => order[roll++ % order.length]!;
  for (let tick = 0, now = 1_000; tick < 200; tick++, now++) {
    const ready = [...outstanding];
    const answered: WorkItem[] = [];
    // a random non-empty subset, in a random order
    while (ready.length > 0 && (answered.length === 0 || die() % 2 === 0)) answered.push(ready.splice(die() % ready.length, 1)[0]!);
    const results = answered.map((w) => ({ invocationId: w.invocationId, nodeKey: w.nodeKey, outcome: { ok: true as const, output: outputOf(w.nodeKey), startedAt: now, finishedAt: now } }));
    snap = { ...snap, results };
    const r = plan(snap, contextAt(now, {}, `t${tick}`));
    snap = applyPlanToSnapshot(snap, r);
    outstanding = [...ready, ...r.enqueue];
    if (snap.run.status === 'Completed' || snap.run.status === 'Failed') return snap;
  }
  throw new Error('run did not end');
}

const orderArb = fc.array(fc.nat({ max: 97 }), { minLength: 5, maxLength: 40 });

describe('run state under any completion order', () => {
  it('append, sum and merge fold to the same final state whichever branch finishes first', () => {
    fc.assert(
      fc.property(specArb, orderArb, orderArb, (spec, a, b) => {
        const graph = buildGraph(spec, false);
        const first = run(graph, a);
        const second = run(graph, b);
        expect(first.run.status).toBe('Completed');
        expect(second.run.status).toBe('Completed');
        const stateA = foldState(graph.state!, first.stateLog ?? []);
        const stateB = foldState(graph.state!, second.stateLog ?? []);
        expect(stateA).toEqual(stateB);
        // the exact state: items in writer key order, the sum added in that order, bags merged in it
        const writers = graph.nodes.filter((n) => n.kind === 'Tool').map((n) => n.key).sort();
        const items = writers.filter((k) => graph.nodes.find((n) => n.key === k)!.writes?.['items']);
        expect(stateA['items']).toEqual(items.map((k) => `found by ${k}`));
        expect(stateA['topic']).toBe('rivers');
        let total = 0;
        for (const k of writers) if (graph.nodes.find((n) => n.key === k)!.writes?.['total']) total += (outputOf(k) as { amount: number }).amount;
        expect(stateA['total']).toBe(total);
      }),
      { numRuns: 200 },
    );
  });

  it('rejectConflict fails the same node, for the same reason, in every order', () => {
    fc.assert(
      fc.property(specArb, orderArb, orderArb, (spec, a, b) => {
        const graph = buildGraph(spec, true);
        const failedOf = (s: RunSnapshot) =>
          s.nodes.filter((n) => n.status === 'Failed').map((n) => ({ key: n.nodeKey, class: n.failureClass, reason: n.reason }));
        const first = run(graph, a);
        const second = run(graph, b);
        expect(failedOf(first)).toEqual(failedOf(second));
        expect(first.run.status).toBe(second.run.status);
        for (const f of failedOf(first)) {
          expect(f.class).toBe('ValidationFailed');
          expect(f.reason).toContain("state key 'once' (rejectConflict)");
        }
        // a conflict happens exactly when two ordered writers wrote different values
        const writes = graph.nodes.filter((n) => n.writes?.['once']);
        const values = new Set(writes.map((n) => (n.writes!['once'] === 'attempt' ? 1 : Number(n.key.slice(1)))));
        if (values.size <= 1) expect(first.run.status).toBe('Completed');
      }),
      { numRuns: 200 },
    );
  });
});
