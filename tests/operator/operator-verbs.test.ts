/**
 * Operator verbs applied for real: the API records them, the dispatchers apply them, the
 * tool worker runs the work (whole cluster as processes; real Postgres and Redis).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { nodeOf, startE2eCluster, type E2eCluster } from '@flowline/testing';

let c: E2eCluster;
beforeAll(async () => {
  c = await startE2eCluster({ dispatchers: 2, toolWorkers: 1 });
}, 120_000);
afterEach((ctx) => {
  if (ctx.task.result?.state === 'fail') process.stdout.write(`${c.lines.slice(-60).join('\n')}\n`);
});
afterAll(async () => {
  await c?.close();
});


/** Start → `slow` (wait ms) → `b` (echo) → End. */
function chain(ms: number) {
  return {
    nodes: [
      { key: 'start', kind: 'Start' },
      { key: 'slow', kind: 'Tool', config: { toolName: 'wait', arguments: { ms } } },
      { key: 'b', kind: 'Tool', config: { toolName: 'echo', arguments: { b: true } } },
      { key: 'end', kind: 'End', config: { outcome: 'done' } },
    ],
    edges: [
      { key: 'e1', from: 'start', to: 'slow' },
      { key: 'e2', from: 'slow', to: 'b' },
      { key: 'e3', from: 'b', to: 'end' },
    ],
  };
}

async function runningSlow(ms: number): Promise<string> {
  const defId = await c.api.createDefinition('chain', chain(ms));
  const runId = await c.api.startRun(defId, {});
  await c.api.waitForRun(runId, (v) => ['Queued', 'Running'].includes(nodeOf(v, 'slow')?.status ?? ''), 30_000, 'slow in flight');
  return runId;
}

describe('operator verbs applied by the dispatcher', () => {
  it('skip: a Pending node is declared not taken by the operator and the run completes through its End', async () => {
    const runId = await runningSlow(1500);
    expect((await c.api.send('POST', `/v1/runs/${runId}/nodes/b/skip`)).status).toBe(202);
    const end = await c.api.waitForRun(runId, (v) => v.run.status === 'Completed', 30_000, 'run completed');
    expect(nodeOf(end, 'b')).toMatchObject({ status: 'Skipped', reason: 'skipped by operator' });
    expect(nodeOf(end, 'end')?.status).toBe('Succeeded');
    expect(nodeOf(end, 'slow')?.status).toBe('Succeeded');
    expect((await c.api.send('POST', `/v1/runs/${runId}/nodes/b/skip`)).status).toBe(202);
    expect((await c.api.send('POST', `/v1/runs/${runId}/nodes/slow/skip`)).status).toBe(409);
  }, 60_000);

  it('complete: a Running node settles with the operator output, its work is cancelled and the run completes', async () => {
    const runId = await runningSlow(60_000);
    await c.api.waitForRun(runId, (v) => nodeOf(v, 'slow')?.status === 'Running', 30_000, 'slow running');
    expect((await c.api.send('POST', `/v1/runs/${runId}/nodes/slow/complete`, { output: { by: 'operator' } })).status).toBe(202);
    const done = await c.api.waitForRun(runId, (v) => v.run.status === 'Completed', 30_000, 'run completed');
    expect(nodeOf(done, 'slow')?.status).toBe('Succeeded');
    const slow = await c.api.send('GET', `/v1/runs/${runId}/nodes/slow`);
    expect(slow.body.output.output).toEqual({ by: 'operator' });
    const kinds = (await c.api.events(runId)).filter((e) => e.nodeKey === 'slow').map((e) => e.kind);
    expect(kinds).toContain('node.overridden');
    expect((await c.api.send('POST', `/v1/runs/${runId}/nodes/slow/complete`, { output: {} })).status).toBe(409);
  }, 60_000);

  it('retry: a failed run reopens, the node gets more attempts and what its failure cancelled runs again', async () => {
    const defId = await c.api.createDefinition('fail', {
      nodes: [
        { key: 'start', kind: 'Start' },
        { key: 'f', kind: 'Tool', maxAttempts: 1, config: { toolName: 'test_fail', arguments: { untilAttempt: 2 } } },
        { key: 'slow', kind: 'Tool', config: { toolName: 'wait', arguments: { ms: 5000 } } },
        { key: 'end', kind: 'End', config: { outcome: 'done' } },
      ],
      edges: [
        { key: 'e1', from: 'start', to: 'f' },
        { key: 'e2', from: 'start', to: 'slow' },
        { key: 'e3', from: 'f', to: 'end' },
        { key: 'e4', from: 'slow', to: 'end' },
      ],
    });
    const runId = await c.api.startRun(defId, {});
    const failed = await c.api.waitForRun(runId, (v) => v.run.status === 'Failed', 30_000, 'run failed');
    expect(nodeOf(failed, 'f')?.status).toBe('Failed');
    await c.api.waitForRun(runId, (v) => nodeOf(v, 'slow')?.status === 'Cancelled', 30_000, 'slow cancelled by the failure');
    expect((await c.api.send('POST', `/v1/runs/${runId}/nodes/f/retry`)).status).toBe(202);
    const done = await c.api.waitForRun(runId, (v) => v.run.status === 'Completed', 40_000, 'run completed after retry');
    expect(nodeOf(done, 'f')).toMatchObject({ status: 'Succeeded', attempt: 2 });
    expect(nodeOf(done, 'slow')?.status).toBe('Succeeded');
    const kinds = (await c.api.events(runId)).map((e) => e.kind);
    expect(kinds.indexOf('run.failed')).toBeLessThan(kinds.indexOf('run.resumed'));
    expect((await c.api.send('POST', `/v1/runs/${runId}/nodes/f/retry`)).status).toBe(409);
  }, 90_000);

  it('breakpoint: an eligible node waits at its breakpoint until a node step admits it', async () => {
    const runId = await runningSlow(1000);
    expect((await c.api.send('PUT', `/v1/runs/${runId}/breakpoints`, { nodeKeys: ['b'] })).status).toBe(200);
    await c.api.waitForRun(runId, (v) => nodeOf(v, 'slow')?.status === 'Succeeded', 30_000, 'slow done');
    // the dispatcher has planned past slow's result: b is eligible yet still Pending
    const held = await c.api.waitForRun(runId, (v) => v.run.status === 'Running', 30_000, 'run running');
    expect(nodeOf(held, 'b')?.status).toBe('Pending');
    expect((await c.api.send('POST', `/v1/runs/${runId}/pause`)).status).toBe(202);
    const step = await c.api.send('POST', `/v1/runs/${runId}/step`, { mode: 'node', nodeKey: 'b' });
    expect(step.status).toBe(202);
    await c.api.waitForRun(runId, (v) => nodeOf(v, 'b')?.status === 'Succeeded', 30_000, 'b stepped');
    const paused = await c.api.getRun(runId);
    expect(nodeOf(paused, 'end')?.status).toBe('Pending');
    expect((await c.api.send('PUT', `/v1/runs/${runId}/breakpoints`, { nodeKeys: [] })).status).toBe(200);
    expect((await c.api.send('POST', `/v1/runs/${runId}/resume`)).status).toBe(202);
    await c.api.waitForRun(runId, (v) => v.run.status === 'Completed', 30_000, 'run completed');
  }, 60_000);

  it('edge override false: the target is skipped when its source succeeds', async () => {
    const runId = await runningSlow(1000);
    const r = await c.api.send('PUT', `/v1/runs/${runId}/edges/e2/override`, { verdict: false });
    expect(r.status).toBe(200);
    const end = await c.api.waitForRun(runId, (v) => v.run.status === 'Cancelled', 30_000, 'run ended');
    expect(nodeOf(end, 'slow')?.status).toBe('Succeeded');
    expect(nodeOf(end, 'b')?.status).toBe('Skipped');
    expect(nodeOf(end, 'b')?.reason).toMatch(/overridden to false/);
    const ev = (await c.api.events(runId)).filter((e) => e.kind === 'node.overridden');
    expect(ev).toHaveLength(1);
  }, 60_000);

  it('cancel: a parent reads Cancelling until its child run is cancelled, and ends after it', async () => {
    const childDef = await c.api.createDefinition('child', chain(60_000));
    const parentDef = await c.api.createDefinition('parent', {
      nodes: [
        { key: 'start', kind: 'Start' },
        { key: 'sub', kind: 'Subworkflow', config: { definitionId: childDef } },
        { key: 'end', kind: 'End', config: { outcome: 'done' } },
      ],
      edges: [
        { key: 'e1', from: 'start', to: 'sub' },
        { key: 'e2', from: 'sub', to: 'end' },
      ],
    });
    const runId = await c.api.startRun(parentDef, {});
    const running = await c.api.waitForRun(runId, (v) => nodeOf(v, 'sub')?.status === 'Running', 30_000, 'sub running');
    const childId = (running.nodeRuns.find((n) => n.nodeKey === 'sub') as { childRunId?: string }).childRunId!;
    await c.api.waitForRun(childId, (v) => nodeOf(v, 'slow')?.status === 'Running', 30_000, 'child work running');
    expect((await c.api.send('POST', `/v1/runs/${runId}/cancel`, {})).status).toBe(202);
    expect((await c.api.getRun(runId)).run.status).toMatch(/^(Cancelling|Cancelled)$/);
    expect((await c.api.send('POST', `/v1/runs/${runId}/cancel`, {})).status).toBe(202);
    const parent = await c.api.waitForRun(runId, (v) => v.run.status === 'Cancelled', 30_000, 'parent cancelled');
    const child = await c.api.getRun(childId);
    expect(child.run.status).toBe('Cancelled');
    expect(nodeOf(child, 'slow')?.status).toBe('Cancelled');
    expect(nodeOf(parent, 'sub')?.status).toBe('Cancelled');
    const finished = (v: unknown) => Date.parse((v as { run: { finishedAt: string } }).run.finishedAt);
    expect(finished(child)).toBeLessThanOrEqual(finished(parent));
    const kinds = (await c.api.events(runId)).map((e) => e.kind);
    expect(kinds.at(-1)).toBe('run.cancelled');
  }, 60_000);
});
