/**
 * Run control through a real cluster (API, dispatchers, tool worker): an End with `stopRun`
 * completes the run while a long `wait` branch still works (that branch is cancelled, cause
 * RunCompleted); `Parallel.maxConcurrency` bounds the branches working at once (judged exactly
 * from the event log); a Subworkflow's `stateIn` seeds the child's state and its `stateOut`
 * writes the child's final state through the parent's reducers.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { nodeOf, startE2eCluster, type E2eCluster } from '@flowline/testing';

interface EventRow {
  seq: number;
  kind: string;
  nodeKey: string | null;
  detail?: Record<string, unknown>;
}

/** The most of `keys` working at once, replaying the event log: queued → settled. */
function mostWorkingAtOnce(events: EventRow[], keys: readonly string[]): number {
  const working = new Set<string>();
  let most = 0;
  for (const e of [...events].sort((a, b) => a.seq - b.seq)) {
    if (e.nodeKey === null || !keys.includes(e.nodeKey)) continue;
    if (e.kind === 'node.queued') working.add(e.nodeKey);
    if (['node.completed', 'node.failed', 'node.cancelled', 'node.retried'].includes(e.kind)) working.delete(e.nodeKey);
    most = Math.max(most, working.size);
  }
  return most;
}

describe('run control through the cluster', () => {
  let c: E2eCluster;

  beforeAll(async () => {
    c = await startE2eCluster({ dispatchers: 2, toolWorkers: 1 });
  }, 90_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') process.stdout.write(`${c.lines.slice(-60).join('\n')}\n`);
  });

  afterAll(async () => {
    await c?.close();
  });

  it('an End with stopRun completes the run at once and drains the long wait branch with cause RunCompleted', async () => {
    const definitionId = await c.api.createDefinition('stop-run', {
      nodes: [
        { key: 'start', kind: 'Start' },
        { key: 'par', kind: 'Parallel' },
        { key: 'slow', kind: 'Tool', timeoutSeconds: 600, config: { toolName: 'wait', arguments: { ms: 120_000 } } },
        { key: 'endSlow', kind: 'End', config: { outcome: 'slow' } },
        { key: 'fast', kind: 'Tool', config: { toolName: 'echo', argumentBindings: { said: 'run.input.say' } } },
        { key: 'stop', kind: 'End', config: { outcome: 'stopped', resultPath: 'input.output.result', stopRun: true } },
      ],
      edges: [
        { key: 'e1', from: 'start', to: 'par' },
        { key: 'e2', from: 'par', to: 'slow' },
        { key: 'e3', from: 'slow', to: 'endSlow' },
        { key: 'e4', from: 'par', to: 'fast' },
        { key: 'e5', from: 'fast', to: 'stop' },
      ],
    });
    const began = Date.now();
    const runId = await c.api.startRun(definitionId, { say: 'enough' });
    const view = await c.api.waitForRun(runId, (v) => v.run.status === 'Completed', 30_000, 'the stopRun End completes the run');
    expect(Date.now() - began).toBeLessThan(60_000);
    expect(view.output).toEqual({ outcome: 'stopped', result: { said: 'enough' } });
    expect(nodeOf(view, 'slow')).toMatchObject({ status: 'Cancelled', failureClass: 'Cancelled' });
    expect(nodeOf(view, 'endSlow')?.status).toBe('Pending');
    const events = (await c.api.events(runId)) as EventRow[];
    const cancelled = events.find((e) => e.kind === 'node.cancelled' && e.nodeKey === 'slow');
    expect(cancelled?.detail).toMatchObject({ cause: 'RunCompleted' });
    expect(events.at(-1)).toMatchObject({ kind: 'run.completed', detail: { endKey: 'stop', stopRun: true } });
    const row = await c.db.pool.query<{ cause: string }>('SELECT cause FROM node_runs WHERE run_id = $1 AND node_key = $2', [runId, 'slow']);
    expect(row.rows[0]?.cause).toBe('RunCompleted');
  });

  it('Parallel maxConcurrency 2 never has more than 2 of its 6 branches working, and all of them run', async () => {
    const branches = ['b1', 'b2', 'b3', 'b4', 'b5', 'b6'];
    const definitionId = await c.api.createDefinition('bounded-fan-out', {
      nodes: [
        { key: 'start', kind: 'Start' },
        { key: 'par', kind: 'Parallel', config: { maxConcurrency: 2 } },
        ...branches.map((key) => ({ key, kind: 'Tool', config: { toolName: 'wait', arguments: { ms: 300 } } })),
        { key: 'join', kind: 'Join' },
        { key: 'end', kind: 'End', config: { outcome: 'done' } },
      ],
      edges: [
        { key: 'e0', from: 'start', to: 'par' },
        ...branches.flatMap((key) => [
          { key: `in-${key}`, from: 'par', to: key },
          { key: `out-${key}`, from: key, to: 'join' },
        ]),
        { key: 'ej', from: 'join', to: 'end' },
      ],
    });
    const runId = await c.api.startRun(definitionId, {});
    const view = await c.api.waitForRun(runId, (v) => v.run.status === 'Completed', 60_000, 'the bounded fan-out completes');
    for (const key of branches) expect(nodeOf(view, key)?.status).toBe('Succeeded');
    const events = (await c.api.events(runId)) as EventRow[];
    expect(mostWorkingAtOnce(events, branches)).toBe(2);
  });

  it("a Subworkflow's stateIn seeds the child's state and its stateOut writes the child's final state through the parent's reducers", async () => {
    const childId = await c.api.createDefinition('child-with-state', {
      state: {},
      nodes: [
        { key: 'start', kind: 'Start' },
        { key: 'look', kind: 'Tool', config: { toolName: 'echo', argumentBindings: { subject: 'state.subject' } }, writes: { found: 'output.result.subject' } },
        { key: 'end', kind: 'End', config: { outcome: 'done' } },
      ],
      edges: [
        { key: 'e1', from: 'start', to: 'look' },
        { key: 'e2', from: 'look', to: 'end' },
      ],
    });
    const parentId = await c.api.createDefinition('parent-with-state', {
      state: { reducers: { findings: 'append' }, initial: { findings: ['first'] } },
      nodes: [
        { key: 'start', kind: 'Start', writes: { topic: 'output.input.topic' } },
        { key: 'sub', kind: 'Subworkflow', config: { definitionId: childId, stateIn: { subject: 'state.topic' }, stateOut: { findings: 'found' } } },
        { key: 'end', kind: 'End', config: { outcome: 'done', resultPath: 'state' } },
      ],
      edges: [
        { key: 'e1', from: 'start', to: 'sub' },
        { key: 'e2', from: 'sub', to: 'end' },
      ],
    });
    const runId = await c.api.startRun(parentId, { topic: 'tides' });
    const view = await c.api.waitForRun(runId, (v) => ['Completed', 'Failed'].includes(v.run.status), 30_000, 'the parent ends');
    expect(view.run.status).toBe('Completed');
    expect(view.output).toEqual({ outcome: 'done', result: { topic: 'tides', findings: ['first', 'tides'] } });
    const childRunId = (await c.db.pool.query<{ id: string }>('SELECT id FROM runs WHERE parent_run_id = $1', [runId])).rows[0]!.id;
    expect((await c.api.client.runs.state(childRunId, {})).state).toEqual({ subject: 'tides', found: 'tides' });
    expect((await c.api.client.runs.state(runId, {})).state).toEqual({ topic: 'tides', findings: ['first', 'tides'] });
  });
});
