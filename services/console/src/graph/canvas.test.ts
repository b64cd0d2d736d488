import { describe, expect, it } from 'vitest';
import { layoutGraph } from '@flowline/graph';
import type { NodeRunSummary } from '@flowline/client';
import { canvasConversions, edgeText, graphToCanvas, NODE_HEIGHT, NODE_WIDTH } from './canvas';
import { overlayRun } from './overlay';
import { LEGIBLE_ZOOM, MIN_FIT_ZOOM, graphBoxHeight, initialViewport, initialZoom } from './RunGraph';

const graph = () => ({
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 'check', kind: 'Condition', label: 'Needs review?', config: { path: 'output.result.risky' } },
    { key: 'review', kind: 'Pause', config: { prompt: 'ok?', allowedDecisions: ['Approve', 'Reject'] } },
    { key: 'auto', kind: 'End', config: { outcome: 'auto' } },
    { key: 'done', kind: 'End', config: { outcome: 'done' } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 'check' },
    { key: 'risky', from: 'check', to: 'review', condition: { op: 'Eq', value: true } },
    { key: 'safe', from: 'check', to: 'auto', default: true },
    { key: 'yes', from: 'review', to: 'done', label: 'approved', condition: { path: 'output.decision', op: 'Eq', value: 'Approve' } },
    { key: 'ghost', from: 'review', to: 'nowhere' },
  ],
});

const nodeRun = (nodeKey: string, status: string, attempt = 1): NodeRunSummary =>
  ({ nodeKey, kind: 'Tool', status, attempt, failureClass: 'None', reason: null, pendingDecisionKind: null, childRunId: null, startedAt: null, finishedAt: null }) as NodeRunSummary;

describe('graphToCanvas', () => {
  it('converts a graph object once: the same object again is served from the memo, an equal copy is converted anew', () => {
    const g = graph();
    const before = canvasConversions();
    const a = graphToCanvas(g);
    expect(graphToCanvas(g)).toBe(a);
    expect(canvasConversions()).toBe(before + 1);
    const copy = graphToCanvas(structuredClone(g));
    expect(copy).not.toBe(a);
    expect(copy).toEqual(a);
    expect(canvasConversions()).toBe(before + 2);
  });

  it('places the nodes where the shared layered layout puts them, left to right', () => {
    const g = graph();
    const c = graphToCanvas(g);
    const layout = layoutGraph(g, { nodeWidth: NODE_WIDTH, nodeHeight: NODE_HEIGHT, rankGap: 64, nodeGap: 26 });
    for (const n of c.nodes) expect(n.position).toEqual({ x: layout.byKey.get(n.id)!.x, y: layout.byKey.get(n.id)!.y });
    expect(c.nodes.find((n) => n.id === 'review')!.position.x).toBeGreaterThan(c.nodes.find((n) => n.id === 'check')!.position.x);
  });

  it('keeps an author’s positions when every node stores one, and lays the whole graph out when any is missing', () => {
    const g = graph();
    g.nodes.forEach((n, i) => Object.assign(n, { position: { x: i * 10, y: 5 } }));
    expect(graphToCanvas(g).nodes.map((n) => n.position)).toEqual(g.nodes.map((_, i) => ({ x: i * 10, y: 5 })));
    const partial = graph();
    Object.assign(partial.nodes[0]!, { position: { x: 999, y: 999 } });
    expect(graphToCanvas(partial).nodes[0]!.position).not.toEqual({ x: 999, y: 999 });
  });

  it('drops edges to unknown nodes, labels edges by label, then condition, then default, and freezes what it caches', () => {
    const c = graphToCanvas(graph());
    expect(c.edges.map((e) => [e.id, e.text])).toEqual([
      ['e1', null],
      ['risky', '= true'],
      ['safe', 'default'],
      ['yes', 'approved'],
    ]);
    expect(Object.isFrozen(c.nodes)).toBe(true);
    expect(Object.isFrozen(c.nodes[0])).toBe(true);
    expect(edgeText({ key: 'x', from: 'a', to: 'b', label: null, condition: { path: 'output.json.n', op: 'Gte', value: 3 }, isDefault: false })).toBe('n ≥ 3');
    expect(edgeText({ key: 'x', from: 'a', to: 'b', label: null, condition: { path: 'output.x', op: 'NotExists' }, isDefault: false })).toBe('x missing');
  });

  it('draws a malformed or empty document as an empty canvas instead of throwing', () => {
    for (const bad of [null, 42, 'graph', {}, { nodes: 'x', edges: [null, 1] }, { nodes: [{ kind: 'Start' }, null] }]) {
      expect(graphToCanvas(bad).nodes).toEqual([]);
    }
  });
});

describe('overlayRun', () => {
  it('overlays each node run’s status and attempt, reading a node without a run as Pending', () => {
    const c = graphToCanvas(graph());
    const o = overlayRun(c, [nodeRun('start', 'Succeeded'), nodeRun('check', 'Running', 2)]);
    expect(o.nodes.map((n) => [n.id, n.data.status, n.data.attempt])).toEqual([
      ['start', 'Succeeded', 1],
      ['check', 'Running', 2],
      ['review', 'Pending', 0],
      ['auto', 'Pending', 0],
      ['done', 'Pending', 0],
    ]);
    expect(o.nodes.find((n) => n.id === 'check')!.data.label).toBe('Needs review?');
  });

  it('reads edges as taken, dead or pending from their ends, and marks the out-edges of a running node flowing (a class, never an animated edge)', () => {
    const c = graphToCanvas(graph());
    const o = overlayRun(c, [nodeRun('start', 'Succeeded'), nodeRun('check', 'Succeeded'), nodeRun('review', 'Running'), nodeRun('auto', 'Skipped'), nodeRun('done', 'Pending')]);
    const state = Object.fromEntries(o.edges.map((e) => [e.id, [e.data.state, e.flowing]]));
    expect(state).toEqual({ e1: ['taken', false], risky: ['taken', false], safe: ['dead', false], yes: ['pending', true] });
    expect(o.edges.find((e) => e.id === 'safe')!.className).toBe('edge-dead');
    expect(o.edges.find((e) => e.id === 'yes')!.className).toBe('edge-pending edge-flowing');
    expect(o.edges.some((e) => 'animated' in e)).toBe(false);
    const cancelled = overlayRun(c, [nodeRun('start', 'Succeeded'), nodeRun('check', 'Cancelled')]);
    expect(cancelled.edges.find((e) => e.id === 'risky')!.data.state).toBe('dead');
  });

  it('marks the selected node or edge and never changes the cached canvas', () => {
    const c = graphToCanvas(graph());
    const snapshot = JSON.stringify(c.nodes);
    const o = overlayRun(c, [nodeRun('review', 'WaitingForApproval')], { nodeKey: 'review', edgeKey: 'yes' });
    expect(o.nodes.filter((n) => n.selected).map((n) => n.id)).toEqual(['review']);
    expect(o.edges.filter((e) => e.selected).map((e) => e.id)).toEqual(['yes']);
    o.nodes[0]!.position.x = -1;
    expect(JSON.stringify(c.nodes)).toBe(snapshot);
  });
});

describe('the run graph’s first view', () => {
  it('shows a whole graph when it is legible so, enlarging a small one a little, and a wide one at a legible zoom', () => {
    expect(initialZoom(400, 1100)).toBe(1.15);
    const canonical = initialZoom(2024, 1120);
    expect(canonical).toBeGreaterThanOrEqual(MIN_FIT_ZOOM);
    expect(canonical).toBeCloseTo(1120 / (2024 + 64), 5);
    expect(initialZoom(5500, 1120)).toBe(LEGIBLE_ZOOM);
  });

  it('sizes the box to the graph’s height at that zoom, within bounds: no empty bands', () => {
    expect(graphBoxHeight(146, 0.54)).toBe(Math.round(Math.max(180, 146 * 0.54 + 64)));
    expect(graphBoxHeight(400, 1)).toBe(464);
    expect(graphBoxHeight(5000, 1)).toBe(560);
  });

  it('starts centred on the whole graph when it fits, else at the legible zoom on the focused node', () => {
    const node = (id: string, x: number, y: number) => ({ id, position: { x, y } });
    // fits: the whole graph's middle is the box's middle
    const small = { width: 400, nodes: [node('a', 0, 0), node('b', 232, 100)] };
    const v = initialViewport(small, 1100, 300, undefined);
    expect(v.zoom).toBe(1.15);
    expect(v.x + (0 + 400 / 2) * v.zoom).toBeCloseTo(1100 / 2, 5);
    expect(v.y + ((0 + 100 + 60) / 2) * v.zoom).toBeCloseTo(300 / 2, 5);
    // too wide: the focused node's middle is the box's middle, whichever is focused
    const wide = { width: 5500, nodes: [node('start', 0, 0), node('mid', 2600, 40), node('end', 5332, 0)] };
    for (const [focus, x] of [['mid', 2600], ['end', 5332], [undefined, 0], ['gone', 0]] as const) {
      const w = initialViewport(wide, 1120, 400, focus);
      expect(w.zoom).toBe(LEGIBLE_ZOOM);
      expect(w.x + (x + 84) * w.zoom).toBeCloseTo(1120 / 2, 5);
    }
    expect(initialViewport({ width: 0, nodes: [] }, 800, 200, undefined)).toEqual({ x: 0, y: 0, zoom: initialZoom(0, 800) });
  });
});
