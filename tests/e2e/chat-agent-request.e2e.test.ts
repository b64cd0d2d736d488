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
        // slow enough that a stream opened after the send sees the Agent running and its deltas arrive
        return { content: 'We refunded the second charge.', delayMs: 1500, chunkSize: 4 };
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

  it("streams the run over SSE: node statuses, the Agent's content deltas, and a final run.result", async () => {
    const definitionId = await c.api.createDefinition('support-sse', graph);
    const id = `conv-${randomUUID()}`;
    const sent = await c.api.send('POST', `/v1/conversations/${id}/messages`, { definitionId, text: 'Where is my parcel?', requestId: `${id}-1` });
    const runId = sent.body.runId as string;
    // the stream is read from the start of the run, live or replayed; it ends with the run
    const res = await fetch(`${c.cluster.apiUrl}/v1/runs/${runId}/stream`);
    expect(res.status).toBe(200);
    const text = await res.text();
    const frames = text
      .split('\n\n')
      .filter((b) => b.includes('event:'))
      .map((b) => {
        const f: Record<string, string> = {};
        for (const line of b.split('\n')) {
          const at = line.indexOf(':');
          if (at > 0) f[line.slice(0, at)] = line.slice(at + 1).trimStart();
        }
        return { id: f.id!, event: f.event!, data: JSON.parse(f.data!) as Record<string, unknown> };
      });
    expect(frames.at(-1)).toMatchObject({ event: 'run.result', data: { runId, status: 'Completed' } });
    const statuses = frames.filter((f) => f.event === 'node' && f.data.nodeKey === 'helper').map((f) => f.data.status);
    expect(statuses).toEqual(expect.arrayContaining(['Queued', 'Succeeded']));
    const content = frames.filter((f) => f.event === 'activity' && f.data.nodeKey === 'helper' && f.data.type === 'content').map((f) => f.data.text).join('');
    expect(content).toBe('We refunded the second charge.');
  });
});
