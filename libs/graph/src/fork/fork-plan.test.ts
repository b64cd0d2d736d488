import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Graph, NodeStatus } from '../model';
import { dagOf, drive, edge, graphOf, node, ok, snapshotOf } from '../planner/test-kit';
import type { NodeRunState, RunSnapshot, WorkItem } from '../planner/types';
import { ancestorsOf, descendantsOf, planFork, type ForkDecision, type ForkRequest, type ForkSourceNode } from './fork-plan';

/** start → a(Tool) → b(Tool) → end, plus start → side(Tool) → end */
const chain = graphOf(
  [node('start', 'Start'), node('a', 'Tool'), node('b', 'Tool'), node('side', 'Tool'), node('end', 'End')],
  [edge('e1', 'start', 'a'), edge('e2', 'a', 'b'), edge('e3', 'b', 'end'), edge('e4', 'start', 'side'), edge('e5', 'side', 'end')],
);

const rowsOf = (graph: Graph, statuses: Record<string, NodeStatus>, held: string[] = []): ForkSourceNode[] =>
  graph.nodes.map((n) => ({ nodeKey: n.key, kind: n.kind, status: statuses[n.key] ?? 'Pending', held: held.includes(n.key) }));

const allSucceeded = (graph: Graph): Record<string, NodeStatus> => Object.fromEntries(graph.nodes.map((n) => [n.key, 'Succeeded' as NodeStatus]));

function fork(req: Partial<ForkRequest> & { fromNodeKey: string }): ForkDecision {
  const source = req.source ?? chain;
  return planFork({
    source,
    target: req.target ?? source,
    sourceNodes: req.sourceNodes ?? rowsOf(source, allSucceeded(source)),
    sourceParentRunId: req.sourceParentRunId ?? null,
    fromNodeKey: req.fromNodeKey,
    failedOnly: req.failedOnly ?? false,
  });
}

function reusedKeys(d: ForkDecision): string[] {
  if (!d.ok) throw new Error(`refused: ${d.code} ${d.message}`);
  return d.reused.map((r) => r.nodeKey);
}

describe('planFork', () => {
  it('reuses the succeeded ancestors of the forked node and nothing else (not the node, not a sibling branch)', () => {
    expect(reusedKeys(fork({ fromNodeKey: 'b' }))).toEqual(['start', 'a']);
    expect(reusedKeys(fork({ fromNodeKey: 'end' }))).toEqual(['start', 'a', 'b', 'side']);
  });

  it('reuses nothing when forking from Start', () => {
    expect(reusedKeys(fork({ fromNodeKey: 'start' }))).toEqual([]);
  });

  it('runs again an ancestor the source did not settle Succeeded or Skipped, and everything downstream of it', () => {
    for (const status of ['Failed', 'Cancelled', 'Running', 'Queued', 'Pending', 'WaitingForApproval'] as NodeStatus[]) {
      const rows = rowsOf(chain, { start: 'Succeeded', a: status, b: 'Succeeded', side: 'Succeeded' });
      expect(reusedKeys(fork({ fromNodeKey: 'end', sourceNodes: rows }))).toEqual(['start', 'side']);
    }
  });

  it('does not reuse a held DecisionModel (its out-edges hold)', () => {
    const g = graphOf([node('start', 'Start'), node('dm', 'DecisionModel'), node('end', 'End')], [edge('e1', 'start', 'dm'), edge('e2', 'dm', 'end')]);
    expect(reusedKeys(fork({ source: g, fromNodeKey: 'end', sourceNodes: rowsOf(g, allSucceeded(g), ['dm']) }))).toEqual(['start']);
    expect(reusedKeys(fork({ source: g, fromNodeKey: 'end', sourceNodes: rowsOf(g, allSucceeded(g)) }))).toEqual(['start', 'dm']);
  });

  it('copies a skipped branch as Skipped so an Any join upstream keeps its routing', () => {
    const g = graphOf(
      [node('start', 'Start'), node('c', 'Condition'), node('yes', 'Tool'), node('no', 'Tool'), node('j', 'Join', { joinPolicy: 'Any' }), node('f', 'Tool'), node('end', 'End')],
      [
        edge('e1', 'start', 'c'),
        edge('e2', 'c', 'yes', { condition: { path: 'output.x', op: 'Eq', value: 1 } }),
        edge('e3', 'c', 'no', { default: true }),
        edge('e4', 'yes', 'j'),
        edge('e5', 'no', 'j'),
        edge('e6', 'j', 'f'),
        edge('e7', 'f', 'end'),
      ],
    );
    const rows = rowsOf(g, { start: 'Succeeded', c: 'Succeeded', yes: 'Succeeded', no: 'Skipped', j: 'Succeeded', f: 'Failed' });
    const d = fork({ source: g, fromNodeKey: 'f', sourceNodes: rows });
    expect(d.ok && d.reused).toEqual([
      { nodeKey: 'start', status: 'Succeeded' },
      { nodeKey: 'c', status: 'Succeeded' },
      { nodeKey: 'yes', status: 'Succeeded' },
      { nodeKey: 'no', status: 'Skipped' },
      { nodeKey: 'j', status: 'Succeeded' },
    ]);
  });

  it("runs a First join again when its loser was cancelled, and keeps the winner", () => {
    const g = graphOf(
      [node('start', 'Start'), node('fast', 'Tool'), node('slow', 'Tool'), node('j', 'Join', { joinPolicy: 'First' }), node('f', 'Tool'), node('end', 'End')],
      [edge('e1', 'start', 'fast'), edge('e2', 'start', 'slow'), edge('e3', 'fast', 'j'), edge('e4', 'slow', 'j'), edge('e5', 'j', 'f'), edge('e6', 'f', 'end')],
    );
    const rows = rowsOf(g, { start: 'Succeeded', fast: 'Succeeded', slow: 'Cancelled', j: 'Succeeded', f: 'Succeeded' });
    expect(reusedKeys(fork({ source: g, fromNodeKey: 'f', sourceNodes: rows }))).toEqual(['start', 'fast']);
  });

  it('refuses a node the source run does not have, and one the target version does not have', () => {
    const unknown = fork({ fromNodeKey: 'nope' });
    expect(unknown).toMatchObject({ ok: false, code: 'ForkNodeUnknown', details: [{ key: 'nope' }] });
    const target = graphOf([node('start', 'Start'), node('a', 'Tool'), node('end', 'End')], [edge('e1', 'start', 'a'), edge('e2', 'a', 'end')]);
    expect(fork({ fromNodeKey: 'b', target })).toMatchObject({ ok: false, code: 'ForkNodeNotInVersion', details: [{ key: 'b' }] });
  });

  it('refuses, keyed per node, when a completed upstream node is missing or changed kind in the target version', () => {
    const target = graphOf(
      [node('start', 'Start'), node('a', 'LlmCall'), node('side', 'Tool'), node('b', 'Tool'), node('end', 'End')],
      [edge('e1', 'start', 'side'), edge('e2', 'side', 'b'), edge('e3', 'b', 'end'), edge('e4', 'start', 'a'), edge('e5', 'a', 'end')],
    );
    const d = fork({ fromNodeKey: 'b', target });
    expect(d).toMatchObject({ ok: false, code: 'ForkUpstreamMismatch' });
    expect(!d.ok && d.details).toEqual([{ key: 'a', message: 'completed upstream node is a Tool, the target version makes it a LlmCall' }]);
    const without = graphOf([node('start', 'Start'), node('b', 'Tool'), node('end', 'End')], [edge('e1', 'start', 'b'), edge('e2', 'b', 'end')]);
    const d2 = fork({ fromNodeKey: 'b', target: without });
    expect(!d2.ok && d2.details).toEqual([{ key: 'a', message: 'completed upstream node is missing in the target version' }]);
  });

  it('does not refuse a changed node the source never completed; it simply runs', () => {
    const rows = rowsOf(chain, { start: 'Succeeded', a: 'Failed' });
    const target = graphOf(
      [node('start', 'Start'), node('a', 'LlmCall'), node('b', 'Tool'), node('end', 'End')],
      [edge('e1', 'start', 'a'), edge('e2', 'a', 'b'), edge('e3', 'b', 'end')],
    );
    expect(reusedKeys(fork({ fromNodeKey: 'b', sourceNodes: rows, target }))).toEqual(['start']);
  });

  it('onto a version with a new upstream node: the new node runs, and so does what depends on it', () => {
    const target = graphOf(
      [node('start', 'Start'), node('pre', 'Tool'), node('a', 'Tool'), node('b', 'Tool'), node('side', 'Tool'), node('end', 'End')],
      [edge('e0', 'start', 'pre'), edge('e1', 'pre', 'a'), edge('e2', 'a', 'b'), edge('e3', 'b', 'end'), edge('e4', 'start', 'side'), edge('e5', 'side', 'end')],
    );
    expect(reusedKeys(fork({ fromNodeKey: 'end', target }))).toEqual(['start', 'side']);
  });

  describe('failedOnly', () => {
    /** start → p(Parallel) → a, b, c (Tools) → j(Join) → end; start → other → end */
    const fan = graphOf(
      [node('start', 'Start'), node('p', 'Parallel'), node('a', 'Tool'), node('b', 'Tool'), node('c', 'Tool'), node('j', 'Join'), node('other', 'Tool'), node('end', 'End')],
      [
        edge('e1', 'start', 'p'),
        edge('e2', 'p', 'a'),
        edge('e3', 'p', 'b'),
        edge('e4', 'p', 'c'),
        edge('e5', 'a', 'j'),
        edge('e6', 'b', 'j'),
        edge('e7', 'c', 'j'),
        edge('e8', 'j', 'end'),
        edge('e9', 'start', 'other'),
        edge('e10', 'other', 'end'),
      ],
    );
    const failedB = rowsOf(fan, { start: 'Succeeded', p: 'Succeeded', a: 'Succeeded', b: 'Failed', c: 'Succeeded', j: 'Pending', other: 'Succeeded' });

    it("keeps a fan-out's succeeded branches and the fan-out node, and runs the failed branch and what joins it", () => {
      expect(reusedKeys(fork({ source: fan, fromNodeKey: 'p', sourceNodes: failedB, failedOnly: true }))).toEqual(['start', 'p', 'a', 'c']);
      // without it, the fan-out and every branch run again
      expect(reusedKeys(fork({ source: fan, fromNodeKey: 'p', sourceNodes: failedB }))).toEqual(['start']);
    });

    it('keeps nothing outside the forked node and its ancestors and descendants (a sibling branch runs again)', () => {
      expect(reusedKeys(fork({ source: fan, fromNodeKey: 'p', sourceNodes: failedB, failedOnly: true }))).not.toContain('other');
    });

    it('runs the forked node again when it did not succeed, and so everything below it', () => {
      const rows = rowsOf(fan, { start: 'Succeeded', p: 'Failed' });
      expect(reusedKeys(fork({ source: fan, fromNodeKey: 'p', sourceNodes: rows, failedOnly: true }))).toEqual(['start']);
    });

    it('refuses when a kept branch is missing in the target version', () => {
      const target = graphOf(
        fan.nodes.filter((n) => n.key !== 'c'),
        fan.edges.filter((e) => e.from !== 'c' && e.to !== 'c'),
      );
      const d = fork({ source: fan, target, fromNodeKey: 'p', sourceNodes: failedB, failedOnly: true });
      expect(d).toMatchObject({ ok: false, code: 'ForkUpstreamMismatch', details: [{ key: 'c' }] });
      expect(reusedKeys(fork({ source: fan, target, fromNodeKey: 'p', sourceNodes: failedB }))).toEqual(['start']);
    });

    it("resumes a Loop that failed after its first iteration at the failed one (keeping the succeeded iterations), and only then", () => {
      const g = graphOf([node('start', 'Start'), node('loop', 'Loop'), node('end', 'End')], [edge('e1', 'start', 'loop'), edge('e2', 'loop', 'end')]);
      const rows = (status: NodeStatus, loopIteration: number | null): ForkSourceNode[] => [
        { nodeKey: 'start', kind: 'Start', status: 'Succeeded', held: false },
        { nodeKey: 'loop', kind: 'Loop', status, held: false, loopIteration },
        { nodeKey: 'end', kind: 'End', status: 'Pending', held: false },
      ];
      const resume = (d: ForkDecision) => (d.ok ? d.resumeLoop : null);
      expect(fork({ source: g, fromNodeKey: 'loop', failedOnly: true, sourceNodes: rows('Failed', 3) })).toMatchObject({ ok: true, resumeLoop: true, reused: [{ nodeKey: 'start' }] });
      expect(resume(fork({ source: g, fromNodeKey: 'loop', failedOnly: true, sourceNodes: rows('Cancelled', 2) }))).toBe(true);
      expect(resume(fork({ source: g, fromNodeKey: 'loop', failedOnly: true, sourceNodes: rows('Failed', 1) }))).toBe(false);
      expect(resume(fork({ source: g, fromNodeKey: 'loop', sourceNodes: rows('Failed', 3) }))).toBe(false);
      // a Loop that succeeded is kept as it is
      const done = fork({ source: g, fromNodeKey: 'loop', failedOnly: true, sourceNodes: rows('Succeeded', 3) });
      expect(done).toMatchObject({ ok: true, resumeLoop: false });
      expect(reusedKeys(done)).toEqual(['start', 'loop']);
      // its input would change: an upstream node that runs again means a fresh Loop
      const rerunUpstream: ForkSourceNode[] = [{ nodeKey: 'start', kind: 'Start', status: 'Failed', held: false }, ...rows('Failed', 3).slice(1)];
      expect(resume(fork({ source: g, fromNodeKey: 'loop', failedOnly: true, sourceNodes: rerunUpstream }))).toBe(false);
    });
  });

  it('refuses a child run', () => {
    expect(fork({ fromNodeKey: 'b', sourceParentRunId: 'p-1' })).toMatchObject({ ok: false, code: 'ForkOfChildRun' });
  });

  it('ancestorsOf and descendantsOf follow every path', () => {
    expect([...ancestorsOf(chain, 'end')].sort()).toEqual(['a', 'b', 'side', 'start']);
    expect([...ancestorsOf(chain, 'start')]).toEqual([]);
    expect([...descendantsOf(chain, 'a')].sort()).toEqual(['b', 'end']);
    expect([...descendantsOf(chain, 'end')]).toEqual([]);
  });
});

// ------------------------------------------------------------------ property: the planner agrees

/** A random DAG: Start n0, Tool/Condition/Join middles with 1–3 parents among earlier nodes, one End. */
const dagArb = fc.integer({ min: 1, max: 8 }).chain((n) =>
  fc.record({
    parents: fc.array(fc.array(fc.nat(), { minLength: 1, maxLength: 3 }), { minLength: n, maxLength: n }),
    conditional: fc.array(fc.boolean(), { minLength: n, maxLength: n }),
    policies: fc.array(fc.constantFrom('All', 'Any', 'First') as fc.Arbitrary<'All' | 'Any' | 'First'>, { minLength: n, maxLength: n }),
  }),
);

function buildDag(spec: { parents: number[][]; conditional: boolean[]; policies: Array<'All' | 'Any' | 'First'> }): Graph {
  return dagOf(
    spec.parents,
    (i, _p, j) => ({ condition: spec.conditional[i - 1] === true && j === 0 ? { path: 'output.result.v', op: 'Eq' as const, value: 1 } : null }),
    (i, parentCount) => node(`n${i}`, 'Tool', { joinPolicy: parentCount >= 2 ? spec.policies[i - 1]! : 'All', maxAttempts: 1 }),
  );
}

/** The new run's rows as the store writes them: reused rows copied, every other row fresh. */
function forkedSnapshot(graph: Graph, source: RunSnapshot, d: Extract<ForkDecision, { ok: true }>): RunSnapshot {
  const fresh = snapshotOf(graph, source.run.input, { id: 'run-2' });
  const reused = new Set(d.reused.map((r) => r.nodeKey));
  const nodes: NodeRunState[] = fresh.nodes.map((row) => {
    if (!reused.has(row.nodeKey)) return row;
    const src = source.nodes.find((r) => r.nodeKey === row.nodeKey)!;
    return { ...row, status: src.status, attempt: src.attempt, input: src.input, output: src.output, failureClass: 'None', reason: src.reason, finishedAt: src.finishedAt };
  });
  return { ...fresh, nodes };
}

describe('planFork on random graphs, driven by the planner', () => {
  it('the forked run (failedOnly or not) never runs a reused node again, keeps each reused row as the source left it, and settles the run', () => {
    fc.assert(
      fc.property(dagArb, fc.array(fc.nat({ max: 9 }), { minLength: 5, maxLength: 20 }), fc.nat(), fc.boolean(), (spec, dice, pick, failedOnly) => {
        const graph = buildDag(spec);
        let roll = 0;
        const answer = (item: WorkItem) => {
          const d = dice[roll++ % dice.length]!;
          return d < 2 ? { ok: false as const, failureClass: 'NodeFailed' as const, reason: 'scripted', startedAt: 1, finishedAt: 1 } : ok({ v: d % 2, of: item.nodeKey });
        };
        const source = drive(snapshotOf(graph, { v: 1 }), answer);
        expect(source.terminal).toBe(true);
        const fromNodeKey = graph.nodes[pick % graph.nodes.length]!.key;
        const d = planFork({ source: graph, target: graph, sourceNodes: source.snap.nodes, sourceParentRunId: null, fromNodeKey, failedOnly });
        if (!d.ok) throw new Error(d.message);
        const upstream = ancestorsOf(graph, fromNodeKey);
        if (failedOnly) for (const k of [fromNodeKey, ...descendantsOf(graph, fromNodeKey)]) upstream.add(k);
        const reused = new Set(d.reused.map((r) => r.nodeKey));
        for (const key of reused) {
          expect(upstream.has(key)).toBe(true);
          for (const e of graph.edges.filter((x) => x.to === key)) expect(reused.has(e.from)).toBe(true);
        }
        const forked = drive(forkedSnapshot(graph, source.snap, d), () => ok({ v: 1 }));
        expect(forked.terminal).toBe(true);
        const ran = new Set(forked.results.flatMap((r) => r.enqueue.map((w) => w.nodeKey)));
        for (const key of reused) {
          expect(ran.has(key)).toBe(false);
          const before = source.snap.nodes.find((r) => r.nodeKey === key)!;
          const after = forked.snap.nodes.find((r) => r.nodeKey === key)!;
          expect({ status: after.status, output: after.output }).toEqual({ status: before.status, output: before.output });
        }
      }),
      { numRuns: 150 },
    );
  });
});
