/**
 * An operator's retry of a held DecisionModel on a whole cluster (api, dispatcher, workers as
 * processes; the LLM lane against the fake OpenAI-compatible server; real Postgres and Redis):
 * the re-ask asks the question again, and when it fails for good the node stays held with the
 * answer it gave, instead of failing the node and the run.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlmServer, nodeOf } from '@flowline/testing';
import { startLlmCluster, type LlmCluster } from './llm-cluster';

/** Start → `pick` (DecisionModel, minConfidence: an answer without log-probabilities is held) → left | right Ends. */
const graph = {
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 'pick', kind: 'DecisionModel', maxAttempts: 1, config: { question: 'Which way?', labels: ['left', 'right'], minConfidence: 0.8 } },
    { key: 'left', kind: 'End', config: { outcome: 'left' } },
    { key: 'right', kind: 'End', config: { outcome: 'right' } },
  ],
  edges: [
    { key: 'l', from: 'pick', to: 'left', condition: { path: 'output.choice', op: 'Eq', value: 'left' } },
    { key: 'r', from: 'pick', to: 'right', condition: { path: 'output.choice', op: 'Eq', value: 'right' } },
    { key: 's', from: 'start', to: 'pick' },
  ],
};

describe('retrying a held decision on a whole cluster', () => {
  let fake: FakeLlmServer;
  let c: LlmCluster;
  let mode: 'held' | 'fail' | 'confident' = 'held';

  beforeAll(async () => {
    fake = await startFakeLlm();
    fake.setHandler(() =>
      mode === 'fail'
        ? { status: 500 }
        : mode === 'held'
          ? { content: '{"choice":"left"}' }
          : { content: '{"choice":"right"}', logprobs: 'auto' },
    );
    c = await startLlmCluster(fake);
  }, 120_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') process.stdout.write(`${c.lines.slice(-60).join('\n')}\n`);
  });

  afterAll(async () => {
    await c?.close();
    await fake?.close();
  });

  it('keeps the node held with its answer when asking again fails, and settles it when a later re-ask is confident', async () => {
    const defId = await c.api.createDefinition('held-retry', graph);
    const runId = await c.api.startRun(defId, {});
    const held = await c.api.waitForRun(runId, (v) => v.run.status === 'WaitingForApproval', 30_000, 'decision held');
    expect(nodeOf(held, 'pick')).toMatchObject({ status: 'Succeeded', pendingDecisionKind: 'Operator' });
    const before = await c.api.send('GET', `/v1/runs/${runId}/nodes/pick`);
    expect(before.body.output.output).toMatchObject({ choice: 'left', held: true });

    mode = 'fail';
    const asked = fake.requests.length;
    expect((await c.api.send('POST', `/v1/runs/${runId}/nodes/pick/retry`, {})).status).toBe(202);
    const back = await c.api.waitForRun(
      runId,
      (v) => fake.requests.length > asked && nodeOf(v, 'pick')?.status === 'Succeeded' && v.run.status === 'WaitingForApproval',
      30_000,
      're-ask failed, still held',
    );
    expect(back.run.failureClass).toBe('None');
    expect(nodeOf(back, 'pick')).toMatchObject({ pendingDecisionKind: 'Operator', failureClass: 'None' });
    const after = await c.api.send('GET', `/v1/runs/${runId}/nodes/pick`);
    expect(after.body.output.output).toEqual(before.body.output.output);
    expect(after.body.reason).toMatch(/asking again failed/);
    expect(nodeOf(back, 'left')?.status).toBe('Pending');

    mode = 'confident';
    expect((await c.api.send('POST', `/v1/runs/${runId}/nodes/pick/retry`, {})).status).toBe(202);
    const done = await c.api.waitForRun(runId, (v) => v.run.status === 'Completed', 30_000, 'run completed');
    expect(done.output).toMatchObject({ outcome: 'right' });
    expect(nodeOf(done, 'left')?.status).toBe('Skipped');
  }, 120_000);
});
