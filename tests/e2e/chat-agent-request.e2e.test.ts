/**
 * An Agent of a Chat graph sees what the user asked: through a whole cluster (API, dispatcher,
 * LLM worker) and a fake OpenAI-compatible provider over HTTP, a conversation message starts
 * Start → DecisionModel → Agent, and the Agent's prompt carries the `## Conversation request`
 * section with the message, though its upstream is only the DecisionModel's choice.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startE2eCluster, startFakeLlm, type E2eCluster, type FakeLlmServer } from '@flowline/testing';

const graph = {
  kind: 'Chat',
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 'route', kind: 'DecisionModel', config: { question: 'Which team handles this?', labels: ['billing', 'other'] } },
    { key: 'helper', kind: 'Agent', config: { instructions: 'Answer the customer.', includeUpstreamOutputs: false } },
    { key: 'end', kind: 'End', config: { outcome: 'answered', publishToChat: false } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 'route' },
    { key: 'e2', from: 'route', to: 'helper' },
    { key: 'e3', from: 'helper', to: 'end' },
  ],
};

/** The text of the user message of a recorded chat completion request. */
function userText(body: Record<string, unknown>): string {
  const messages = body.messages as Array<{ role: string; content: unknown }>;
  const user = messages.find((m) => m.role === 'user');
  return typeof user?.content === 'string' ? user.content : JSON.stringify(user?.content);
}

describe('an Agent of a Chat graph on a whole cluster', () => {
  let c: E2eCluster;
  let llm: FakeLlmServer;

  beforeAll(async () => {
    llm = await startFakeLlm({
      handler: (req) => {
        // the DecisionModel asks for a JSON answer with its labels; the Agent for plain text
        if (req.body.response_format) return { content: JSON.stringify({ choice: 'billing' }), logprobs: 'auto' };
        return { content: 'We refunded the second charge.' };
      },
    });
    c = await startE2eCluster({
      dispatchers: 1,
      toolWorkers: 0,
      llmWorkers: 1,
      env: { LLM_BASE_URL: `${llm.url}/v1`, LLM_MODEL: 'fake-model' },
    });
  }, 90_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') process.stdout.write(`${c.lines.slice(-60).join('\n')}\n`);
  });

  afterAll(async () => {
    await c?.close();
    await llm?.close();
  });

  it("shows the Agent the user's message after a router, whatever includeUpstreamOutputs says", async () => {
    const definitionId = await c.api.createDefinition('support', graph);
    const id = `conv-${randomUUID()}`;
    const sent = await c.api.send('POST', `/v1/conversations/${id}/messages`, { definitionId, text: 'Why was I charged twice in May?', requestId: `${id}-1` });
    expect(sent.status).toBe(202);
    const view = await c.api.waitForRun(sent.body.runId as string, (v) => ['Completed', 'Failed'].includes(v.run.status), 60_000, 'run ended');
    expect(view.run.status).toBe('Completed');
    const prompts = llm.requests.map((r) => userText(r.body));
    const agentPrompt = prompts.find((p) => p.startsWith('Answer the customer.'));
    expect(agentPrompt).toBe('Answer the customer.\n\n## Conversation request\nWhy was I charged twice in May?');
  });
});
