/**
 * MCP tools in runs: the dispatcher, the real tool worker and the real LLM worker in this
 * process, against MCP servers Flowline did not write, started by the test —
 * `@modelcontextprotocol/server-everything` over streamable HTTP (a tenant's registered
 * server, behind a recording proxy) and `@modelcontextprotocol/server-memory` over stdio (the
 * deployment's, from an MCP_STDIO_SERVERS_FILE), the latter used by an Agent through the fake
 * LLM's scripted tool calls.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpServer, getNodeRun, mcpServerForUse, requestCancel, runTenantOf } from '@flowline/db';
import type { Graph, JsonObject } from '@flowline/graph';
import { publishWake, readActivity } from '@flowline/queue';
import { startFakeLlm, waitFor, type FakeLlmServer } from '@flowline/testing';
import { createToolRegistry, mcpToolboxFromConfig, type McpToolbox } from '@flowline/tools';
// The real LLM-lane worker, run in-process (tests only; services never import each other).
import { createLlmWorker, createProviderRegistry, type LlmWorker } from '../../../services/worker-llm/src/index';
import { createHarness, edge, graphOf, node, runStatuses, SHARD_COUNT, TENANT, type Harness } from '../../../services/dispatcher/test/harness';
import { startToolWorker } from '../tool-worker';
import { recordingProxy, serverEntry, startEverything, type EverythingServer, type RecordingProxy } from './mcp-servers';

const oneTool = (toolName: string, args: JsonObject, maxAttempts = 1): Graph =>
  graphOf([node('start', 'Start', {}), node('call', 'Tool', { toolName, arguments: args }, maxAttempts), node('end', 'End', { outcome: 'done' })], [edge('start', 'call'), edge('call', 'end')]);

describe('MCP tools in runs (dispatcher + tool worker + LLM worker, real MCP servers)', () => {
  let h: Harness;
  let everything: EverythingServer;
  let proxy: RecordingProxy;
  let toolbox: McpToolbox;
  let stopToolWorker: () => Promise<void>;
  let llmWorker: LlmWorker;
  let llmConn: Redis;
  let fake: FakeLlmServer;
  let memoryFile: string;

  const invocationOf = async (runId: string, key: string) =>
    (await h.db.pool.query<{ invocation_id: string | null }>('select invocation_id from node_runs where run_id = $1 and node_key = $2', [runId, key])).rows[0]?.invocation_id ?? null;
  const status = async (runId: string) => (await runStatuses(h.db, [runId])).get(runId);
  const settled = (runId: string, want: string) =>
    waitFor(async () => (await status(runId)) === want, { timeoutMs: 30_000, description: `run ${want}` });

  beforeAll(async () => {
    h = await createHarness();
    everything = await startEverything();
    proxy = await recordingProxy(everything.url);
    await createMcpServer(h.db.pool, TENANT, { name: 'everything', url: proxy.url, transport: 'streamable-http', headers: {}, allowedTools: null, timeoutMs: 20_000 });
    // the deployment's stdio server, as an operator configures it
    const dir = mkdtempSync(join(tmpdir(), 'flowline-mcp-'));
    memoryFile = join(dir, 'memory.jsonl');
    const stdioFile = join(dir, 'mcp-stdio.json');
    writeFileSync(stdioFile, JSON.stringify({ servers: { memory: { command: process.execPath, args: [serverEntry('@modelcontextprotocol/server-memory')], env: { MEMORY_FILE_PATH: memoryFile } } } }));
    const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'warn' });
    toolbox = mcpToolboxFromConfig(
      { MCP_STDIO_SERVERS_FILE: stdioFile, MCP_ALLOWED_HOSTS: '127.0.0.1', MCP_MAX_CONNECTIONS: 8, MCP_CONNECT_TIMEOUT_MS: 10_000 },
      (tenant, name) => mcpServerForUse(h.db.pool, tenant, name),
      { spawnStdio: true, logger },
    ).toolbox;
    const mcp = { toolbox, tenantOf: (runId: string) => runTenantOf(h.db.pool, runId) };
    stopToolWorker = await startToolWorker(h, 4, {}, mcp);
    fake = await startFakeLlm();
    llmConn = new Redis(h.redis.url, { maxRetriesPerRequest: null });
    llmWorker = createLlmWorker({
      redis: llmConn,
      providers: createProviderRegistry({ baseUrl: fake.url, defaultModel: 'agent-model', stream: false }),
      tools: await createToolRegistry({}),
      logger,
      prefix: h.redis.prefix,
      shardCount: SHARD_COUNT,
      concurrency: 2,
      shutdownGraceMs: 500,
      mcp,
    });
    await llmWorker.start();
    await h.startDispatcher('d1');
  }, 60_000);

  afterAll(async () => {
    await llmWorker?.stop();
    llmConn?.disconnect();
    await stopToolWorker?.();
    await toolbox?.close();
    await fake?.close();
    await proxy?.close();
    await everything?.stop();
    await h?.close();
  });

  it('runs a Tool node on a structured-output tool: the node output carries text, structured content and the blocks', async () => {
    const [runId] = await h.createRuns(oneTool('mcp:everything/get-structured-content', { location: 'Los Angeles' }), [{}]);
    await settled(runId!, 'Completed');
    const call = await getNodeRun(h.db.pool, runId!, 'call');
    expect((call!.output as { output: unknown }).output).toEqual({
      result: {
        text: JSON.stringify({ temperature: 73, conditions: 'Sunny / Clear', humidity: 48 }),
        structured: { temperature: 73, conditions: 'Sunny / Clear', humidity: 48 },
        content: [{ type: 'text', text: JSON.stringify({ temperature: 73, conditions: 'Sunny / Clear', humidity: 48 }) }],
      },
    });
  });

  it("shows a long-running tool's progress notifications as the node's activity", async () => {
    const [runId] = await h.createRuns(oneTool('mcp:everything/trigger-long-running-operation', { duration: 0.6, steps: 3 }), [{}]);
    await settled(runId!, 'Completed');
    const call = await getNodeRun(h.db.pool, runId!, 'call');
    const activity = await readActivity(h.conn, h.redis.prefix, (await invocationOf(runId!, 'call'))!);
    expect(activity.map((e) => `${e.type} ${e.text ?? ''}`)).toEqual(['phase progress 1/3', 'phase progress 2/3', 'phase progress 3/3', 'terminal succeeded']);
    expect((call!.output as { output: { result: { structured: unknown } } }).output.result.structured).toBeNull();
  });

  it('fails the node when the tool answers an error, and ValidationFailed (not retried) when the input schema refuses the arguments', async () => {
    const [failing] = await h.createRuns(oneTool('mcp:everything/gzip-file-as-resource', { name: 'x.gz', data: 'ftp://files.example/x' }), [{}]);
    await settled(failing!, 'Failed');
    const failed = await getNodeRun(h.db.pool, failing!, 'call');
    expect(failed).toMatchObject({ status: 'Failed' });
    expect(failed!.reason).toMatch(/MCP tool everything\/gzip-file-as-resource answered an error: .*Unsupported URL protocol/);

    const [refused] = await h.createRuns(oneTool('mcp:everything/get-sum', { a: 'one', b: 2 }, 3), [{}]);
    await settled(refused!, 'Failed');
    const invalid = await getNodeRun(h.db.pool, refused!, 'call');
    expect(invalid).toMatchObject({ status: 'Failed', failureClass: 'ValidationFailed', attempt: 1 });
    expect(invalid!.reason).toMatch(/^MCP tool everything\/get-sum: invalid arguments: \/a must be number/);
  });

  it('cancels a long-running MCP call when the run is cancelled: the server receives notifications/cancelled', async () => {
    const [runId] = await h.createRuns(oneTool('mcp:everything/trigger-long-running-operation', { duration: 30, steps: 30 }), [{}]);
    const invocationId = await waitFor(
      async () => {
        const n = await getNodeRun(h.db.pool, runId!, 'call');
        const id = await invocationOf(runId!, 'call');
        if (n?.status !== 'Running' || id === null) return null;
        const feed = await readActivity(h.conn, h.redis.prefix, id);
        return feed.some((e) => e.text === 'progress 1/30') ? id : null;
      },
      { timeoutMs: 20_000, description: 'the call running, one progress notification seen' },
    );
    expect((await requestCancel(h.db.pool, TENANT, runId!, 'operator cancel'))?.outcome).toBe('cancelling');
    await publishWake(h.conn, { runId: runId! }, h.redis.prefix);
    await settled(runId!, 'Cancelled');
    const request = proxy.posted.filter((m) => m.method === 'tools/call' && (m.params as { arguments?: { steps?: number } }).arguments?.steps === 30).at(-1);
    await waitFor(() => proxy.posted.some((m) => m.method === 'notifications/cancelled' && m.params?.requestId === request?.id), {
      timeoutMs: 10_000,
      description: 'notifications/cancelled for the call',
    });
    const feed = await readActivity(h.conn, h.redis.prefix, invocationId);
    expect(feed.at(-1)).toMatchObject({ type: 'terminal', text: 'failed: Cancelled' });
  });

  it('lets an Agent use the stdio memory server through scripted tool calls (mcp:memory/*)', async () => {
    fake.enqueue(
      { toolCalls: [{ name: 'mcp__memory__create_entities', arguments: { entities: [{ name: 'Ada', entityType: 'person', observations: ['wrote the first program'] }] } }] },
      { toolCalls: [{ name: 'mcp__memory__search_nodes', arguments: { query: 'Ada' } }] },
      { content: 'Ada wrote the first program.' },
    );
    const graph = graphOf(
      [
        node('start', 'Start', {}),
        node('agent', 'Agent', { instructions: 'Remember Ada, then look her up.', tools: ['mcp:memory/*'] }),
        node('end', 'End', { outcome: 'done' }),
      ],
      [edge('start', 'agent'), edge('agent', 'end')],
    );
    const [runId] = await h.createRuns(graph, [{}]);
    await settled(runId!, 'Completed');
    const agent = await getNodeRun(h.db.pool, runId!, 'agent');
    expect((agent!.output as { output: unknown }).output).toMatchObject({
      text: 'Ada wrote the first program.',
      toolCalls: [
        { name: 'mcp:memory/create_entities', ok: true },
        { name: 'mcp:memory/search_nodes', arguments: { query: 'Ada' }, ok: true },
      ],
    });
    const requests = fake.requests;
    const offered = (requests[0]!.body.tools as Array<{ function: { name: string; parameters: { properties?: object } } }>).map((t) => t.function);
    expect(offered.map((f) => f.name)).toEqual(expect.arrayContaining(['mcp__memory__create_entities', 'mcp__memory__read_graph', 'mcp__memory__search_nodes']));
    expect(offered.find((f) => f.name === 'mcp__memory__search_nodes')?.parameters.properties).toHaveProperty('query');
    // the server's answer to the search was fed back to the model
    const messages = requests[2]!.body.messages as Array<{ role: string; content: string }>;
    expect(messages.filter((m) => m.role === 'tool').at(-1)?.content).toContain('wrote the first program');
    // the stdio server really kept it
    expect(readFileSync(memoryFile, 'utf8')).toContain('"name":"Ada"');
  });
});
