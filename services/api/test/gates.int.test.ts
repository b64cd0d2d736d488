import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, chatGraph, createDefinition, pauseGraph, startHarness, startRun, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

/** A run whose gate node waits on a person, set up directly (the dispatcher is not running here). */
async function waitingGate(graph: unknown, nodeKey: string, kind: 'Approve' | 'Answer'): Promise<string> {
  const defId = await createDefinition(h, graph, 'gate');
  const runId = await startRun(h, defId);
  await h.db.pool.query(`UPDATE runs SET status = 'WaitingForApproval' WHERE id = $1`, [runId]);
  await h.db.pool.query(
    `UPDATE node_runs SET status = 'WaitingForApproval', attempt = 1, pending_decision_kind = $3 WHERE run_id = $1 AND node_key = $2`,
    [runId, nodeKey, kind],
  );
  return runId;
}

const decide = (runId: string, key: string, body: unknown, token?: string) =>
  h.call('POST', `/v1/runs/${runId}/nodes/${key}/decide`, { body, ...(token ? { token } : {}) });

describe('decide', () => {
  it('records an Approve on a waiting Pause: decision CAS, decide intent, wake and version bump, no event', async () => {
    const runId = await waitingGate(pauseGraph(), 'gate', 'Approve');
    const before = await h.db.pool.query(`SELECT version, last_seq FROM runs WHERE id = $1`, [runId]);
    const r = await decide(runId, 'gate', { operationId: 'op-1', decision: 'Approve', comment: 'lgtm', payload: { a: 1 } });
    expect(r.status).toBe(202);
    const node = await h.db.pool.query(`SELECT decision FROM node_runs WHERE run_id = $1 AND node_key = 'gate'`, [runId]);
    expect(node.rows[0].decision).toMatchObject({ operationId: 'op-1', decision: 'Approve', comment: 'lgtm', payload: { a: 1 }, applied: false });
    expect(typeof node.rows[0].decision.at).toBe('number');
    const intents = await h.db.pool.query(`SELECT kind, node_key, payload FROM intents WHERE run_id = $1`, [runId]);
    expect(intents.rows).toEqual([{ kind: 'decide', node_key: 'gate', payload: { operationId: 'op-1' } }]);
    const after = await h.db.pool.query(`SELECT version, last_seq, wake_at FROM runs WHERE id = $1`, [runId]);
    expect(after.rows[0].version).toBe(before.rows[0].version + 1);
    expect(after.rows[0].last_seq).toBe(before.rows[0].last_seq);
    expect(after.rows[0].wake_at).not.toBeNull();
  });

  it('replays 202 for the same operationId and body, even after the run ended, without a second intent', async () => {
    const runId = await waitingGate(pauseGraph(), 'gate', 'Approve');
    const body = { operationId: 'op-r', decision: 'Reject', comment: 'no' };
    expect((await decide(runId, 'gate', body)).status).toBe(202);
    await h.db.pool.query(`UPDATE node_runs SET status = 'Succeeded' WHERE run_id = $1 AND node_key = 'gate'`, [runId]);
    await h.db.pool.query(`UPDATE runs SET status = 'Completed' WHERE id = $1`, [runId]);
    expect((await decide(runId, 'gate', body)).status).toBe(202);
    const intents = await h.db.pool.query(`SELECT 1 FROM intents WHERE run_id = $1`, [runId]);
    expect(intents.rowCount).toBe(1);
  });

  it('answers 409 GateAlreadyDecided with the standing decision to a different act', async () => {
    const runId = await waitingGate(pauseGraph(), 'gate', 'Approve');
    expect((await decide(runId, 'gate', { operationId: 'first', decision: 'Approve' })).status).toBe(202);
    const other = await decide(runId, 'gate', { operationId: 'second', decision: 'Reject' });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('GateAlreadyDecided');
    expect(other.body.error.details[0]).toMatchObject({ operationId: 'first', decision: 'Approve', comment: null });
    const sameOpOtherBody = await decide(runId, 'gate', { operationId: 'first', decision: 'Reject' });
    expect(sameOpOtherBody.status).toBe(409);
    expect(sameOpOtherBody.body.error.code).toBe('GateAlreadyDecided');
  });

  it('lets exactly one of two concurrent different decisions win', async () => {
    const runId = await waitingGate(pauseGraph(), 'gate', 'Approve');
    const [a, b] = await Promise.all([
      decide(runId, 'gate', { operationId: 'x', decision: 'Approve' }),
      decide(runId, 'gate', { operationId: 'y', decision: 'Reject' }),
    ]);
    expect([a.status, b.status].sort()).toEqual([202, 409]);
    const intents = await h.db.pool.query(`SELECT 1 FROM intents WHERE run_id = $1`, [runId]);
    expect(intents.rowCount).toBe(1);
  });

  it('answers 409 to a decision the gate does not offer', async () => {
    const runId = await waitingGate(pauseGraph({ allowed: ['Approve'] }), 'gate', 'Approve');
    const reject = await decide(runId, 'gate', { operationId: 'o1', decision: 'Reject' });
    expect(reject.status).toBe(409);
    expect(reject.body.error.code).toBe('DecisionNotAllowed');
    const answer = await decide(runId, 'gate', { operationId: 'o2', decision: 'Answer', payload: { text: 'hi' } });
    expect(answer.status).toBe(409);
    const chatRun = await waitingGate(chatGraph(), 'ask', 'Answer');
    const approve = await decide(chatRun, 'ask', { operationId: 'o3', decision: 'Approve' });
    expect(approve.status).toBe(409);
    expect(approve.body.error.code).toBe('DecisionNotAllowed');
  });

  it('answers 400 when a required comment is missing, and accepts it once given', async () => {
    const runId = await waitingGate(pauseGraph({ requireComment: true }), 'gate', 'Approve');
    const missing = await decide(runId, 'gate', { operationId: 'c1', decision: 'Approve' });
    expect(missing.status).toBe(400);
    expect(missing.body.error.details).toEqual([expect.objectContaining({ key: 'comment' })]);
    expect((await decide(runId, 'gate', { operationId: 'c1', decision: 'Approve', comment: 'ok' })).status).toBe(202);
  });

  it('takes an Answer with payload.text on a ChatInput and caps the text', async () => {
    const runId = await waitingGate(chatGraph(), 'ask', 'Answer');
    const noText = await decide(runId, 'ask', { operationId: 'a0', decision: 'Answer', payload: {} });
    expect(noText.status).toBe(400);
    const tooLong = await decide(runId, 'ask', { operationId: 'a1', decision: 'Answer', payload: { text: 'x'.repeat(40_000) } });
    expect(tooLong.status).toBe(400);
    // blank text says nothing: refused, keyed to the text
    for (const text of ['', '   ', '\n\t ']) {
      const blank = await decide(runId, 'ask', { operationId: 'a-blank', decision: 'Answer', payload: { text } });
      expect(blank.status).toBe(400);
      expect(blank.body.error.details).toEqual([{ key: 'payload.text', message: 'must not be blank' }]);
    }
    // the cap counts UTF-8 bytes: 10,000 four-byte emoji are 20,000 UTF-16 units but 40,000 bytes
    const emoji = await decide(runId, 'ask', { operationId: 'a-emoji', decision: 'Answer', payload: { text: '😀'.repeat(10_000) } });
    expect(emoji.status).toBe(400);
    expect(emoji.body.error.details[0]).toMatchObject({ key: 'payload.text', message: expect.stringMatching(/^40000 UTF-8 bytes; at most 32768/) });
    // a comment beside an answer is refused, as the reference does
    const commented = await decide(runId, 'ask', { operationId: 'a-comment', decision: 'Answer', comment: 'fyi', payload: { text: 'hello' } });
    expect(commented.status).toBe(400);
    expect(commented.body.error.details).toEqual([{ key: 'comment', message: 'not allowed beside an answer' }]);
    expect((await decide(runId, 'ask', { operationId: 'a2', decision: 'Answer', payload: { text: 'hello' } })).status).toBe(202);
    const node = await h.db.pool.query(`SELECT decision FROM node_runs WHERE run_id = $1 AND node_key = 'ask'`, [runId]);
    expect(node.rows[0].decision).toMatchObject({ decision: 'Answer', payload: { text: 'hello' } });
  });

  it('answers 409 NodeStateConflict for a gate not waiting and for a non-gate node', async () => {
    const defId = await createDefinition(h, pauseGraph(), 'idle');
    const runId = await startRun(h, defId);
    const pending = await decide(runId, 'gate', { operationId: 'p', decision: 'Approve' });
    expect(pending.status).toBe(409);
    expect(pending.body.error.code).toBe('NodeStateConflict');
    const start = await decide(runId, 'start', { operationId: 'p', decision: 'Approve' });
    expect(start.status).toBe(409);
  });

  it('answers 404 for unknown run, unknown node and another tenant, 400 for a bad body', async () => {
    const runId = await waitingGate(pauseGraph(), 'gate', 'Approve');
    expect((await decide(runId, 'nope', { operationId: 'z', decision: 'Approve' })).status).toBe(404);
    expect((await decide('00000000-0000-4000-8000-000000000000', 'gate', { operationId: 'z', decision: 'Approve' })).status).toBe(404);
    expect((await decide(runId, 'gate', { operationId: 'z', decision: 'Approve' }, KEYS.b)).status).toBe(404);
    const bad = await decide(runId, 'gate', { decision: 'Maybe' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('ValidationFailed');
    expect(bad.body.error.details.map((d: { key: string }) => d.key).sort()).toEqual(['decision', 'operationId']);
  });
});

describe("decide on an Agent's tool call", () => {
  const agentGraph = {
    nodes: [
      { key: 'start', kind: 'Start' },
      { key: 'agent', kind: 'Agent', config: { instructions: 'refund', tools: ['echo'], toolApprovals: ['echo'] } },
      { key: 'end', kind: 'End', config: { outcome: 'done' } },
    ],
    edges: [
      { key: 'e1', from: 'start', to: 'agent' },
      { key: 'e2', from: 'agent', to: 'end' },
    ],
  };

  /** A run whose Agent parked on `echo`, its transcript's last step the request (set up directly). */
  async function parkedAgent(): Promise<string> {
    const runId = await waitingGate(agentGraph, 'agent', 'Approve');
    await h.db.pool.query(`UPDATE node_runs SET pending_decision_kind = 'ToolCall' WHERE run_id = $1 AND node_key = 'agent'`, [runId]);
    const request = { phase: 'requested', callId: 'c1', tool: 'echo', arguments: { text: 'hi' }, inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } };
    await h.db.pool.query(
      `INSERT INTO agent_steps (run_id, node_key, step, tenant_id, generation, attempt, kind, payload, bytes)
       SELECT $1, 'agent', 2, tenant_id, 1, 1, 'approval', $2::jsonb, 10 FROM runs WHERE id = $1`,
      [runId, JSON.stringify(request)],
    );
    return runId;
  }

  it('shows the pending call on the node and in the blockers', async () => {
    const runId = await parkedAgent();
    const node = await h.call('GET', `/v1/runs/${runId}/nodes/agent`);
    expect(node.status).toBe(200);
    expect(node.body).toMatchObject({ pendingDecisionKind: 'ToolCall', pendingToolCall: { step: 2, tool: 'echo', arguments: { text: 'hi' }, inputSchema: { required: ['text'] } } });
    // a live owner of the run's shard, so the blocker is the gate itself
    await h.db.pool.query(
      `INSERT INTO shard_leases (shard, owner, expires_at) SELECT shard, 'test-owner', now() + interval '1 hour' FROM runs WHERE id = $1
       ON CONFLICT (shard) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at`,
      [runId],
    );
    const blockers = await h.call('GET', `/v1/runs/${runId}/blockers`);
    expect(blockers.body.blockers).toContainEqual(expect.objectContaining({ nodeKey: 'agent', kind: 'gate', details: expect.objectContaining({ decisionKind: 'ToolCall', tool: 'echo', arguments: { text: 'hi' } }) }));
  });

  it('records an approval with edited arguments that match the tool schema', async () => {
    const runId = await parkedAgent();
    const r = await decide(runId, 'agent', { operationId: 'op-a', decision: 'Approve', payload: { arguments: { text: 'edited' } } });
    expect(r.status).toBe(202);
    const node = await h.db.pool.query(`SELECT decision FROM node_runs WHERE run_id = $1 AND node_key = 'agent'`, [runId]);
    expect(node.rows[0].decision).toMatchObject({ operationId: 'op-a', decision: 'Approve', payload: { arguments: { text: 'edited' } } });
  });

  it('refuses edited arguments the tool schema refuses (400, keyed) and keeps the gate open', async () => {
    const runId = await parkedAgent();
    const bad = await decide(runId, 'agent', { operationId: 'op-b', decision: 'Approve', payload: { arguments: { text: 3 } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'ValidationFailed', details: [expect.objectContaining({ key: 'payload.arguments' })] });
    const notObject = await decide(runId, 'agent', { operationId: 'op-c', decision: 'Approve', payload: { arguments: [1] } });
    expect(notObject.status).toBe(400);
    const node = await h.db.pool.query(`SELECT decision FROM node_runs WHERE run_id = $1 AND node_key = 'agent'`, [runId]);
    expect(node.rows[0].decision).toBeNull();
    expect((await decide(runId, 'agent', { operationId: 'op-d', decision: 'Reject', comment: 'no' })).status).toBe(202);
  });

  it('refuses an Answer (409) and a decision on an Agent that is not parked', async () => {
    const runId = await parkedAgent();
    const answer = await decide(runId, 'agent', { operationId: 'op-e', decision: 'Answer', payload: { text: 'x' } });
    expect(answer.status).toBe(409);
    expect(answer.body.error.code).toBe('DecisionNotAllowed');
    await h.db.pool.query(`UPDATE node_runs SET status = 'Running', pending_decision_kind = NULL WHERE run_id = $1 AND node_key = 'agent'`, [runId]);
    const running = await decide(runId, 'agent', { operationId: 'op-f', decision: 'Approve' });
    expect(running.status).toBe(409);
    expect(running.body.error.code).toBe('NodeStateConflict');
  });
});
