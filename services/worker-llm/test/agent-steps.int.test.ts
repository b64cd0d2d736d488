import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAgentSteps } from '@flowline/db';
import type { JsonObject, WorkItem } from '@flowline/graph';
import { closeLaneQueues, createLaneQueues, enqueueWork, type LaneQueues } from '@flowline/queue';
import { cleanupRedisPrefix, createTestDatabase, insertRunRows, startFakeLlm, testRedisUrl, uniquePrefix, type FakeLlmServer, type FakeReply, type TestDatabase } from '@flowline/testing';
import { createToolRegistry, type ToolDefinition } from '@flowline/tools';
import { pgAgentSteps } from '../src/nodes/agent-transcript';
import { createProviderRegistry } from '../src/providers/registry';
import { createLlmWorker, type LlmWorker } from '../src/worker';
import { llmItem, requestsFor, returnValueOf, scriptByModel } from './helpers';

const prefix = uniquePrefix();
const url = testRedisUrl();

describe('an Agent checkpointed in Postgres (real Postgres and Redis, fake model server)', () => {
  let db: TestDatabase;
  let fake: FakeLlmServer;
  let script: (model: string, ...replies: FakeReply[]) => void;
  let redis: Redis;
  let producer: Redis;
  let queues: LaneQueues;
  let worker: LlmWorker;
  let small: LlmWorker;
  /** every run of the `pay` tool: its arguments and idempotency key */
  const paid: { args: JsonObject; key: string }[] = [];

  async function run(item: WorkItem) {
    await enqueueWork(queues, [item]);
    return (await returnValueOf(queues, item.invocationId)).outcome;
  }

  /** An Agent item of a run that exists in the database. */
  async function agentItem(config: JsonObject, overrides: Partial<WorkItem> = {}): Promise<WorkItem> {
    const runId = await insertRunRows(db.pool, { tenantId: 't-agent', status: 'Running', finishedAt: null });
    return llmItem('Agent', config, { runId, nodeKey: 'agent', agent: { generation: 1 }, ...overrides });
  }

  /** The same node's next invocation (a new job, as after a kill, a flush or a decision). */
  const again = (item: WorkItem, overrides: Partial<WorkItem> = {}): WorkItem => ({ ...item, invocationId: crypto.randomUUID(), ...overrides });

  beforeAll(async () => {
    db = await createTestDatabase();
    fake = await startFakeLlm();
    script = scriptByModel(fake);
    redis = new Redis(url, { maxRetriesPerRequest: null });
    producer = new Redis(url, { maxRetriesPerRequest: null });
    const providers = createProviderRegistry({ baseUrl: fake.url, defaultModel: 'default-model' });
    const pay: ToolDefinition = {
      name: 'pay', description: 'pays', requiresAllowedUrls: false,
      argumentsSchema: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
      run: (args, c) => {
        paid.push({ args: args as JsonObject, key: c.idempotencyKey });
        return { paid: (args as { amount: number }).amount };
      },
    };
    const tools = await createToolRegistry({ extraTools: [pay] });
    const logger = pino({ level: process.env.TEST_LOG ?? "silent" });
    const agentSteps = pgAgentSteps(db.pool);
    worker = createLlmWorker({ redis, providers, tools, logger, prefix, concurrency: 2, shutdownGraceMs: 1_000, agentSteps });
    // a second worker on its own prefix whose transcript bound is tiny
    small = createLlmWorker({ redis, providers, tools, logger, prefix: `${prefix}s`, concurrency: 1, shutdownGraceMs: 1_000, agentSteps, maxTranscriptBytes: 300 });
    await Promise.all([worker.start(), small.start()]);
    queues = createLaneQueues(producer, prefix);
  });

  afterAll(async () => {
    await Promise.all([worker.stop(), small.stop()]);
    await closeLaneQueues(queues);
    await Promise.all([redis.quit(), producer.quit()]);
    await fake.close();
    await cleanupRedisPrefix(prefix, url);
    await cleanupRedisPrefix(`${prefix}s`, url);
    await db.drop();
  });

  it('resumes from its last step: recorded model answers are not asked again, recorded tool calls do not run again', async () => {
    paid.length = 0;
    script(
      'm-resume',
      { toolCalls: [{ id: 'a', name: 'pay', arguments: { amount: 1 } }] },
      { toolCalls: [{ id: 'b', name: 'pay', arguments: { amount: 2 } }] },
      // the third model call fails the first invocation (as a worker killed there would)
      { status: 400 },
      { content: 'paid twice' },
    );
    const item = await agentItem({ instructions: 'Pay', model: 'm-resume', tools: ['pay'] });
    expect(await run(item)).toMatchObject({ ok: false });
    expect(paid.map((p) => p.args)).toEqual([{ amount: 1 }, { amount: 2 }]);
    const outcome = await run(again(item, { attempt: 2 }));
    expect(outcome).toMatchObject({
      ok: true,
      output: {
        text: 'paid twice',
        toolCalls: [{ name: 'pay', ok: true }, { name: 'pay', ok: true }],
        steps: [
          { step: 1, kind: 'model', toolCalls: 1 },
          { step: 2, kind: 'tool', name: 'pay', ok: true },
          { step: 3, kind: 'model', toolCalls: 1 },
          { step: 4, kind: 'tool', name: 'pay', ok: true },
          { step: 5, kind: 'model', toolCalls: 0 },
        ],
      },
    });
    // four model requests in all (one failed), each tool call ran once, keyed by its step
    expect(requestsFor(fake, 'm-resume')).toHaveLength(4);
    expect(paid.map((p) => p.key)).toEqual([`${item.runId}:agent:2`, `${item.runId}:agent:4`]);
    // the resumed invocation charges only the call it made; its output counts all three answers
    const o = outcome as unknown as { usage?: { totalTokens: number }; output: { usage: { totalTokens: number } } };
    expect(o.usage!.totalTokens).toBeLessThan(o.output.usage.totalTokens);
    // the last request carried both tool results, replayed from the transcript
    const last = requestsFor(fake, 'm-resume').at(-1)!;
    const fed = (last.body.messages as { role: string; content: string }[]).filter((m) => m.role === 'tool').map((m) => m.content);
    expect(fed).toEqual(['{"paid":1}', '{"paid":2}']);
    expect((await loadAgentSteps(db.pool, item.runId, 'agent')).map((s) => [s.step, s.kind, s.attempt])).toEqual([
      [1, 'model', 1], [2, 'tool', 1], [3, 'model', 1], [4, 'tool', 1], [5, 'model', 2],
    ]);
  });

  it('joins steering given after a crash to the resumed conversation, as a recorded step', async () => {
    paid.length = 0;
    script('m-steer', { toolCalls: [{ id: 'a', name: 'pay', arguments: { amount: 1 } }] }, { status: 400 }, { content: 'brief' });
    const item = await agentItem({ instructions: 'Pay', model: 'm-steer', tools: ['pay'] });
    expect(await run(item)).toMatchObject({ ok: false });
    const outcome = await run(again(item, { attempt: 2, steering: ['be brief'] }));
    expect(outcome).toMatchObject({ ok: true, output: { steps: [{ kind: 'model' }, { kind: 'tool' }, { step: 3, kind: 'steer' }, { step: 4, kind: 'model' }] } });
    const messages = requestsFor(fake, 'm-steer').at(-1)!.body.messages as { role: string; content: string }[];
    expect(messages.at(-1)).toEqual({ role: 'user', content: '## Operator steering\n1. be brief' });
    expect(messages.filter((m) => m.role === 'user')[0]!.content).not.toContain('Operator steering');
    expect(paid).toHaveLength(1);
  });

  it('parks on a tool call a person must approve, then runs it with the approved, edited arguments', async () => {
    paid.length = 0;
    script(
      'm-approve',
      { toolCalls: [{ id: 'a', name: 'pay', arguments: { amount: 5 } }] },
      { toolCalls: [{ id: 'b', name: 'pay', arguments: { amount: 500 } }] },
      { content: 'refunded' },
    );
    const config = { instructions: 'Refund', model: 'm-approve', tools: ['pay'], toolApprovals: [{ tool: 'pay', when: { path: 'arguments.amount', op: 'Gt', value: 100 } }] };
    const item = await agentItem(config);
    const parked = await run(item);
    expect(parked).toMatchObject({ ok: 'park', request: { kind: 'ToolCall', tool: 'pay', arguments: { amount: 500 }, step: 4 } });
    expect(paid.map((p) => p.args)).toEqual([{ amount: 5 }]);
    const decision = { operationId: 'op-1', decision: 'Approve' as const, comment: null, payload: { arguments: { amount: 150 } } };
    const outcome = await run(again(item, { agent: { generation: 1, decision } }));
    expect(outcome).toMatchObject({
      ok: true,
      output: {
        text: 'refunded',
        toolCalls: [{ name: 'pay', arguments: { amount: 5 }, ok: true }, { name: 'pay', arguments: { amount: 150 }, ok: true }],
        steps: [
          { step: 1, kind: 'model' }, { step: 2, kind: 'tool', ok: true }, { step: 3, kind: 'model' },
          { step: 4, kind: 'approval', name: 'pay', phase: 'requested' },
          { step: 5, kind: 'approval', name: 'pay', phase: 'approved' },
          { step: 6, kind: 'tool', name: 'pay', ok: true },
          { step: 7, kind: 'model', toolCalls: 0 },
        ],
      },
    });
    expect(paid.map((p) => p.args)).toEqual([{ amount: 5 }, { amount: 150 }]);
    expect(requestsFor(fake, 'm-approve')).toHaveLength(3);
    // the request kept the tool's input schema for the API to check edited arguments against
    const steps = await loadAgentSteps(db.pool, item.runId, 'agent');
    expect(steps[3]!.payload).toMatchObject({ phase: 'requested', inputSchema: { required: ['amount'] } });
  });

  it('hands the model a refusal as the result of a rejected call and goes on', async () => {
    paid.length = 0;
    script('m-reject', { toolCalls: [{ id: 'a', name: 'pay', arguments: { amount: 9 } }] }, { content: 'not refunded' });
    const item = await agentItem({ instructions: 'Refund', model: 'm-reject', tools: ['pay'], toolApprovals: ['pay'] });
    expect(await run(item)).toMatchObject({ ok: 'park', request: { tool: 'pay', step: 2 } });
    // the same decision delivered twice (a re-enqueued job) is applied once
    const decision = { operationId: 'op-r', decision: 'Reject' as const, comment: 'too risky', payload: null };
    const outcome = await run(again(item, { agent: { generation: 1, decision } }));
    expect(outcome).toMatchObject({ ok: true, output: { text: 'not refunded', toolCalls: [{ name: 'pay', ok: false, error: 'rejected by a person' }] } });
    expect(paid).toEqual([]);
    const fed = (requestsFor(fake, 'm-reject').at(-1)!.body.messages as { role: string; content: string }[]).filter((m) => m.role === 'tool');
    expect(fed.map((m) => m.content)).toEqual(['error: a person rejected this tool call: too risky']);
  });

  it('answers calls past maxToolCallsPerTurn with an error instead of running them', async () => {
    paid.length = 0;
    script(
      'm-turn',
      { toolCalls: [1, 2, 3].map((n) => ({ id: `c${n}`, name: 'pay', arguments: { amount: n } })) },
      { content: 'done' },
    );
    const item = await agentItem({ instructions: 'Pay', model: 'm-turn', tools: ['pay'], maxToolCallsPerTurn: 2 });
    expect(await run(item)).toMatchObject({ ok: true, output: { toolCalls: [{ ok: true }, { ok: true }] } });
    expect(paid.map((p) => p.args)).toEqual([{ amount: 1 }, { amount: 2 }]);
    const fed = (requestsFor(fake, 'm-turn').at(-1)!.body.messages as { role: string; content: string }[]).filter((m) => m.role === 'tool');
    expect(fed.map((m) => m.content)).toEqual(['{"paid":1}', '{"paid":2}', 'error: per-turn tool call limit reached']);
  });

  it('starts a fresh transcript in a new generation (an operator retry), numbering its steps after the old ones', async () => {
    paid.length = 0;
    script('m-fresh', { toolCalls: [{ id: 'a', name: 'pay', arguments: { amount: 1 } }] }, { content: 'one' }, { toolCalls: [{ id: 'a', name: 'pay', arguments: { amount: 1 } }] }, { content: 'two' });
    const item = await agentItem({ instructions: 'Pay', model: 'm-fresh', tools: ['pay'] });
    expect(await run(item)).toMatchObject({ ok: true, output: { text: 'one' } });
    const retried = await run(again(item, { attempt: 4, agent: { generation: 4 } }));
    expect(retried).toMatchObject({ ok: true, output: { text: 'two', steps: [{ step: 4, kind: 'model' }, { step: 5, kind: 'tool' }, { step: 6, kind: 'model' }] } });
    expect(paid.map((p) => p.key)).toEqual([`${item.runId}:agent:2`, `${item.runId}:agent:5`]);
    expect(requestsFor(fake, 'm-fresh')).toHaveLength(4);
  });

  it('fails the node ValidationFailed once its transcript would pass MAX_AGENT_TRANSCRIPT_BYTES', async () => {
    script('m-big', { toolCalls: [{ id: 'a', name: 'pay', arguments: { amount: 1 } }] }, { content: 'x'.repeat(400) });
    const item = await agentItem({ instructions: 'Pay', model: 'm-big', tools: ['pay'] });
    const smallQueues = createLaneQueues(producer, `${prefix}s`);
    try {
      await enqueueWork(smallQueues, [item]);
      const outcome = (await returnValueOf(smallQueues, item.invocationId)).outcome;
      expect(outcome).toMatchObject({ ok: false, failureClass: 'ValidationFailed' });
      expect(outcome.ok === false && outcome.reason).toContain('MAX_AGENT_TRANSCRIPT_BYTES (300)');
    } finally {
      await closeLaneQueues(smallQueues);
    }
  });
});
