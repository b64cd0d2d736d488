/**
 * `GET /v1/runs/{id}/nodes/{key}/agent-steps` against real Postgres: an Agent's transcript read
 * back opened from its sealed rows, paged by step, scoped to the key's tenant, 404 for an
 * unknown run or node. The steps are written with the LLM worker's own store function (no
 * worker runs here).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { appendAgentStep, configureEncryption } from '@flowline/db';
import { KEYS, agentGraph, createDefinition, startHarness, startRun, type Harness } from './harness';
import { MAX_AGENT_STEPS_PAGE } from '../src/routes/agent-steps';

let h: Harness;
let defId: string;
beforeAll(async () => {
  h = await startHarness();
  defId = await createDefinition(h, agentGraph({ instructions: 'look it up', tools: ['echo'] }));
});
afterAll(async () => {
  await h.close();
});
afterEach(() => configureEncryption(null));

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

async function writeTranscript(runId: string, toolSteps: number): Promise<void> {
  await appendAgentStep(h.db.pool, runId, 'agent', {
    step: 1,
    generation: 1,
    attempt: 1,
    kind: 'model',
    payload: { text: '', toolCalls: [{ id: 'c1', name: 'echo', arguments: '{"text":"hi"}' }] },
  });
  for (let i = 0; i < toolSteps; i++) {
    await appendAgentStep(h.db.pool, runId, 'agent', {
      step: 2 + i,
      generation: 1,
      attempt: 1,
      kind: 'tool',
      payload: { callId: `c${i + 1}`, name: 'echo', arguments: { text: 'hi' }, ok: true, content: `{"echoed":"result ${i + 1}"}` },
    });
  }
}

describe('GET /v1/runs/{id}/nodes/{key}/agent-steps', () => {
  it('reads the transcript opened from its sealed rows: each step with its kind, payload and time, oldest first', async () => {
    configureEncryption('2'.repeat(64));
    const runId = await startRun(h, defId);
    await writeTranscript(runId, 1);
    const raw = await h.db.pool.query<{ payload: string }>(`SELECT payload::text FROM agent_steps WHERE run_id = $1 AND step = 2`, [runId]);
    expect(raw.rows[0]!.payload).not.toContain('result 1');

    const res = await h.call('GET', `/v1/runs/${runId}/nodes/agent/agent-steps`);
    expect(res.status).toBe(200);
    expect(res.body.nextCursor).toBeNull();
    expect(res.body.items).toEqual([
      { step: 1, generation: 1, attempt: 1, kind: 'model', payload: { text: '', toolCalls: [{ id: 'c1', name: 'echo', arguments: '{"text":"hi"}' }] }, createdAt: expect.any(String) },
      {
        step: 2,
        generation: 1,
        attempt: 1,
        kind: 'tool',
        payload: { callId: 'c1', name: 'echo', arguments: { text: 'hi' }, ok: true, content: '{"echoed":"result 1"}' },
        createdAt: expect.any(String),
      },
    ]);
    expect(Number.isNaN(Date.parse(res.body.items[0].createdAt))).toBe(false);
  });

  it('pages by step with a cursor, clamps the limit to its maximum and refuses a malformed cursor', async () => {
    const runId = await startRun(h, defId);
    await writeTranscript(runId, 4);
    const first = await h.call('GET', `/v1/runs/${runId}/nodes/agent/agent-steps?limit=2`);
    expect(first.body.items.map((s: { step: number }) => s.step)).toEqual([1, 2]);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await h.call('GET', `/v1/runs/${runId}/nodes/agent/agent-steps?limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body.items.map((s: { step: number }) => s.step)).toEqual([3, 4]);
    const last = await h.call('GET', `/v1/runs/${runId}/nodes/agent/agent-steps?limit=2&cursor=${second.body.nextCursor}`);
    expect(last.body).toEqual({ items: [expect.objectContaining({ step: 5 })], nextCursor: null });

    const huge = await h.call('GET', `/v1/runs/${runId}/nodes/agent/agent-steps?limit=100000`);
    expect(huge.body.items).toHaveLength(5);
    expect(MAX_AGENT_STEPS_PAGE).toBeLessThan(100000);

    const bad = await h.call('GET', `/v1/runs/${runId}/nodes/agent/agent-steps?cursor=not-a-step`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'ValidationFailed', details: [{ key: 'cursor' }] });
  });

  it("answers an empty page for a node without steps, 404 for an unknown run or node, and 404 for another tenant's run", async () => {
    const runId = await startRun(h, defId);
    await writeTranscript(runId, 1);
    expect((await h.call('GET', `/v1/runs/${runId}/nodes/start/agent-steps`)).body).toEqual({ items: [], nextCursor: null });
    const noNode = await h.call('GET', `/v1/runs/${runId}/nodes/nope/agent-steps`);
    expect({ status: noNode.status, body: noNode.body }).toEqual({ status: 404, body: { error: { code: 'NotFound', message: 'node not found' } } });
    const noRun = await h.call('GET', `/v1/runs/${UNKNOWN}/nodes/agent/agent-steps`);
    expect({ status: noRun.status, body: noRun.body }).toEqual({ status: 404, body: { error: { code: 'NotFound', message: 'run not found' } } });
    const other = await h.call('GET', `/v1/runs/${runId}/nodes/agent/agent-steps`, { token: KEYS.b });
    expect(other.status).toBe(404);
    expect(other.body.error.message).toBe('run not found');
  });
});
