import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor, startE2eCluster, type E2eCluster } from '@flowline/testing';

/**
 * Chat graph: Start → ask(ChatInput) → End(result = the answer's text). The End carries no
 * `publishToChat` flag (an End of a Chat graph publishes by default) unless one is given.
 */
const chatGraph = (endFlag?: boolean) => ({
  kind: 'Chat',
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 'ask', kind: 'ChatInput', config: { prompt: 'and then?' } },
    {
      key: 'end',
      kind: 'End',
      config: { outcome: 'answered', resultPath: 'input.output.text', ...(endFlag === undefined ? {} : { publishToChat: endFlag }) },
    },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 'ask' },
    { key: 'e2', from: 'ask', to: 'end' },
  ],
});

interface Message {
  id: string;
  role: string;
  text: string;
  runId: string;
  nodeKey: string | null;
}

describe('a chat conversation on a whole cluster', () => {
  let c: E2eCluster;
  let definitionId: string;
  let silentDefinitionId: string;

  beforeAll(async () => {
    c = await startE2eCluster({ dispatchers: 1, toolWorkers: 0 });
    definitionId = await c.api.createDefinition('chat', chatGraph());
    silentDefinitionId = await c.api.createDefinition('chat-silent', chatGraph(false));
  }, 90_000);

  /** Sends `text` to conversation `id`, answers its ChatInput with `answer` and waits for the run to complete. */
  async function exchange(id: string, defId: string, text: string, answer: string): Promise<string> {
    const sent = await c.api.send('POST', `/v1/conversations/${id}/messages`, { definitionId: defId, text, requestId: `${id}-${text}` });
    expect(sent.status).toBe(202);
    const runId = sent.body.runId as string;
    await c.api.waitForRun(runId, (v) => v.run.status === 'WaitingForApproval', 30_000, 'run waits on the chat input');
    const decided = await c.api.send('POST', `/v1/runs/${runId}/nodes/ask/decide`, {
      operationId: randomUUID(),
      decision: 'Answer',
      payload: { text: answer },
    });
    expect(decided.status).toBe(202);
    await c.api.waitForRun(runId, (v) => v.run.status === 'Completed', 30_000, 'run completed');
    return runId;
  }

  async function messagesOf(id: string, count: number): Promise<Message[]> {
    return waitFor(
      async () => {
        const r = await c.api.send('GET', `/v1/conversations/${id}/messages`);
        return r.body.items.length === count ? (r.body.items as Message[]) : false;
      },
      { timeoutMs: 15_000, intervalMs: 150, description: `${count} messages in the conversation` },
    );
  }

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') process.stdout.write(`${c.lines.slice(-60).join('\n')}\n`);
  });

  afterAll(async () => {
    await c?.close();
  });


  it('holds the conversation while its run waits, then publishes the answer of its flagless End exactly once', async () => {
    const id = `conv-${randomUUID()}`;
    const sent = await c.api.send('POST', `/v1/conversations/${id}/messages`, { definitionId, text: 'hello', requestId: `${id}-1` });
    expect(sent.status).toBe(202);
    const runId = sent.body.runId as string;
    await c.api.waitForRun(runId, (v) => v.run.status === 'WaitingForApproval', 30_000, 'run waits on the chat input');

    const busy = await c.api.send('POST', `/v1/conversations/${id}/messages`, { definitionId, text: 'again', requestId: `${id}-2` });
    expect(busy.status).toBe(409);
    expect(busy.body.error.code).toBe('RunBusy');

    const decided = await c.api.send('POST', `/v1/runs/${runId}/nodes/ask/decide`, {
      operationId: randomUUID(),
      decision: 'Answer',
      payload: { text: 'the answer' },
    });
    expect(decided.status).toBe(202);
    await c.api.waitForRun(runId, (v) => v.run.status === 'Completed', 30_000, 'run completed');

    const messages = await waitFor(
      async () => {
        const r = await c.api.send('GET', `/v1/conversations/${id}/messages`);
        return r.body.items.length === 2 ? (r.body.items as Message[]) : false;
      },
      { timeoutMs: 15_000, intervalMs: 150, description: 'assistant message published' },
    );
    expect(messages.map((m) => [m.role, m.text, m.nodeKey, m.runId])).toEqual([
      ['user', 'hello', null, runId],
      ['assistant', 'the answer', 'end', runId],
    ]);
    const published = (await c.api.events(runId)).filter((e) => e.kind === 'node.published');
    expect(published).toHaveLength(1);
    expect(published[0]!.nodeKey).toBe('end');

    const runs = await c.api.send('GET', `/v1/conversations/${id}/runs`);
    expect(runs.body.items.map((r: { id: string; conversationId: string }) => [r.id, r.conversationId])).toEqual([[runId, id]]);
    // the conversation is free again
    const next = await c.api.send('POST', `/v1/conversations/${id}/messages`, { definitionId, text: 'again', requestId: `${id}-2` });
    expect(next.status).toBe(202);
  });

  it('asks before starting the definition again after its run was cancelled, then starts it with confirmRerun', async () => {
    const id = `conv-${randomUUID()}`;
    const sent = await c.api.send('POST', `/v1/conversations/${id}/messages`, { definitionId, text: 'first', requestId: `${id}-1` });
    expect(sent.body.action).toBe('started');
    const runId = sent.body.runId as string;
    await c.api.waitForRun(runId, (v) => v.run.status === 'WaitingForApproval', 30_000, 'run waits on the chat input');
    expect((await c.api.send('POST', `/v1/runs/${runId}/cancel`, {})).status).toBe(202);
    await c.api.waitForRun(runId, (v) => v.run.status === 'Cancelled', 30_000, 'run cancelled');

    const asked = await c.api.send('POST', `/v1/conversations/${id}/messages`, { definitionId, text: 'second', requestId: `${id}-2` });
    expect(asked.status).toBe(409);
    expect(asked.body.error.code).toBe('RerunConfirmationRequired');
    const confirmed = await c.api.send('POST', `/v1/conversations/${id}/messages`, { definitionId, text: 'second', requestId: `${id}-2`, confirmRerun: true });
    expect(confirmed.status).toBe(202);
    expect(confirmed.body.action).toBe('rerun');
    await c.api.waitForRun(confirmed.body.runId as string, (v) => v.run.status === 'WaitingForApproval', 30_000, 'the new run waits on the chat input');
    const runs = await c.api.send('GET', `/v1/conversations/${id}/runs`);
    expect(runs.body.items.map((r: { id: string; status: string }) => [r.id, r.status])).toEqual([
      [confirmed.body.runId, 'WaitingForApproval'],
      [runId, 'Cancelled'],
    ]);
    expect(runs.body.items[0]).toMatchObject({ definitionName: 'chat', triggerMessageId: confirmed.body.messageId, pendingInput: { nodeKey: 'ask' } });
  });

  it('publishes nothing from an End with publishToChat: false', async () => {
    const id = `conv-${randomUUID()}`;
    const runId = await exchange(id, silentDefinitionId, 'quiet', 'unsaid');
    // a publishing run completed later on the same (single) dispatcher: its publish pass ran after the silent one's
    const sentinel = `conv-${randomUUID()}`;
    await exchange(sentinel, definitionId, 'loud', 'said');
    expect((await messagesOf(sentinel, 2)).map((m) => [m.role, m.text])).toEqual([
      ['user', 'loud'],
      ['assistant', 'said'],
    ]);
    expect((await messagesOf(id, 1)).map((m) => m.role)).toEqual(['user']);
    expect((await c.api.events(runId)).filter((e) => e.kind === 'node.published')).toEqual([]);
  });
});
