import { describe, expect, it } from 'vitest';
import type { GraphNode, Json, RunStatus } from '../model';
import { edge, graphOf, node, rowOf, snapshotOf, step } from './test-kit';
import type { ChildRunState, RunSnapshot } from './types';

/** start → map (Map over run.input.items) → end (result: the Map's output). */
function mapGraph(config: Record<string, Json> = {}, extra: Partial<GraphNode> = {}) {
  return graphOf(
    [
      node('start', 'Start'),
      node('map', 'Map', { config: { definitionId: 'def-item', items: 'run.input.items', ...config }, ...extra }),
      node('end', 'End', { config: { outcome: 'done', resultPath: 'input.output' } }),
    ],
    [edge('e1', 'start', 'map'), edge('e2', 'map', 'end')],
  );
}

const items = (n: number) => Array.from({ length: n }, (_, i) => `item-${i}`);

/** The snapshot with the children the Map keeps working ended as `end` says (by item), the others still Running. */
function childrenEnd(snap: RunSnapshot, end: (index: number) => RunStatus | null): RunSnapshot {
  const live = rowOf(snap, 'map').map?.live ?? [];
  const children: ChildRunState[] = live.map(({ childRunId, index }) => {
    const status = end(index) ?? 'Running';
    return {
      childRunId,
      nodeKey: 'map',
      status,
      output: status === 'Completed' ? { outcome: 'ok', result: index } : null,
      failureClass: status === 'Failed' ? 'NodeFailed' : 'None',
      reason: status === 'Failed' ? 'boom' : null,
    };
  });
  return { ...snap, children };
}

describe('Map', () => {
  it('starts at most maxConcurrency children, each fed its item, and keeps only those on its row', () => {
    const r = step(snapshotOf(mapGraph({ maxConcurrency: 3 }), { items: items(10) }), 1_000);
    expect(r.result.startChildren.map((c) => c.input)).toEqual(['item-0', 'item-1', 'item-2']);
    expect(r.result.startChildren.every((c) => c.definitionId === 'def-item' && c.nodeKey === 'map')).toBe(true);
    const row = rowOf(r.snap, 'map');
    expect(row).toMatchObject({ status: 'Running', attempt: 1 });
    expect(row.map).toMatchObject({ total: 10, next: 3, failed: 0 });
    expect(row.map!.live.map((l) => l.index)).toEqual([0, 1, 2]);
    expect(r.result.events.find((e) => e.nodeKey === 'map' && e.kind === 'node.started')?.detail).toEqual({ attempt: 1, items: 10 });
  });

  it('never has more than maxConcurrency working, and completes with every result in item order whatever order children end in', () => {
    let s = step(snapshotOf(mapGraph({ maxConcurrency: 4 }), { items: items(25) }), 1_000).snap;
    let now = 2_000;
    let most = 0;
    let round = 0;
    while (s.run.status === 'Running') {
      const live = rowOf(s, 'map').map!.live;
      most = Math.max(most, live.length);
      // the newest child ends first, and only every other round two end at once
      const ending = new Set(live.slice(-(round++ % 2 === 0 ? 1 : 2)).map((l) => l.index));
      s = step(childrenEnd(s, (i) => (ending.has(i) ? 'Completed' : null)), now++).snap;
    }
    expect(most).toBe(4);
    expect(s.run.status).toBe('Completed');
    const out = rowOf(s, 'map').output!.output as { results: Json[]; succeeded: number; failed: number };
    expect(out.results).toEqual(Array.from({ length: 25 }, (_, i) => ({ outcome: 'ok', result: i })));
    expect(out).toMatchObject({ succeeded: 25, failed: 0 });
    expect(rowOf(s, 'map').map).toBeNull();
  });

  it('caps maxConcurrency by MAP_MAX_CONCURRENCY', () => {
    const r = step(snapshotOf(mapGraph({ maxConcurrency: 50 }), { items: items(100) }), 1_000, { mapMaxConcurrency: 5 });
    expect(r.result.startChildren).toHaveLength(5);
  });

  it('succeeds at once over an empty array', () => {
    const s = step(snapshotOf(mapGraph(), { items: [] }), 1_000).snap;
    expect(s.run.status).toBe('Completed');
    expect(rowOf(s, 'map').output?.output).toEqual({ results: [], succeeded: 0, failed: 0, errors: [] });
  });

  it('fails ValidationFailed when items is not an array, resolves to nothing or is over MAP_MAX_ITEMS', () => {
    for (const [input, options, reason] of [
      [{ items: 'x' }, {}, "items 'run.input.items' is not an array"],
      [{}, {}, "items 'run.input.items' resolves to nothing"],
      [{ items: items(4) }, { mapMaxItems: 3 }, 'holds 4 items, over MAP_MAX_ITEMS (3)'],
    ] as const) {
      const r = step(snapshotOf(mapGraph(), input), 1_000, options);
      expect(rowOf(r.snap, 'map')).toMatchObject({ status: 'Failed', failureClass: 'ValidationFailed' });
      expect(rowOf(r.snap, 'map').reason).toContain(reason);
      expect(r.result.startChildren).toEqual([]);
    }
  });

  it('tolerates toleratedFailures failed items (null in their slot, listed in errors)', () => {
    let s = step(snapshotOf(mapGraph({ maxConcurrency: 4, toleratedFailures: 1 }), { items: items(4) }), 1_000).snap;
    s = step(childrenEnd(s, (i) => (i === 2 ? 'Failed' : 'Completed')), 2_000).snap;
    expect(s.run.status).toBe('Completed');
    const out = rowOf(s, 'map').output!.output as { results: Json[]; failed: number; errors: { index: number }[] };
    expect(out.results).toEqual([{ outcome: 'ok', result: 0 }, { outcome: 'ok', result: 1 }, null, { outcome: 'ok', result: 3 }]);
    expect(out.failed).toBe(1);
    expect(out.errors.map((e) => e.index)).toEqual([2]);
  });

  it('fails (NodeFailed, its one attempt spent: AttemptsExhausted) one failure past the tolerance and cancels the children still working', () => {
    let s = step(snapshotOf(mapGraph({ maxConcurrency: 4, toleratedFailurePercent: 25 }), { items: items(8) }), 1_000).snap;
    const live = rowOf(s, 'map').map!.live;
    const r = step(childrenEnd(s, (i) => (i === 0 || i === 1 ? 'Failed' : null)), 2_000);
    s = r.snap;
    expect(s.run.status).toBe('Running'); // 2 of 8 failed = 25%: tolerated, two more started
    expect(rowOf(s, 'map').status).toBe('Running');
    const r2 = step(childrenEnd(s, (i) => (i === 2 ? 'Failed' : null)), 3_000);
    expect(rowOf(r2.snap, 'map')).toMatchObject({ status: 'Failed', failureClass: 'AttemptsExhausted' });
    expect(rowOf(r2.snap, 'map').reason).toContain('3 of 8 items failed, over the 2 tolerated');
    const stillWorking = rowOf(s, 'map').map!.live.filter((l) => l.index !== 2).map((l) => l.childRunId);
    expect(r2.result.cancelChildren.sort()).toEqual(stillWorking.sort());
    expect(live).toHaveLength(4);
  });

  it('cancels its children first on a run cancel and reads Cancelled once they ended', () => {
    let s = step(snapshotOf(mapGraph({ maxConcurrency: 2 }), { items: items(5) }), 1_000).snap;
    const ids = rowOf(s, 'map').map!.live.map((l) => l.childRunId);
    const r = step({ ...childrenEnd(s, () => null), intents: [{ id: 'c1', kind: 'cancel', reason: null }] }, 2_000);
    expect(r.result.cancelChildren.sort()).toEqual([...ids].sort());
    expect(rowOf(r.snap, 'map').status).toBe('Running');
    s = step(childrenEnd(r.snap, () => 'Cancelled'), 3_000).snap;
    expect(rowOf(s, 'map')).toMatchObject({ status: 'Cancelled', cause: 'RunCancel' });
    expect(s.run.status).toBe('Cancelled');
  });

  it('applies its own writes to its output through the run reducers', () => {
    const g = mapGraph({ maxConcurrency: 2 }, { writes: { pages: 'output.results' } });
    g.state = { schema: null, reducers: {}, initial: {} };
    const s = step(snapshotOf(g, { items: items(2) }), 1_000).snap;
    const r = step(childrenEnd(s, () => 'Completed'), 2_000);
    expect(rowOf(r.snap, 'map').status).toBe('Succeeded');
    expect(r.result.stateWrites).toEqual([{ seq: expect.any(Number), nodeKey: 'map', writes: { pages: [{ outcome: 'ok', result: 0 }, { outcome: 'ok', result: 1 }] } }]);
  });

  it('fails OutputTooLarge as soon as the gathered results cannot fit an output', () => {
    const cap = { maxOutputJsonBytes: 150 };
    let s = step(snapshotOf(mapGraph({ maxConcurrency: 2 }), { items: [1, 2, 3, 4, 5, 6, 7, 8] }), 1_000, cap).snap;
    let now = 2_000;
    let rounds = 0;
    while (rowOf(s, 'map').status === 'Running') {
      s = step(childrenEnd(s, () => 'Completed'), now++, cap).snap;
      rounds++;
    }
    expect(rowOf(s, 'map')).toMatchObject({ status: 'Failed', failureClass: 'OutputTooLarge' });
    expect(rounds).toBeLessThan(4);
  });
});
