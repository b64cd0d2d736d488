/**
 * Durable Agent steps and tool calls a person approves, through a whole cluster (API,
 * dispatcher, LLM worker) with a fake OpenAI-compatible provider scripting the model's tool
 * calls and `@modelcontextprotocol/server-memory` (over stdio, the deployment's MCP server) as
 * the tool whose effects are counted: its memory file outlives every worker.
 *
 * (a) An Agent whose third tool call needs approval parks, holding no LLM job, is approved with
 * edited arguments over REST and completes; rejected, the model gets the refusal and the run
 * still completes. (b) The LLM worker is killed (SIGKILL) at the Agent's 4th step and Redis is
 * flushed at its 6th: the run completes, every model call was answered once, every tool call ran
 * once.
 */
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closeLaneQueues, createLaneQueues } from '@flowline/queue';
import { MEMORY_TOOL_CALLS, memoryAgentWithApproval, nodeOf, startE2eCluster, startFakeLlm, waitFor, type E2eCluster, type FakeLlmRequest, type FakeLlmServer, type FakeReply } from '@flowline/testing';

const require = createRequire(import.meta.url);
const memoryEntry = join(dirname(require.resolve('@modelcontextprotocol/server-memory/package.json')), 'dist', 'index.js');

const CREATE = MEMORY_TOOL_CALLS.create;
const DELETE = MEMORY_TOOL_CALLS.delete;
const graph = memoryAgentWithApproval;

const toolMessages = (req: FakeLlmRequest) => (req.body.messages as { role: string; content: string }[]).filter((m) => m.role === 'tool');
const create = (id: string, name: string) => ({ toolCalls: [{ id, name: CREATE, arguments: { entities: [{ name, entityType: 'note', observations: [] }] } }] });

describe('durable Agent steps and tool approvals on a whole cluster', () => {
  let c: E2eCluster;
  let llm: FakeLlmServer;
  let memoryFile: string;
  /** model → position (tool results seen) → times answered */
  const answered = new Map<string, Map<number, number>>();
  /** model → positions held (never answered) the first time they are asked */
  const holds = new Map<string, Set<number>>();
  const held: { model: string; at: number }[] = [];

  /** The scripted Agent: at position n (n tool results seen) the model answers `script[n]`. */
  const scripts: Record<string, (n: number) => FakeReply> = {
    'm-approve': (n) => (n === 0 ? create('c1', 'approve-1') : n === 1 ? create('c2', 'approve-2') : n === 2 ? { toolCalls: [{ id: 'c3', name: DELETE, arguments: { entityNames: ['approve-1'] } }] } : { content: 'tidied' }),
    'm-reject': (n) => (n === 0 ? create('c1', 'reject-1') : n === 1 ? create('c2', 'reject-2') : n === 2 ? { toolCalls: [{ id: 'c3', name: DELETE, arguments: { entityNames: ['reject-1'] } }] } : { content: 'left as is' }),
    'm-durable': (n) => (n < 5 ? create(`c${n + 1}`, `durable-${n + 1}`) : { content: 'five notes' }),
  };

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flowline-agent-e2e-'));
    memoryFile = join(dir, 'memory.jsonl');
    const stdioFile = join(dir, 'mcp-stdio.json');
    writeFileSync(stdioFile, JSON.stringify({ servers: { memory: { command: process.execPath, args: [memoryEntry], env: { MEMORY_FILE_PATH: memoryFile } } } }));
    llm = await startFakeLlm({
      handler: (req) => {
        const model = String(req.body.model);
        const n = toolMessages(req).length;
        const hold = holds.get(model);
        if (hold?.has(n)) {
          hold.delete(n);
          held.push({ model, at: n });
          return { hang: true };
        }
        const counts = answered.get(model) ?? new Map<number, number>();
        answered.set(model, counts);
        counts.set(n, (counts.get(n) ?? 0) + 1);
        return scripts[model]?.(n) ?? { content: 'unscripted' };
      },
    });
    c = await startE2eCluster({
      dispatchers: 1,
      toolWorkers: 0,
      llmWorkers: 1,
      env: { LLM_BASE_URL: `${llm.url}/v1`, LLM_MODEL: 'fake-model', LLM_STREAM: '0', MCP_STDIO_SERVERS_FILE: stdioFile, WORKER_LOCK_MS: '3000' },
    });
  }, 120_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') process.stdout.write(`${c.lines.slice(-80).join('\n')}\n`);
  });

  afterAll(async () => {
    await c?.close();
    await llm?.close();
  });

  /** Entities the memory server holds, by name, with how many times each was written. */
  function entities(): Map<string, number> {
    const out = new Map<string, number>();
    if (!existsSync(memoryFile)) return out;
    for (const line of readFileSync(memoryFile, 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      const e = JSON.parse(line) as { type: string; name?: string };
      if (e.type === 'entity' && e.name) out.set(e.name, (out.get(e.name) ?? 0) + 1);
    }
    return out;
  }

  /** Jobs of the llm lane that hold or wait for a worker. */
  async function llmJobs(): Promise<number> {
    const queues = createLaneQueues(c.redis, c.queuePrefix);
    try {
      const counts = await queues.llm.getJobCounts('active', 'waiting', 'delayed', 'prioritized');
      return Object.values(counts).reduce((a, b) => a + b, 0);
    } finally {
      await closeLaneQueues(queues);
    }
  }

  async function parked(runId: string) {
    return c.api.waitForRun(runId, (v) => v.run.status === 'WaitingForApproval' && nodeOf(v, 'agent')?.status === 'WaitingForApproval', 60_000, 'agent parked');
  }

  it('parks on the third tool call holding no LLM job, runs it with the arguments a person edited, and completes', async () => {
    const runId = await c.api.startRun(await c.api.createDefinition('approve', graph('m-approve')), {});
    await parked(runId);
    const node = await c.api.send('GET', `/v1/runs/${runId}/nodes/agent`);
    expect(node.body).toMatchObject({ pendingDecisionKind: 'ToolCall', pendingToolCall: { tool: 'mcp:memory/delete_entities', arguments: { entityNames: ['approve-1'] } } });
    const blockers = await c.api.send('GET', `/v1/runs/${runId}/blockers`);
    expect(blockers.body.blockers).toContainEqual(expect.objectContaining({ nodeKey: 'agent', kind: 'gate', details: expect.objectContaining({ decisionKind: 'ToolCall', tool: 'mcp:memory/delete_entities' }) }));
    const requested = (await c.api.events(runId)).find((e) => e.kind === 'gate.requested') as { detail?: Record<string, unknown> } | undefined;
    expect(requested?.detail).toMatchObject({ decisionKind: 'ToolCall', tool: 'mcp:memory/delete_entities', arguments: { entityNames: ['approve-1'] } });
    // nothing of the run holds (or waits for) an LLM worker while a person thinks
    expect(await llmJobs()).toBe(0);
    expect([...entities().keys()]).toEqual(expect.arrayContaining(['approve-1', 'approve-2']));

    // edited arguments the tool's schema refuses are a keyed 400 and the gate stays open
    const bad = await c.api.send('POST', `/v1/runs/${runId}/nodes/agent/decide`, { operationId: randomUUID(), decision: 'Approve', payload: { arguments: { entityNames: 'approve-2' } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].key).toBe('payload.arguments');
    const ok = await c.api.send('POST', `/v1/runs/${runId}/nodes/agent/decide`, { operationId: randomUUID(), decision: 'Approve', payload: { arguments: { entityNames: ['approve-2'] } } });
    expect(ok.status).toBe(202);

    const done = await c.api.waitForRun(runId, (v) => v.run.status === 'Completed', 60_000, 'run completed');
    expect(nodeOf(done, 'agent')).toMatchObject({ status: 'Succeeded', attempt: 1 });
    // the edited call ran: approve-2 is gone, approve-1 (what the model asked to delete) stays
    const left = entities();
    expect(left.has('approve-1')).toBe(true);
    expect(left.has('approve-2')).toBe(false);
    const out = await c.api.send('GET', `/v1/runs/${runId}/nodes/agent`);
    expect(out.body.output.output.steps.filter((s: { kind: string }) => s.kind === 'approval').map((s: { phase: string }) => s.phase)).toEqual(['requested', 'approved']);
    // every model call of the loop was answered once, the park and resume included
    expect([...answered.get('m-approve')!.values()]).toEqual([1, 1, 1, 1]);
  }, 120_000);

  it('hands the model the refusal of a rejected call, and the run still completes', async () => {
    const runId = await c.api.startRun(await c.api.createDefinition('reject', graph('m-reject')), {});
    await parked(runId);
    await c.api.decide(runId, 'agent', 'Reject', 'keep it');
    const done = await c.api.waitForRun(runId, (v) => v.run.status === 'Completed', 60_000, 'run completed');
    expect(nodeOf(done, 'agent')?.status).toBe('Succeeded');
    expect(entities().has('reject-1')).toBe(true);
    const last = llm.requests.filter((r) => r.body.model === 'm-reject' && !r.aborted).at(-1)!;
    expect(toolMessages(last).at(-1)?.content).toBe('error: a person rejected this tool call: keep it');
  }, 120_000);

  it('survives a kill -9 of its LLM worker at its 4th step and a Redis flush at its 6th: no model call answered twice, no tool call run twice', async () => {
    // the 3rd model call (after step 4, the 2nd tool result) and the 4th (after step 6) are held the first time
    holds.set('m-durable', new Set([2, 3]));
    const runId = await c.api.startRun(await c.api.createDefinition('durable', graph('m-durable')), {});
    const stepsWritten = async () => (await c.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM agent_steps WHERE run_id = $1`, [runId])).rows[0]!.n;
    const heldAt = (n: number) => held.some((h) => h.model === 'm-durable' && h.at === n);

    await waitFor(async () => heldAt(2) && (await stepsWritten()) === 4, { timeoutMs: 60_000, description: 'step 4 written, the next model call in flight' });
    await c.cluster.kill('worker-llm-1', 'SIGKILL');
    c.cluster.launch({ label: 'worker-llm-2', service: 'worker-llm' });

    await waitFor(async () => heldAt(3) && (await stepsWritten()) === 6, { timeoutMs: 90_000, description: 'step 6 written, the next model call in flight' });
    // the cluster's own redis-server: FLUSHALL disturbs no other test
    await c.redis.flushall();

    const done = await c.api.waitForRun(runId, (v) => v.run.status === 'Completed', 90_000, 'run completed');
    expect(nodeOf(done, 'agent')?.status).toBe('Succeeded');
    // six model answers (five tool turns and the final one), each position answered exactly once
    expect([...answered.get('m-durable')!.entries()].sort((a, b) => a[0] - b[0])).toEqual([[0, 1], [1, 1], [2, 1], [3, 1], [4, 1], [5, 1]]);
    // five tool calls, each run once: the memory server holds each entity once
    const notes = [...entities().entries()].filter(([name]) => name.startsWith('durable-'));
    expect(notes.sort()).toEqual([1, 2, 3, 4, 5].map((i) => [`durable-${i}`, 1]));
    const out = await c.api.send('GET', `/v1/runs/${runId}/nodes/agent`);
    expect(out.body.output.output.toolCalls).toHaveLength(5);
    expect(out.body.output.output.steps.map((s: { kind: string }) => s.kind)).toEqual(['model', 'tool', 'model', 'tool', 'model', 'tool', 'model', 'tool', 'model', 'tool', 'model']);
  }, 240_000);
});
