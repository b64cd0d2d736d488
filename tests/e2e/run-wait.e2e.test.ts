/**
 * Run and wait through a whole cluster (API, dispatcher, tool worker): a start with `?wait=`
 * answers 200 with the run's summary and output when the run ends within the wait, and the
 * usual 202 when it is still waiting on a person when the wait runs out.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startE2eCluster, type E2eCluster } from '@flowline/testing';

const echoGraph = {
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 'say', kind: 'Tool', config: { toolName: 'echo', argumentBindings: { said: 'run.input.say' } } },
    { key: 'end', kind: 'End', config: { outcome: 'done', resultPath: 'input.output' } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 'say' },
    { key: 'e2', from: 'say', to: 'end' },
  ],
};

const gateGraph = {
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 'gate', kind: 'Pause', config: { prompt: 'Ship it?', allowedDecisions: ['Approve'] } },
    { key: 'end', kind: 'End', config: { outcome: 'approved' } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 'gate' },
    { key: 'e2', from: 'gate', to: 'end', condition: { path: 'output.decision', op: 'Eq', value: 'Approve' } },
  ],
};

describe('run and wait on a whole cluster', () => {
  let c: E2eCluster;

  beforeAll(async () => {
    c = await startE2eCluster({ dispatchers: 1, toolWorkers: 1 });
  }, 90_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') process.stdout.write(`${c.lines.slice(-60).join('\n')}\n`);
  });

  afterAll(async () => {
    await c?.close();
  });

  it('answers 200 with the summary and output of a run that ends within the wait', async () => {
    const defId = await c.api.createDefinition('echo', echoGraph);
    const r = await c.api.send('POST', `/v1/definitions/${defId}/runs?wait=30s`, { input: { say: 'hello' } });
    expect(r.status).toBe(200);
    expect(r.body.run).toMatchObject({ id: r.body.runId, status: 'Completed' });
    expect(r.body.output).toMatchObject({ outcome: 'done' });
    expect(JSON.stringify(r.body.output)).toContain('hello');
  });

  it('answers 202 when the run still waits on a person as the wait runs out', async () => {
    const defId = await c.api.createDefinition('gate', gateGraph);
    const r = await c.api.send('POST', `/v1/definitions/${defId}/runs?wait=1s`, {});
    expect(r.status).toBe(202);
    expect(Object.keys(r.body)).toEqual(['runId']);
    const view = await c.api.waitForRun(r.body.runId as string, (v) => v.run.status === 'WaitingForApproval', 30_000, 'the gate waits');
    expect(view.output).toBeNull();
  });
});
