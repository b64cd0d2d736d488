/**
 * Saved agents through a whole cluster (API, dispatcher, LLM worker, a fake OpenAI-compatible
 * provider that echoes the task it was sent): two definitions use one saved agent; a run pins
 * the agent's version when it starts, so an update reaches only the runs started after it —
 * even a run whose Agent node works after the update.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { nodeOf, startE2eCluster, startFakeLlm, type E2eCluster, type FakeLlmServer } from '@flowline/testing';

type Message = { role: string; content: unknown };

const agentBody = (instructions: string) => ({ name: 'echoer', instructions, tools: ['echo'], maxIterations: 2 });

describe('saved agents on a whole cluster', () => {
  let c: E2eCluster;
  let llm: FakeLlmServer;

  beforeAll(async () => {
    // answers with the task the Agent was given, so the answer tells the versions apart
    llm = await startFakeLlm({
      handler: (req) => {
        const user = (req.body.messages as Message[]).find((m) => m.role === 'user');
        return { content: `task was: ${String(user?.content ?? '').split('\n')[0]}` };
      },
    });
    c = await startE2eCluster({ dispatchers: 1, toolWorkers: 1, llmWorkers: 1, env: { LLM_BASE_URL: `${llm.url}/v1`, LLM_MODEL: 'fake-model', LLM_STREAM: '0' } });
  }, 90_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') process.stdout.write(`${c.lines.slice(-60).join('\n')}\n`);
  });

  afterAll(async () => {
    await c?.close();
    await llm?.close();
  });

  it('pins the version at run start: an update reaches only runs started after it', async () => {
    const created = await c.api.send('POST', '/v1/agents', agentBody('Speak as version one.'));
    expect(created.status).toBe(201);
    const agentId = created.body.id as string;

    // a Wait before the Agent: the first run's Agent works only after the update below
    const waiting = await c.api.createDefinition('saved-agent-waiting', {
      nodes: [
        { key: 'start', kind: 'Start' },
        { key: 'nap', kind: 'Wait', config: { for: 'PT2S' } },
        { key: 'agent', kind: 'Agent', config: { agentDefinitionId: agentId } },
        { key: 'end', kind: 'End', config: { outcome: 'done' } },
      ],
      edges: [
        { key: 'e1', from: 'start', to: 'nap' },
        { key: 'e2', from: 'nap', to: 'agent' },
        { key: 'e3', from: 'agent', to: 'end' },
      ],
    });
    const pinnedToOne = await c.api.createDefinition('saved-agent-v1', {
      nodes: [
        { key: 'start', kind: 'Start' },
        { key: 'agent', kind: 'Agent', config: { agentDefinitionId: agentId, agentVersion: 1, includeUpstreamOutputs: false } },
        { key: 'end', kind: 'End', config: { outcome: 'done' } },
      ],
      edges: [
        { key: 'e1', from: 'start', to: 'agent' },
        { key: 'e2', from: 'agent', to: 'end' },
      ],
    });

    const before = await c.api.startRun(waiting, {});
    const updated = await c.api.send('PUT', `/v1/agents/${agentId}`, agentBody('Speak as version two.'));
    expect(updated.body).toMatchObject({ version: 2, instructions: 'Speak as version two.' });
    const after = await c.api.startRun(waiting, {});
    const explicit = await c.api.startRun(pinnedToOne, {});

    const outputOf = async (runId: string) => {
      const view = await c.api.waitForRun(runId, (v) => ['Completed', 'Failed'].includes(v.run.status), 60_000, 'run ended');
      expect(view.run.status).toBe('Completed');
      expect(nodeOf(view, 'agent')).toMatchObject({ status: 'Succeeded' });
      return (await c.api.send('GET', `/v1/runs/${runId}/nodes/agent`)).body.output.output as { text: string; agent: unknown };
    };
    expect(await outputOf(before)).toMatchObject({ text: 'task was: Speak as version one.', agent: { id: agentId, version: 1 } });
    expect(await outputOf(after)).toMatchObject({ text: 'task was: Speak as version two.', agent: { id: agentId, version: 2 } });
    expect(await outputOf(explicit)).toMatchObject({ text: 'task was: Speak as version one.', agent: { id: agentId, version: 1 } });
  }, 90_000);

  it('refuses a definition naming a saved agent the tenant does not have, keyed to the node', async () => {
    const res = await c.api.send('POST', '/v1/definitions', {
      name: 'no-such-agent',
      graph: {
        nodes: [
          { key: 'start', kind: 'Start' },
          { key: 'agent', kind: 'Agent', config: { agentDefinitionId: '00000000-0000-4000-8000-000000000000' } },
          { key: 'end', kind: 'End', config: { outcome: 'done' } },
        ],
        edges: [
          { key: 'e1', from: 'start', to: 'agent' },
          { key: 'e2', from: 'agent', to: 'end' },
        ],
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'GraphInvalid', details: [{ key: 'agent', message: expect.stringMatching(/unknown saved agent/) }] });
  });
});
