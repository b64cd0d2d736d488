/**
 * What a chat client reads and does around a conversation: re-running a definition after a
 * failed or cancelled run needs confirmation, a send says what it did, the run list says what
 * the chat shows of each run, a steer's text lands in the conversation, and a conversation can
 * be purged without deleting a run. The dispatcher is not running: run and node states are set
 * directly, as the dispatcher would leave them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, createDefinition, startHarness, type Harness } from './harness';

let h: Harness;
let chatDef: string;
let noConfirmDef: string;
beforeAll(async () => {
  h = await startHarness();
  chatDef = await createDefinition(h, chatGraph(), 'support chat');
  noConfirmDef = await createDefinition(h, { ...chatGraph(), chat: { requireRerunConfirmation: false } }, 'no confirm');
});
afterAll(async () => {
  await h.close();
});

/** Chat graph: Start → reply(Agent) → ask(ChatInput) → End. */
function chatGraph() {
  return {
    kind: 'Chat',
    nodes: [
      { key: 'start', kind: 'Start' },
      { key: 'reply', kind: 'Agent', config: { instructions: 'help' } },
      { key: 'ask', kind: 'ChatInput', config: { prompt: 'anything else?' } },
      { key: 'end', kind: 'End', config: { outcome: 'answered' } },
    ],
    edges: [
      { key: 'e1', from: 'start', to: 'reply' },
      { key: 'e2', from: 'reply', to: 'ask' },
      { key: 'e3', from: 'ask', to: 'end' },
    ],
  };
}

let n = 0;
const conv = () => `surface-${++n}-${Date.now()}`;
const send = (id: string, body: Record<string, unknown>, token?: string) =>
  h.call('POST', `/v1/conversations/${encodeURIComponent(id)}/messages`, { body, ...(token ? { token } : {}) });
const setRun = (runId: string, status: string) => h.db.pool.query(`UPDATE runs SET status = $2, finished_at = now() WHERE id = $1`, [runId, status]);
const setNode = (runId: string, key: string, status: string, pending: string | null = null) =>
  h.db.pool.query(`UPDATE node_runs SET status = $3, attempt = 1, pending_decision_kind = $4 WHERE run_id = $1 AND node_key = $2`, [runId, key, status, pending]);

describe('re-running after a failed or cancelled run', () => {
  for (const status of ['Failed', 'Cancelled']) {
    it(`asks for confirmation after a ${status} run (409 RerunConfirmationRequired), creating nothing, then starts with confirmRerun: true`, async () => {
      const id = conv();
      const first = await send(id, { definitionId: chatDef, text: 'one', requestId: `${id}-1` });
      expect(first.body.action).toBe('started');
      await setRun(first.body.runId, status);
      const refused = await send(id, { definitionId: chatDef, text: 'two', requestId: `${id}-2` });
      expect(refused.status).toBe(409);
      expect(refused.body.error).toMatchObject({ code: 'RerunConfirmationRequired', details: [{ key: 'confirmRerun', message: `the last run ended ${status}` }] });
      expect((await h.db.pool.query(`SELECT 1 FROM messages WHERE request_id = $1`, [`${id}-2`])).rowCount).toBe(0);
      expect((await h.db.pool.query(`SELECT 1 FROM runs WHERE request_id = $1`, [`${id}-2`])).rowCount).toBe(0);
      const confirmed = await send(id, { definitionId: chatDef, text: 'two', requestId: `${id}-2`, confirmRerun: true });
      expect(confirmed.status).toBe(202);
      expect(confirmed.body.action).toBe('rerun');
      // the same send again is a replay, whatever the last run did
      await setRun(confirmed.body.runId, status);
      const replay = await send(id, { definitionId: chatDef, text: 'two', requestId: `${id}-2`, confirmRerun: true });
      expect(replay.body).toEqual({ runId: confirmed.body.runId, messageId: confirmed.body.messageId, action: 'replayed' });
    });
  }

  it('needs no confirmation after a Completed run, for another definition, or when the graph turns it off', async () => {
    const id = conv();
    const first = await send(id, { definitionId: chatDef, text: 'one', requestId: `${id}-1` });
    await setRun(first.body.runId, 'Completed');
    const second = await send(id, { definitionId: chatDef, text: 'two', requestId: `${id}-2` });
    expect(second.body.action).toBe('started');
    await setRun(second.body.runId, 'Failed');
    // another definition's last run in this conversation is not this one's
    const other = await send(id, { definitionId: noConfirmDef, text: 'three', requestId: `${id}-3` });
    expect(other.status).toBe(202);
    expect(other.body.action).toBe('started');
    await setRun(other.body.runId, 'Failed');
    // chat.requireRerunConfirmation: false starts again at once
    const again = await send(id, { definitionId: noConfirmDef, text: 'four', requestId: `${id}-4` });
    expect(again.status).toBe(202);
    expect(again.body.action).toBe('rerun');
  });
});

describe('GET /v1/conversations/{id}/runs', () => {
  it('carries definitionName, triggerMessageId, pendingInput and steerable', async () => {
    const id = conv();
    const sent = await send(id, { definitionId: chatDef, text: 'hi', requestId: `${id}-1` });
    const runId = sent.body.runId as string;
    const read = async () => (await h.call('GET', `/v1/conversations/${id}/runs`)).body.items[0];

    expect(await read()).toMatchObject({
      id: runId, definitionName: 'support chat', triggerMessageId: sent.body.messageId, pendingInput: null, steerable: false,
    });
    await h.db.pool.query(`UPDATE runs SET status = 'Running' WHERE id = $1`, [runId]);
    await setNode(runId, 'reply', 'Running');
    expect(await read()).toMatchObject({ pendingInput: null, steerable: true });
    await setNode(runId, 'reply', 'Succeeded');
    await h.db.pool.query(`UPDATE runs SET status = 'WaitingForApproval' WHERE id = $1`, [runId]);
    await setNode(runId, 'ask', 'WaitingForApproval', 'Answer');
    expect(await read()).toMatchObject({ pendingInput: { nodeKey: 'ask' }, steerable: false });
  });

  it('reads definitionName null once the definition is deleted', async () => {
    const def = await createDefinition(h, chatGraph(), 'short-lived');
    const id = conv();
    const sent = await send(id, { definitionId: def, text: 'hi', requestId: `${id}-1` });
    await setRun(sent.body.runId, 'Completed');
    expect((await h.call('DELETE', `/v1/definitions/${def}`)).status).toBe(204);
    expect((await h.call('GET', `/v1/conversations/${id}/runs`)).body.items[0]).toMatchObject({ id: sent.body.runId, definitionName: null });
  });
});

describe('steer', () => {
  it("posts the steer's text into the run's conversation once, replays included", async () => {
    const id = conv();
    const sent = await send(id, { definitionId: chatDef, text: 'hi', requestId: `${id}-1` });
    const runId = sent.body.runId as string;
    await h.db.pool.query(`UPDATE runs SET status = 'Running' WHERE id = $1`, [runId]);
    await setNode(runId, 'reply', 'Running');
    for (let i = 0; i < 2; i++) {
      const r = await h.call('POST', `/v1/runs/${runId}/nodes/reply/steer`, { body: { operationId: 'steer-1', message: 'shorter please' } });
      expect(r.status).toBe(202);
    }
    const messages = (await h.call('GET', `/v1/conversations/${id}/messages`)).body.items;
    expect(messages.map((m: { role: string; text: string; runId: string; nodeKey: string | null }) => [m.role, m.text, m.runId, m.nodeKey])).toEqual([
      ['user', 'hi', runId, null],
      ['user', 'shorter please', runId, 'reply'],
    ]);
    // the trigger is still the send's message
    expect((await h.call('GET', `/v1/conversations/${id}/runs`)).body.items[0].triggerMessageId).toBe(sent.body.messageId);
  });
});

describe('DELETE /v1/conversations/{id}', () => {
  it('purges the messages and unbinds (never deletes) the runs', async () => {
    const id = conv();
    const a = await send(id, { definitionId: chatDef, text: 'one', requestId: `${id}-1` });
    await setRun(a.body.runId, 'Completed');
    const b = await send(id, { definitionId: chatDef, text: 'two', requestId: `${id}-2` });
    const del = await h.call('DELETE', `/v1/conversations/${id}`);
    expect(del.status).toBe(204);
    expect((await h.db.pool.query(`SELECT 1 FROM messages WHERE conversation_id = $1`, [id])).rowCount).toBe(0);
    for (const runId of [a.body.runId, b.body.runId]) {
      const run = await h.call('GET', `/v1/runs/${runId}`);
      expect(run.status).toBe(200);
      expect(run.body.run.conversationId).toBeNull();
    }
    expect((await h.call('GET', `/v1/conversations/${id}/messages`)).status).toBe(404);
    expect((await h.call('DELETE', `/v1/conversations/${id}`)).status).toBe(404);
    // the id is free again: a send starts a fresh conversation (the live unbound run is not its run)
    const fresh = await send(id, { definitionId: chatDef, text: 'three', requestId: `${id}-3` });
    expect(fresh.status).toBe(202);
    expect(fresh.body.action).toBe('started');
  });

  it("answers 404 for another tenant's conversation and leaves it whole", async () => {
    const id = conv();
    await send(id, { definitionId: chatDef, text: 'one', requestId: `${id}-1` });
    expect((await h.call('DELETE', `/v1/conversations/${id}`, { token: KEYS.b })).status).toBe(404);
    expect((await h.call('GET', `/v1/conversations/${id}/messages`)).body.items).toHaveLength(1);
  });
});
