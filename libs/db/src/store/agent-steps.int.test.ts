import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, insertRunRows, type TestDatabase } from '@flowline/testing';
import { configureEncryption } from '../crypto';
import { appendAgentStep, loadAgentSteps, pendingToolCall } from './agent-steps';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});
afterEach(() => configureEncryption(null));

const run = () => insertRunRows(db.pool, { tenantId: 't-steps', status: 'Running', finishedAt: null });

describe('agent_steps', () => {
  it('keeps the first writer of a step: a second write of the same number answers the stored step', async () => {
    const runId = await run();
    const first = await appendAgentStep(db.pool, runId, 'agent', { step: 1, generation: 1, attempt: 1, kind: 'model', payload: { text: 'first' } });
    const second = await appendAgentStep(db.pool, runId, 'agent', { step: 1, generation: 1, attempt: 2, kind: 'model', payload: { text: 'second' } });
    expect(first).toMatchObject({ step: 1, attempt: 1, payload: { text: 'first' } });
    expect(second).toEqual(first);
    expect(await appendAgentStep(db.pool, '00000000-0000-4000-8000-000000000000', 'agent', { step: 1, generation: 1, attempt: 1, kind: 'model', payload: {} })).toBeNull();
  });

  it('seals each payload to its step when ENCRYPTION_KEY is set, and reads it back', async () => {
    configureEncryption('1'.repeat(64));
    const runId = await run();
    await appendAgentStep(db.pool, runId, 'agent', { step: 1, generation: 1, attempt: 1, kind: 'tool', payload: { content: 'secret result' } });
    const raw = await db.pool.query<{ payload: string }>(`SELECT payload::text FROM agent_steps WHERE run_id = $1 AND node_key = 'agent'`, [runId]);
    expect(raw.rows[0]!.payload).toContain('"$enc"');
    expect(raw.rows[0]!.payload).not.toContain('secret');
    expect((await loadAgentSteps(db.pool, runId, 'agent'))[0]!.payload).toEqual({ content: 'secret result' });
  });

  it("answers the pending tool call only while the node's last step is an unanswered request, for the run's tenant", async () => {
    const runId = await run();
    const request = { phase: 'requested', callId: 'c', tool: 'mcp:pay/refund', arguments: { amount: 3 }, inputSchema: { type: 'object' } };
    await appendAgentStep(db.pool, runId, 'agent', { step: 1, generation: 1, attempt: 1, kind: 'approval', payload: request });
    expect(await pendingToolCall(db.pool, 't-steps', runId, 'agent')).toEqual({ step: 1, tool: 'mcp:pay/refund', arguments: { amount: 3 }, inputSchema: { type: 'object' } });
    expect(await pendingToolCall(db.pool, 'other-tenant', runId, 'agent')).toBeNull();
    await appendAgentStep(db.pool, runId, 'agent', { step: 2, generation: 1, attempt: 1, kind: 'approval', payload: { phase: 'approved', callId: 'c' } });
    expect(await pendingToolCall(db.pool, 't-steps', runId, 'agent')).toBeNull();
  });
});
