import { describe, expect, it } from 'vitest';
import { edge, graphOf, node, ok, rowOf, snapshotOf, step, withResult } from './test-kit';
import type { Graph } from '../model';

/** start → par → { slow (Tool) → endSlow, fast (Tool) → stop (End, stopRun) }, and a gate branch. */
function fanOut(extra: { stopConfig?: Record<string, unknown>; gate?: boolean; outputSchema?: Graph['outputSchema'] } = {}): Graph {
  const nodes = [
    node('start', 'Start'),
    node('par', 'Parallel'),
    node('slow', 'Tool', { config: { toolName: 'wait', arguments: { ms: 60_000 } } }),
    node('endSlow', 'End', { config: { outcome: 'slow' } }),
    node('fast', 'Tool', { config: { toolName: 'echo' } }),
    node('stop', 'End', { config: { outcome: 'stopped', resultPath: 'input.output', stopRun: true, ...extra.stopConfig } }),
  ];
  const edges = [
    edge('e1', 'start', 'par'),
    edge('e2', 'par', 'slow'),
    edge('e3', 'slow', 'endSlow'),
    edge('e4', 'par', 'fast'),
    edge('e5', 'fast', 'stop'),
  ];
  if (extra.gate) {
    nodes.push(node('gate', 'Pause', { config: { prompt: 'ok?', allowedDecisions: ['Approve'] } }), node('endGate', 'End'));
    edges.push(edge('e6', 'par', 'gate'), edge('e7', 'gate', 'endGate'));
  }
  return { ...graphOf(nodes, edges), outputSchema: extra.outputSchema ?? null };
}

describe('an End with stopRun', () => {
  it('completes the run the moment it succeeds, with its output, and cancels the other live work with cause RunCompleted', () => {
    let s = step(snapshotOf(fanOut({ gate: true })), 1_000).snap;
    expect(rowOf(s, 'slow').status).toBe('Queued');
    expect(rowOf(s, 'gate').status).toBe('WaitingForApproval');
    const slowInvocation = rowOf(s, 'slow').invocationId;
    const r = step(withResult(s, 'fast', ok({ result: { n: 7 } })), 2_000);
    s = r.snap;
    expect(s.run.status).toBe('Completed');
    expect(r.result.run?.set.output).toEqual({ outcome: 'stopped', result: { result: { n: 7 } } });
    for (const key of ['slow', 'gate']) {
      expect(rowOf(s, key)).toMatchObject({ status: 'Cancelled', cause: 'RunCompleted', failureClass: 'Cancelled' });
    }
    // the slow branch's worker is told to stop; what was never reached stays Pending
    expect(r.result.cancel).toEqual([{ nodeKey: 'slow', invocationId: slowInvocation, reason: "run completed at End 'stop' (stopRun)" }]);
    expect(rowOf(s, 'endSlow').status).toBe('Pending');
    expect(rowOf(s, 'endGate').status).toBe('Pending');
    const kinds = r.result.events.map((e) => `${e.kind}:${e.nodeKey ?? ''}`);
    expect(kinds.slice(-1)).toEqual(['run.completed:']);
    expect(r.result.events.at(-1)?.detail).toEqual({ endKey: 'stop', stopRun: true });
    expect(r.result.events.filter((e) => e.kind === 'node.cancelled').map((e) => e.detail['cause'])).toEqual(['RunCompleted', 'RunCompleted']);
  });

  it('ignores the late result of the work it cancelled', () => {
    let s = step(snapshotOf(fanOut()), 1_000).snap;
    s = step(withResult(s, 'fast', ok({ result: 1 })), 2_000).snap;
    const late = step(withResult(s, 'slow', ok({ result: 'late' })), 3_000);
    expect(late.snap.run.status).toBe('Completed');
    expect(rowOf(late.snap, 'slow').status).toBe('Cancelled');
    expect(late.result.events).toEqual([]);
  });

  it('without stopRun, the run waits for the other branch and completes at the first End that succeeded', () => {
    let s = step(snapshotOf(fanOut({ stopConfig: { stopRun: false } })), 1_000).snap;
    s = step(withResult(s, 'fast', ok({ result: 1 })), 2_000).snap;
    expect(s.run.status).toBe('Running');
    expect(rowOf(s, 'slow').status).toBe('Queued');
    s = step(withResult(s, 'slow', ok({ result: 2 })), 3_000).snap;
    expect(s.run.status).toBe('Completed');
  });

  it('fails the run ValidationFailed (live work cancelled, cause RunFailure) when its output misses the graph outputSchema', () => {
    let s = step(snapshotOf(fanOut({ outputSchema: { type: 'object', required: ['nope'] } })), 1_000).snap;
    s = step(withResult(s, 'fast', ok({ result: 1 })), 2_000).snap;
    expect(s.run.status).toBe('Failed');
    expect(s.run.failureClass).toBe('ValidationFailed');
    expect(rowOf(s, 'slow')).toMatchObject({ status: 'Cancelled', cause: 'RunFailure' });
  });

  it('that fails (its template cannot render) does not stop the run', () => {
    const g = fanOut({ stopConfig: { resultPath: undefined, outputTemplate: '{{ upstream.nope.output }}' } });
    delete (g.nodes.find((n) => n.key === 'stop')!.config as Record<string, unknown>)['resultPath'];
    let s = step(snapshotOf(g), 1_000).snap;
    s = step(withResult(s, 'fast', ok({ result: 1 })), 2_000).snap;
    expect(rowOf(s, 'stop').status).toBe('Failed');
    expect(s.run.status).toBe('Failed');
    expect(rowOf(s, 'slow').cause).toBe('RunFailure');
  });
});
