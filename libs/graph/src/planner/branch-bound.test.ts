import { describe, expect, it } from 'vitest';
import { edge, graphOf, node, ok, rowOf, snapshotOf, step, withResult, failed } from './test-kit';
import type { RunSnapshot } from './types';

/** start → par (maxConcurrency) → b1..b5 (Tool) → join → end */
function bounded(max: number | null, branches = 5) {
  const keys = Array.from({ length: branches }, (_, i) => `b${i + 1}`);
  const nodes = [
    node('start', 'Start'),
    node('par', 'Parallel', { config: max === null ? {} : { maxConcurrency: max } }),
    ...keys.map((k) => node(k, 'Tool', { config: { toolName: 'echo' } })),
    node('join', 'Join'),
    node('end', 'End'),
  ];
  const edges = [
    edge('e0', 'start', 'par'),
    ...keys.flatMap((k) => [edge(`in-${k}`, 'par', k), edge(`out-${k}`, k, 'join')]),
    edge('ej', 'join', 'end'),
  ];
  return { graph: graphOf(nodes, edges), keys };
}

const working = (s: RunSnapshot, keys: string[]) => keys.filter((k) => ['Queued', 'Running', 'WaitingForApproval'].includes(rowOf(s, k).status));

describe('Parallel maxConcurrency', () => {
  it('starts at most maxConcurrency branches, then the next in document order as each settles', () => {
    const { graph, keys } = bounded(2);
    let s = step(snapshotOf(graph), 1_000).snap;
    expect(working(s, keys)).toEqual(['b1', 'b2']);
    expect(rowOf(s, 'b3').status).toBe('Pending');
    s = step(withResult(s, 'b2', ok({ result: 2 })), 2_000).snap;
    expect(working(s, keys)).toEqual(['b1', 'b3']);
    let now = 3_000;
    let most = 0;
    while (s.run.status === 'Running') {
      const live = working(s, keys);
      most = Math.max(most, live.length);
      s = step(withResult(s, live[0]!, ok({ result: live[0]! })), now++).snap;
    }
    expect(most).toBe(2);
    expect(s.run.status).toBe('Completed');
    expect(keys.every((k) => rowOf(s, k).status === 'Succeeded')).toBe(true);
  });

  it('counts a branch first node waiting on a person as working', () => {
    const graph = graphOf(
      [
        node('start', 'Start'),
        node('par', 'Parallel', { config: { maxConcurrency: 1 } }),
        node('gate', 'Pause', { config: { prompt: 'ok?', allowedDecisions: ['Approve'] } }),
        node('tool', 'Tool', { config: { toolName: 'echo' } }),
        node('end', 'End', { joinPolicy: 'Any' }),
      ],
      [edge('e0', 'start', 'par'), edge('e1', 'par', 'gate'), edge('e2', 'par', 'tool'), edge('e3', 'gate', 'end'), edge('e4', 'tool', 'end')],
    );
    const s = step(snapshotOf(graph), 1_000).snap;
    expect(rowOf(s, 'gate').status).toBe('WaitingForApproval');
    expect(rowOf(s, 'tool').status).toBe('Pending');
    expect(s.run.status).toBe('WaitingForApproval');
  });

  it('frees the place of a branch that goes back to Pending to retry after a backoff', () => {
    const { graph, keys } = bounded(1, 2);
    let s = step(snapshotOf(graph), 1_000).snap;
    expect(working(s, keys)).toEqual(['b1']);
    s = step(withResult(s, 'b1', failed('NodeFailed')), 2_000).snap;
    expect(rowOf(s, 'b1').status).toBe('Pending');
    expect(working(s, keys)).toEqual(['b2']);
  });

  it('without maxConcurrency starts every branch at once', () => {
    const { graph, keys } = bounded(null);
    const s = step(snapshotOf(graph), 1_000).snap;
    expect(working(s, keys)).toEqual(keys);
  });
});
