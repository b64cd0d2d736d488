import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishNodeOutputs } from '@flowline/db';
import { KEYS, createDefinition, lineGraph, startHarness, startRun, type Harness } from './harness';

let h: Harness;
let chatDef: string;
let attachDef: string;
let standardDef: string;
beforeAll(async () => {
  h = await startHarness({ maxRunInputBytes: 2000 });
  chatDef = await createDefinition(h, chatReplyGraph(), 'chat');
  attachDef = await createDefinition(h, { ...chatReplyGraph(), chat: { acceptsAttachments: true } }, 'chat-attach');
  standardDef = await createDefinition(h, lineGraph(), 'standard');
});
afterAll(async () => {
  await h.close();
});

/** Chat graph: Start → reply(LlmCall, publishToChat) → End. */
function chatReplyGraph() {
  return {
    kind: 'Chat',
    nodes: [
      { key: 'start', kind: 'Start' },
      { key: 'reply', kind: 'LlmCall', config: { prompt: 'Answer the question in the input data.', inputBindings: { q: 'run.input.text' }, publishToChat: true } },
      { key: 'end', kind: 'End', config: { outcome: 'answered' } },
    ],
    edges: [
      { key: 'e1', from: 'start', to: 'reply' },
      { key: 'e2', from: 'reply', to: 'end' },
    ],
  };
}

let n = 0;
/** A fresh conversation id per test. */
const conv = () => `chat-${++n}-${Date.now()}`;

function send(id: string, body: Record<string, unknown>, token?: string) {
  return h.call('POST', `/v1/conversations/${encodeURIComponent(id)}/messages`, { body, ...(token ? { token } : {}) });
}

/** Marks a run finished, as the dispatcher would once its End succeeded. */
async function finish(runId: string, status = 'Completed'): Promise<void> {
  await h.db.pool.query(`UPDATE runs SET status = $2, finished_at = now() WHERE id = $1`, [runId, status]);
}

describe('POST /v1/conversations/{id}/messages', () => {
  it('answers 202 {runId, messageId}: a run bound to the conversation with input {text} and the user message', async () => {
    const id = conv();
    const r = await send(id, { definitionId: chatDef, text: 'hello', requestId: `${id}-1` });
    expect(r.status).toBe(202);
    expect(Object.keys(r.body).sort()).toEqual(['action', 'messageId', 'runId']);
    expect(r.body.action).toBe('started');
    const run = await h.call('GET', `/v1/runs/${r.body.runId}`);
    expect(run.body.run).toMatchObject({ conversationId: id, requestId: `${id}-1`, definitionId: chatDef, status: 'Pending' });
    const row = await h.db.pool.query(`SELECT input FROM runs WHERE id = $1`, [r.body.runId]);
    expect(row.rows[0].input).toEqual({ text: 'hello' });
    const msgs = await h.call('GET', `/v1/conversations/${id}/messages`);
    expect(msgs.status).toBe(200);
    expect(msgs.body.nextCursor).toBeNull();
    expect(msgs.body.items).toEqual([
      { id: r.body.messageId, role: 'user', text: 'hello', attachments: [], runId: r.body.runId, nodeKey: null, createdAt: expect.any(String) },
    ]);
  });

  it('gives the run the metadata of the message, and refuses bad metadata with 400 MetadataInvalid naming the key', async () => {
    const id = conv();
    const r = await send(id, { definitionId: chatDef, text: 'hi', requestId: `${id}-1`, metadata: { channel: 'web' } });
    expect(r.status).toBe(202);
    expect((await h.call('GET', `/v1/runs/${r.body.runId}`)).body.run.metadata).toEqual({ channel: 'web' });
    const bad = await send(conv(), { definitionId: chatDef, text: 'hi', requestId: `${id}-2`, metadata: { 'no spaces': 'x' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'MetadataInvalid', details: [{ key: 'metadata.no spaces' }] });
  });

  it('replays the same runId and messageId for the same requestId and body, also after the run ended', async () => {
    const id = conv();
    const body = { definitionId: chatDef, text: 'once', requestId: `${id}-r` };
    const a = await send(id, body);
    const b = await send(id, body);
    expect(a.status).toBe(202);
    expect(b.status).toBe(202);
    // the same run and message; the action says it was a replay
    expect(b.body).toEqual({ ...a.body, action: 'replayed' });
    await finish(a.body.runId);
    const c = await send(id, body);
    expect(c.status).toBe(202);
    expect(c.body).toEqual({ ...a.body, action: 'replayed' });
    const msgs = await h.call('GET', `/v1/conversations/${id}/messages`);
    expect(msgs.body.items).toHaveLength(1);
  });

  it('answers 409 RequestIdReused for the same requestId with another text, conversation or definition', async () => {
    const id = conv();
    const a = await send(id, { definitionId: chatDef, text: 'first', requestId: `${id}-k` });
    expect(a.status).toBe(202);
    await finish(a.body.runId);
    for (const [cid, body] of [
      [id, { definitionId: chatDef, text: 'second', requestId: `${id}-k` }],
      [conv(), { definitionId: chatDef, text: 'first', requestId: `${id}-k` }],
      [id, { definitionId: attachDef, text: 'first', requestId: `${id}-k` }],
    ] as const) {
      const r = await send(cid, body);
      expect(r.status).toBe(409);
      expect(r.body.error.code).toBe('RequestIdReused');
      expect(r.body.error.details).toEqual([{ runId: a.body.runId }]);
    }
  });

  it('answers 409 RequestIdReused when the requestId already started a plain run', async () => {
    const runId = await startRun(h, chatDef, { requestId: 'plain-run-key' });
    const r = await send(conv(), { definitionId: chatDef, text: 'x', requestId: 'plain-run-key' });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatchObject({ code: 'RequestIdReused', details: [{ runId }] });
  });

  it('answers 409 RunBusy while the bound run is live, and starts the next run once it is terminal', async () => {
    const id = conv();
    const first = await send(id, { definitionId: chatDef, text: 'one', requestId: `${id}-1` });
    expect(first.status).toBe(202);
    const busy = await send(id, { definitionId: chatDef, text: 'two', requestId: `${id}-2` });
    expect(busy.status).toBe(409);
    expect(busy.body.error).toMatchObject({ code: 'RunBusy', details: [{ runId: first.body.runId }] });
    // nothing of the refused send was kept
    expect((await h.db.pool.query(`SELECT 1 FROM messages WHERE request_id = $1`, [`${id}-2`])).rowCount).toBe(0);
    expect((await h.db.pool.query(`SELECT 1 FROM runs WHERE request_id = $1`, [`${id}-2`])).rowCount).toBe(0);
    for (const status of ['Running', 'WaitingForApproval', 'Cancelling']) {
      await h.db.pool.query(`UPDATE runs SET status = $2 WHERE id = $1`, [first.body.runId, status]);
      expect((await send(id, { definitionId: chatDef, text: 'two', requestId: `${id}-2` })).status).toBe(409);
    }
    await finish(first.body.runId, 'Failed');
    // the last run failed: starting it again is confirmed first (chat.requireRerunConfirmation defaults to true)
    const unconfirmed = await send(id, { definitionId: chatDef, text: 'two', requestId: `${id}-2` });
    expect(unconfirmed.status).toBe(409);
    expect(unconfirmed.body.error.code).toBe('RerunConfirmationRequired');
    const second = await send(id, { definitionId: chatDef, text: 'two', requestId: `${id}-2`, confirmRerun: true });
    expect(second.status).toBe(202);
    expect(second.body.action).toBe('rerun');
    expect(second.body.runId).not.toBe(first.body.runId);
    const third = await send(id, { definitionId: chatDef, text: 'three', requestId: `${id}-3` });
    expect(third.body.error.details).toEqual([{ runId: second.body.runId }]);
  });

  it('starts exactly one run when many sends race on a new conversation and on a freed one', async () => {
    for (const fresh of [true, false]) {
      const id = conv();
      if (!fresh) {
        const before = await send(id, { definitionId: chatDef, text: 'warm', requestId: `${id}-warm` });
        await finish(before.body.runId);
      }
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => send(id, { definitionId: chatDef, text: `race ${i}`, requestId: `${id}-race-${i}` })),
      );
      const accepted = answers.filter((a) => a.status === 202);
      expect(accepted).toHaveLength(1);
      expect(answers.filter((a) => a.status === 409).every((a) => a.body.error.code === 'RunBusy')).toBe(true);
      expect(answers.filter((a) => a.status === 409)).toHaveLength(7);
      const live = await h.db.pool.query(
        `SELECT id FROM runs WHERE conversation_id = $1 AND status NOT IN ('Completed', 'Failed', 'Cancelled')`,
        [id],
      );
      expect(live.rows).toEqual([{ id: accepted[0]!.body.runId }]);
    }
  });

  it('keeps conversations apart per tenant: the same id in tenant B is its own conversation', async () => {
    const id = conv();
    const defB = await createDefinition(h, chatReplyGraph(), 'chat-b', KEYS.b);
    expect((await send(id, { definitionId: chatDef, text: 'a', requestId: `${id}-a` })).status).toBe(202);
    const b = await send(id, { definitionId: defB, text: 'b', requestId: `${id}-a` }, KEYS.b);
    expect(b.status).toBe(202);
    const listB = await h.call('GET', `/v1/conversations/${id}/messages`, { token: KEYS.b });
    expect(listB.body.items.map((m: { text: string }) => m.text)).toEqual(['b']);
  });

  it('passes attachments into the run input when the Chat graph accepts them', async () => {
    const id = conv();
    const attachments = [{ fileId: 'f1', name: 'a.pdf', kind: 'text', bytes: 12 }];
    const r = await send(id, { definitionId: attachDef, text: 'see file', requestId: `${id}-1`, attachments });
    expect(r.status).toBe(202);
    const row = await h.db.pool.query(`SELECT input FROM runs WHERE id = $1`, [r.body.runId]);
    expect(row.rows[0].input).toEqual({ text: 'see file', attachments });
    const msgs = await h.call('GET', `/v1/conversations/${id}/messages`);
    expect(msgs.body.items[0].attachments).toEqual(attachments);
  });

  it('answers 400 for a bad conversation id or body, a Standard definition, refused attachments, an oversized input', async () => {
    const id = conv();
    const ok = { definitionId: chatDef, text: 'x', requestId: `${id}-bad` };
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['x'.repeat(129), ok, 'ValidationFailed'],
      [id, { ...ok, text: '' }, 'ValidationFailed'],
      [id, { definitionId: chatDef, requestId: `${id}-bad` }, 'ValidationFailed'],
      [id, { definitionId: chatDef, text: 'x' }, 'ValidationFailed'],
      [id, { ...ok, extra: 1 }, 'ValidationFailed'],
      [id, { ...ok, text: 5 }, 'ValidationFailed'],
      [id, { ...ok, definitionId: attachDef, attachments: [{ fileId: 'f', name: 'n', kind: 'video', bytes: 1 }] }, 'ValidationFailed'],
      [id, { ...ok, definitionId: standardDef }, 'DefinitionNotChat'],
      [id, { ...ok, attachments: [{ fileId: 'f', name: 'n', kind: 'text', bytes: 1 }] }, 'AttachmentsNotAccepted'],
      [id, { ...ok, text: 'y'.repeat(3000) }, 'InputTooLarge'],
    ];
    for (const [cid, body, code] of cases) {
      const r = await send(cid, body);
      expect({ status: r.status, code: r.body.error?.code }).toEqual({ status: 400, code });
    }
    expect((await send('x'.repeat(128), { ...ok, requestId: `${id}-long` })).status).toBe(202);
    // nothing was written for the refused sends
    expect((await h.db.pool.query(`SELECT 1 FROM conversations WHERE id = $1`, [id])).rowCount).toBe(0);
  });

  it('answers 404 for an unknown, malformed or other tenant’s definition', async () => {
    const id = conv();
    const defB = await createDefinition(h, chatReplyGraph(), 'chat-b2', KEYS.b);
    for (const definitionId of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', defB]) {
      const r = await send(id, { definitionId, text: 'x', requestId: `${id}-${definitionId}` });
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe('NotFound');
    }
  });

  it('needs a key', async () => {
    const r = await h.call('POST', `/v1/conversations/${conv()}/messages`, { body: { definitionId: chatDef, text: 'x', requestId: 'k' }, token: null });
    expect(r.status).toBe(401);
  });
});

describe('POST /v1/definitions/{id}/runs with a conversationId', () => {
  const start = (conversationId: string, extra: Record<string, unknown> = {}) =>
    h.call('POST', `/v1/definitions/${chatDef}/runs`, { body: { conversationId, ...extra } });

  it('answers 409 RunBusy while the conversation’s run is live, replays its requestId, and starts the next once it is terminal', async () => {
    const id = conv();
    const first = await start(id, { requestId: `${id}-1` });
    expect(first.status).toBe(202);
    const busy = await start(id);
    expect(busy.status).toBe(409);
    expect(busy.body).toEqual({ error: { code: 'RunBusy', message: expect.any(String), details: [{ runId: first.body.runId }] } });
    // a chat send is held by a run started with a bare conversationId, and the other way round
    const sent = await send(id, { definitionId: chatDef, text: 'x', requestId: `${id}-send` });
    expect(sent.status).toBe(409);
    expect(sent.body.error).toMatchObject({ code: 'RunBusy', details: [{ runId: first.body.runId }] });
    // the replay is answered before the busy check
    const replay = await start(id, { requestId: `${id}-1` });
    expect(replay.status).toBe(202);
    expect(replay.body.runId).toBe(first.body.runId);
    const runs = await h.db.pool.query(`SELECT id FROM runs WHERE conversation_id = $1`, [id]);
    expect(runs.rows).toEqual([{ id: first.body.runId }]);
    await finish(first.body.runId, 'Cancelled');
    const next = await start(id);
    expect(next.status).toBe(202);
    const held = await send(id, { definitionId: chatDef, text: 'y', requestId: `${id}-send2` });
    expect(held.body.error).toMatchObject({ code: 'RunBusy', details: [{ runId: next.body.runId }] });
    await finish(next.body.runId);
    expect((await send(id, { definitionId: chatDef, text: 'z', requestId: `${id}-send3` })).status).toBe(202);
    expect((await start(id)).status).toBe(409);
  });

  it('starts exactly one run when many starts race on a new conversation and on a freed one', async () => {
    for (const fresh of [true, false]) {
      const id = conv();
      if (!fresh) {
        const before = await start(id);
        await finish(before.body.runId);
      }
      const answers = await Promise.all(Array.from({ length: 8 }, () => start(id)));
      const accepted = answers.filter((a) => a.status === 202);
      expect(accepted).toHaveLength(1);
      const refused = answers.filter((a) => a.status === 409);
      expect(refused).toHaveLength(7);
      expect(refused.every((a) => a.body.error.code === 'RunBusy')).toBe(true);
      const live = await h.db.pool.query(
        `SELECT id FROM runs WHERE conversation_id = $1 AND status NOT IN ('Completed', 'Failed', 'Cancelled')`,
        [id],
      );
      expect(live.rows).toEqual([{ id: accepted[0]!.body.runId }]);
    }
  });
});

describe('GET /v1/conversations', () => {
  it('lists the tenant’s conversations newest first with their bound run, filtered by definition, paged by limit and cursor', async () => {
    const def = await createDefinition(h, chatReplyGraph(), 'chat-list');
    const ids = [conv(), conv(), conv()];
    const runs: string[] = [];
    for (const id of ids) {
      const r = await send(id, { definitionId: def, text: 'hi', requestId: `${id}-1` });
      expect(r.status).toBe(202);
      runs.push(r.body.runId);
    }
    await finish(runs[0]!);
    const all = await h.call('GET', `/v1/conversations?definitionId=${def}`);
    expect(all.status).toBe(200);
    expect(all.body.items.map((c: { id: string; boundRunId: string; definitionId: string; boundRunStatus: string }) => [c.id, c.boundRunId, c.definitionId, c.boundRunStatus])).toEqual([
      [ids[2], runs[2], def, 'Pending'],
      [ids[1], runs[1], def, 'Pending'],
      [ids[0], runs[0], def, 'Completed'],
    ]);
    expect(all.body.items[0]).toEqual({ id: ids[2], boundRunId: runs[2], definitionId: def, boundRunStatus: 'Pending', createdAt: expect.any(String), updatedAt: expect.any(String) });
    const first = await h.call('GET', `/v1/conversations?definitionId=${def}&limit=2`);
    expect(first.body.items.map((c: { id: string }) => c.id)).toEqual([ids[2], ids[1]]);
    const rest = await h.call('GET', `/v1/conversations?definitionId=${def}&limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`);
    expect(rest.body).toEqual({ items: [expect.objectContaining({ id: ids[0] })], nextCursor: null });
    // unfiltered lists include them; another tenant sees none of them
    const mine = (await h.call('GET', '/v1/conversations?limit=200')).body.items.map((c: { id: string }) => c.id);
    expect(mine).toEqual(expect.arrayContaining(ids));
    const theirs = (await h.call('GET', '/v1/conversations?limit=200', { token: KEYS.b })).body.items.map((c: { id: string }) => c.id);
    expect(theirs.filter((id: string) => ids.includes(id))).toEqual([]);
    expect((await h.call('GET', '/v1/conversations?definitionId=not-a-uuid')).body).toEqual({ items: [], nextCursor: null });
    expect((await h.call('GET', '/v1/conversations?cursor=garbage')).status).toBe(400);
    // a cursor naming an id Postgres cannot hold is malformed, not a 500
    const nul = Buffer.from('c:2026-01-01T00:00:00.000000|a\u0000b', 'utf8').toString('base64url');
    expect((await h.call('GET', `/v1/conversations?cursor=${nul}`)).status).toBe(400);
  });

  it('answers 400 for a cursor whose timestamp names no instant, like every other paged route', async () => {
    for (const date of ['2026-02-30T00:00:00.000000', '2026-13-01T00:00:00.000000', '0000-01-01T00:00:00.000000', '2026-01-01T24:00:00.000000', '9999-99-99T99:99:99.999999']) {
      const cursor = Buffer.from(`c:${date}|conv-1`, 'utf8').toString('base64url');
      const r = await h.call('GET', `/v1/conversations?cursor=${cursor}`);
      expect({ date, status: r.status, code: r.body.error?.code }).toEqual({ date, status: 400, code: 'ValidationFailed' });
    }
    const real = Buffer.from('c:2024-02-29T23:59:59.999999|conv-1', 'utf8').toString('base64url');
    expect((await h.call('GET', `/v1/conversations?cursor=${real}`)).status).toBe(200);
  });
});

describe('GET /v1/conversations/{id}/messages', () => {
  it('lists user and published assistant messages oldest first, paged by limit and cursor', async () => {
    const id = conv();
    const first = await send(id, { definitionId: chatDef, text: 'q1', requestId: `${id}-1` });
    // the dispatcher's publish outbox write, after `reply` succeeded
    await h.db.pool.query(`UPDATE node_runs SET status = 'Succeeded', attempt = 1 WHERE run_id = $1 AND node_key = 'reply'`, [first.body.runId]);
    const pub = await publishNodeOutputs(h.db.pool, [{ runId: first.body.runId, nodeKey: 'reply', attempt: 1, text: 'a1' }]);
    expect(pub.published).toHaveLength(1);
    await finish(first.body.runId);
    const second = await send(id, { definitionId: chatDef, text: 'q2', requestId: `${id}-2` });
    const all = await h.call('GET', `/v1/conversations/${id}/messages`);
    expect(all.body.items.map((m: { role: string; text: string; nodeKey: string | null }) => [m.role, m.text, m.nodeKey])).toEqual([
      ['user', 'q1', null],
      ['assistant', 'a1', 'reply'],
      ['user', 'q2', null],
    ]);
    expect(all.body.items[1]).toMatchObject({ id: pub.published[0]!.messageId, runId: first.body.runId });
    const page1 = await h.call('GET', `/v1/conversations/${id}/messages?limit=2`);
    expect(page1.body.items).toHaveLength(2);
    expect(page1.body.nextCursor).toEqual(expect.any(String));
    const page2 = await h.call('GET', `/v1/conversations/${id}/messages?limit=2&cursor=${page1.body.nextCursor}`);
    expect(page2.body.items.map((m: { runId: string }) => m.runId)).toEqual([second.body.runId]);
    expect(page2.body.nextCursor).toBeNull();
    // limit is clamped to 1..200
    expect((await h.call('GET', `/v1/conversations/${id}/messages?limit=0`)).body.items).toHaveLength(1);
    expect((await h.call('GET', `/v1/conversations/${id}/messages?limit=5000`)).body.items).toHaveLength(3);
  });

  it('answers 400 for a malformed cursor and 404 for an unknown, too long or other tenant’s conversation', async () => {
    const id = conv();
    await send(id, { definitionId: chatDef, text: 'q', requestId: `${id}-1` });
    expect((await h.call('GET', `/v1/conversations/${id}/messages?cursor=zzz`)).status).toBe(400);
    for (const [cid, token] of [
      [conv(), KEYS.a],
      [id, KEYS.b],
      ['x'.repeat(129), KEYS.a],
    ] as const) {
      for (const tail of ['messages', 'runs']) {
        const r = await h.call('GET', `/v1/conversations/${cid}/${tail}`, { token });
        expect(r.status).toBe(404);
        expect(r.body.error.code).toBe('NotFound');
      }
    }
  });
});

describe('GET /v1/conversations/{id}/runs', () => {
  it('lists the conversation’s runs newest first as run summaries, runs started with a bare conversationId included', async () => {
    const id = conv();
    const a = await send(id, { definitionId: chatDef, text: '1', requestId: `${id}-1` });
    await finish(a.body.runId);
    const b = await send(id, { definitionId: chatDef, text: '2', requestId: `${id}-2` });
    await finish(b.body.runId);
    const c = await startRun(h, chatDef, { conversationId: id });
    await startRun(h, chatDef, { conversationId: conv() });
    const r = await h.call('GET', `/v1/conversations/${id}/runs`);
    expect(r.status).toBe(200);
    expect(r.body.items.map((x: { id: string }) => x.id)).toEqual([c, b.body.runId, a.body.runId]);
    expect(r.body.items[0].conversationId).toBe(id);
    const p1 = await h.call('GET', `/v1/conversations/${id}/runs?limit=2`);
    expect(p1.body.items).toHaveLength(2);
    const p2 = await h.call('GET', `/v1/conversations/${id}/runs?limit=2&cursor=${p1.body.nextCursor}`);
    expect(p2.body.items.map((x: { id: string }) => x.id)).toEqual([a.body.runId]);
    expect(p2.body.nextCursor).toBeNull();
    // a conversation known only from a plain run's conversationId answers too
    const solo = conv();
    const s = await startRun(h, chatDef, { conversationId: solo });
    expect((await h.call('GET', `/v1/conversations/${solo}/runs`)).body.items.map((x: { id: string }) => x.id)).toEqual([s]);
    expect((await h.call('GET', `/v1/conversations/${solo}/messages`)).body).toEqual({ items: [], nextCursor: null });
  });
});

describe('publish outbox write (publishNodeOutputs)', () => {
  it('publishes a node attempt once, with node.published {messageId} after the run’s last event', async () => {
    const id = conv();
    const r = await send(id, { definitionId: chatDef, text: 'q', requestId: `${id}-1` });
    const runId = r.body.runId as string;
    await h.db.pool.query(`UPDATE node_runs SET status = 'Succeeded', attempt = 1 WHERE run_id = $1 AND node_key = 'reply'`, [runId]);
    const item = { runId, nodeKey: 'reply', attempt: 1, text: 'answer' };
    const [one, two] = await Promise.all([publishNodeOutputs(h.db.pool, [item]), publishNodeOutputs(h.db.pool, [item])]);
    expect(one.published.length + two.published.length).toBe(1);
    expect(one.skipped.length + two.skipped.length).toBe(1);
    const ev = await h.call('GET', `/v1/runs/${runId}/events`);
    const published = ev.body.events.filter((e: { kind: string }) => e.kind === 'node.published');
    expect(published).toEqual([
      expect.objectContaining({ seq: 2, kind: 'node.published', nodeKey: 'reply', detail: { messageId: [...one.published, ...two.published][0]!.messageId } }),
    ]);
    const msgs = await h.call('GET', `/v1/conversations/${id}/messages`);
    expect(msgs.body.items.filter((m: { role: string }) => m.role === 'assistant')).toHaveLength(1);
  });

  it('skips a node not Succeeded at that attempt, a run without a conversation, and a cancelled run', async () => {
    const id = conv();
    const r = await send(id, { definitionId: chatDef, text: 'q', requestId: `${id}-1` });
    const runId = r.body.runId as string;
    const plain = await startRun(h, chatDef, {});
    await h.db.pool.query(`UPDATE node_runs SET status = 'Succeeded', attempt = 1 WHERE run_id = ANY($1::uuid[]) AND node_key = 'reply'`, [[runId, plain]]);
    const wrongAttempt = await publishNodeOutputs(h.db.pool, [{ runId, nodeKey: 'reply', attempt: 2, text: 'x' }]);
    const notBound = await publishNodeOutputs(h.db.pool, [{ runId: plain, nodeKey: 'reply', attempt: 1, text: 'x' }]);
    const notSucceeded = await publishNodeOutputs(h.db.pool, [{ runId, nodeKey: 'end', attempt: 0, text: 'x' }]);
    await h.db.pool.query(`UPDATE runs SET status = 'Cancelling' WHERE id = $1`, [runId]);
    const cancelled = await publishNodeOutputs(h.db.pool, [{ runId, nodeKey: 'reply', attempt: 1, text: 'x' }]);
    for (const res of [wrongAttempt, notBound, notSucceeded, cancelled]) {
      expect(res.published).toEqual([]);
      expect(res.skipped).toHaveLength(1);
    }
    const assistant = await h.db.pool.query(`SELECT 1 FROM messages WHERE role = 'assistant' AND run_id = ANY($1::uuid[])`, [[runId, plain]]);
    expect(assistant.rowCount).toBe(0);
  });
});
