import { describe, expect, it } from 'vitest';
import { contextAt, edge, graphOf, node, snapshotOf } from './test-kit';
import { snapshotProblem } from './validate-snapshot';

const ctx = contextAt(1_000);
const chain = () => graphOf([node('s', 'Start'), node('t', 'Tool'), node('e', 'End')], [edge('st', 's', 't'), edge('te', 't', 'e')]);

describe('snapshotProblem', () => {
  it('passes a well-formed snapshot, again and again for the same graph', () => {
    const snap = snapshotOf(chain());
    expect(snapshotProblem(snap, ctx)).toBeNull();
    expect(snapshotProblem({ ...snap, nodes: snap.nodes.map((r) => ({ ...r })) }, ctx)).toBeNull();
  });

  it('judges the rows on every call while the graph is judged once', () => {
    const snap = snapshotOf(chain());
    expect(snapshotProblem(snap, ctx)).toBeNull();
    expect(snapshotProblem({ ...snap, nodes: snap.nodes.slice(1) }, ctx)).toBe("node 's' has no row");
    expect(snapshotProblem({ ...snap, nodes: snap.nodes.map((r) => (r.nodeKey === 't' ? { ...r, status: 'Lost' as never } : r)) }, ctx)).toBe("row 't' has unknown status");
    expect(snapshotProblem({ ...snap, nodes: [...snap.nodes, { ...snap.nodes[1]! }] }, ctx)).toBe("two rows for node 't'");
  });

  it('names a node declared twice before any row', () => {
    const g = chain();
    const snap = snapshotOf(g);
    expect(snapshotProblem({ ...snap, graph: { ...g, nodes: [...g.nodes, node('t', 'Tool')] } }, ctx)).toBe("graph declares node 't' twice");
  });

  it('names a row fault before an edge naming an undeclared node, and that edge when the rows are sound', () => {
    const g = chain();
    const bad = { ...g, edges: [...g.edges, edge('ghost', 't', 'nowhere')] };
    const snap = { ...snapshotOf(g), graph: bad };
    expect(snapshotProblem(snap, ctx)).toBe("edge 'ghost' names an undeclared node");
    expect(snapshotProblem({ ...snap, nodes: snap.nodes.slice(1) }, ctx)).toBe("node 's' has no row");
  });
});
