/**
 * Operator skip on a whole cluster (API, dispatchers, tool worker as processes; real Postgres
 * and Redis), black box through the REST API: `skip {}` declares a node not taken and its
 * dependents proceed; `skip {prune: true}` keeps the pruning meaning; a gate waiting on a
 * person can be skipped and its request is withdrawn.
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

/**
 * Start → `gate` (Pause) → `b` (echo) → `after` (echo, binding its input: b's envelope) → `end` (its result: that
 * envelope), and b → `ran` → `end2` only when b succeeded (a condition on b's envelope).
 */
const gated = {
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 'gate', kind: 'Pause', config: { prompt: 'Go on?', allowedDecisions: ['Approve'] } },
    { key: 'b', kind: 'Tool', config: { toolName: 'echo', arguments: { b: true } } },
    { key: 'after', kind: 'Tool', config: { toolName: 'echo', argumentBindings: { seen: 'input' } } },
    { key: 'ran', kind: 'Tool', config: { toolName: 'echo', arguments: { ran: true } } },
    { key: 'end', kind: 'End', config: { outcome: 'done', resultPath: 'upstream.after.output.result.seen' } },
    { key: 'end2', kind: 'End', config: { outcome: 'ran' } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 'gate' },
    { key: 'e2', from: 'gate', to: 'b' },
    { key: 'e3', from: 'b', to: 'after' },
    // routes on b's envelope: fires only when b was not taken
    { key: 'e4', from: 'b', to: 'ran', condition: { path: 'status', op: 'Eq', value: 'succeeded' } },
    { key: 'e5', from: 'after', to: 'end' },
    { key: 'e6', from: 'ran', to: 'end2' },
  ],
};

describe('operator skip through a real cluster', () => {
  it('declares a Pending node not taken: the nodes after it run, see it skipped with a null output, and the run completes', async () => {
    const defId = await c.api.createDefinition('skip-not-taken', gated);
    const runId = await c.api.startRun(defId, {});
    await c.api.waitForRun(runId, (v) => v.run.status === 'WaitingForApproval', 30_000, 'gate waits');
    expect((await c.api.send('POST', `/v1/runs/${runId}/nodes/b/skip`, {})).status).toBe(202);
    await c.api.waitForRun(runId, (v) => nodeOf(v, 'b')?.status === 'Skipped', 30_000, 'b skipped');
    await c.api.decide(runId, 'gate', 'Approve');
    const done = await c.api.waitForRun(runId, (v) => v.run.status === 'Completed', 30_000, 'run completed');
    expect(nodeOf(done, 'after')?.status).toBe('Succeeded');
    expect(nodeOf(done, 'ran')?.status).toBe('Skipped');
    expect(done.output).toEqual({ outcome: 'done', result: { status: 'skipped', attempt: 0, branch: null, output: null } });
    const b = await c.api.send('GET', `/v1/runs/${runId}/nodes/b`);
    expect(b.body).toMatchObject({ status: 'Skipped', reason: 'skipped by operator', output: { status: 'skipped', output: null } });
    // a replay of the skip answers 202; a settled node refuses it
    expect((await c.api.send('POST', `/v1/runs/${runId}/nodes/b/skip`, {})).status).toBe(202);
    expect((await c.api.send('POST', `/v1/runs/${runId}/nodes/after/skip`, {})).status).toBe(409);
  }, 90_000);

  it('keeps the pruning meaning under {prune: true}: what only the node feeds is skipped and the run ends without its End', async () => {
    const defId = await c.api.createDefinition('skip-prune', gated);
    const runId = await c.api.startRun(defId, {});
    await c.api.waitForRun(runId, (v) => v.run.status === 'WaitingForApproval', 30_000, 'gate waits');
    expect((await c.api.send('POST', `/v1/runs/${runId}/nodes/b/skip`, { prune: true })).status).toBe(202);
    await c.api.waitForRun(runId, (v) => nodeOf(v, 'end')?.status === 'Skipped', 30_000, 'pruned');
    await c.api.decide(runId, 'gate', 'Approve');
    const ended = await c.api.waitForRun(runId, (v) => v.run.status === 'Cancelled', 30_000, 'run ended');
    expect(nodeOf(ended, 'b')?.status).toBe('Skipped');
    expect(nodeOf(ended, 'after')?.status).toBe('Skipped');
    expect(ended.output).toBeNull();
  }, 90_000);

  it('skips a gate waiting on a person: its request is withdrawn, a late decision is refused, and the run goes on', async () => {
    const defId = await c.api.createDefinition('skip-gate', gated);
    const runId = await c.api.startRun(defId, {});
    await c.api.waitForRun(runId, (v) => v.run.status === 'WaitingForApproval', 30_000, 'gate waits');
    expect((await c.api.send('POST', `/v1/runs/${runId}/nodes/gate/skip`, {})).status).toBe(202);
    const done = await c.api.waitForRun(runId, (v) => v.run.status === 'Completed', 30_000, 'run completed');
    expect(nodeOf(done, 'gate')).toMatchObject({ status: 'Skipped', pendingDecisionKind: null });
    expect(nodeOf(done, 'b')?.status).toBe('Succeeded');
    const late = await c.api.send('POST', `/v1/runs/${runId}/nodes/gate/decide`, { operationId: 'late', decision: 'Approve' });
    expect([late.status, late.body.error.code]).toEqual([409, 'NodeStateConflict']);
    const skipped = (await c.api.events(runId)).filter((e) => e.kind === 'node.skipped' && e.nodeKey === 'gate');
    expect(skipped).toHaveLength(1);
  }, 90_000);
});
