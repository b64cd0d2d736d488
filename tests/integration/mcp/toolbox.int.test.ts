import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@flowline/testing';
import { createMcpToolbox, parseAllowedHosts, ToolError, type McpProgress, type McpServerSpec, type McpToolbox } from '@flowline/tools';
import { freePort, recordingProxy, startEverything, type EverythingServer, type RecordingProxy } from './mcp-servers';

const LOCAL = parseAllowedHosts('127.0.0.1');
const never = () => new AbortController().signal;

function remote(name: string, url: string, extra: Partial<McpServerSpec> = {}): McpServerSpec {
  return { name, transport: 'streamable-http', url, headers: {}, allowedTools: null, timeoutMs: 20_000, version: 1, ...extra } as McpServerSpec;
}

async function failure(p: Promise<unknown>): Promise<ToolError> {
  const err = await p.then(() => null, (e: unknown) => e);
  if (!(err instanceof ToolError)) throw new Error(`expected a ToolError, got ${String(err)}`);
  return err;
}

describe('MCP toolbox against @modelcontextprotocol/server-everything (streamable HTTP)', () => {
  let everything: EverythingServer;
  let proxy: RecordingProxy;
  let toolbox: McpToolbox;
  const servers = new Map<string, McpServerSpec>();

  beforeAll(async () => {
    everything = await startEverything();
    proxy = await recordingProxy(everything.url);
    servers.set('everything', remote('everything', proxy.url));
    servers.set('narrow', remote('narrow', everything.url, { allowedTools: ['echo'] }));
    servers.set('down', remote('down', `http://127.0.0.1:${await freePort()}/mcp`));
    toolbox = createMcpToolbox({ resolve: async (tenant, name) => (tenant === 't1' ? (servers.get(name) ?? null) : null), allowedHosts: LOCAL });
  }, 60_000);

  afterAll(async () => {
    await toolbox.close();
    await proxy.close();
    await everything.stop();
  });

  it('lists the tools of a server and of a wildcard, narrowed by allowedTools', async () => {
    const all = await toolbox.expand('t1', 'mcp:everything/*');
    expect(all.map((t) => t.name)).toEqual(expect.arrayContaining(['echo', 'get-sum', 'get-structured-content', 'trigger-long-running-operation']));
    expect(all.find((t) => t.name === 'get-sum')).toMatchObject({ ref: 'mcp:everything/get-sum', inputSchema: { type: 'object' } });
    expect((await toolbox.expand('t1', 'mcp:narrow/*')).map((t) => t.name)).toEqual(['echo']);
    expect((await failure(toolbox.expand('t1', 'mcp:narrow/get-sum'))).code).toBe('McpToolNotListed');
  });

  it('maps a text-only result and a structured one', async () => {
    expect(await toolbox.call('t1', 'mcp:everything/echo', { message: 'hi' }, { signal: never() })).toEqual({
      text: 'Echo: hi',
      structured: null,
      content: [{ type: 'text', text: 'Echo: hi' }],
    });
    const weather = await toolbox.call('t1', 'mcp:everything/get-structured-content', { location: 'Chicago' }, { signal: never() });
    expect(weather).toMatchObject({ structured: { temperature: 36, conditions: 'Light rain / drizzle', humidity: 82 } });
  });

  it('refuses arguments the inputSchema refuses before calling (ValidationFailed)', async () => {
    const before = proxy.posted.filter((m) => m.method === 'tools/call').length;
    const err = await failure(toolbox.call('t1', 'mcp:everything/get-structured-content', { location: 'Paris' }, { signal: never() }));
    expect(err).toMatchObject({ failureClass: 'ValidationFailed', code: 'ToolArgumentsInvalid' });
    expect(err.message).toMatch(/^MCP tool everything\/get-structured-content: invalid arguments: \/location must be equal to one of the allowed values/);
    expect(proxy.posted.filter((m) => m.method === 'tools/call').length).toBe(before);
  });

  it('fails NodeFailed McpToolFailed when the tool answers an error', async () => {
    const err = await failure(toolbox.call('t1', 'mcp:everything/gzip-file-as-resource', { name: 'x.gz', data: 'ftp://files.example/x', outputType: 'resource' }, { signal: never() }));
    expect(err).toMatchObject({ failureClass: 'NodeFailed', code: 'McpToolFailed' });
    expect(err.message).toMatch(/^MCP tool everything\/gzip-file-as-resource answered an error: .*Unsupported URL protocol/);
  });

  it('reports progress notifications of a long-running tool', async () => {
    const seen: McpProgress[] = [];
    const out = await toolbox.call('t1', 'mcp:everything/trigger-long-running-operation', { duration: 0.4, steps: 4 }, { signal: never(), onProgress: (p) => seen.push(p) });
    expect(out).toMatchObject({ text: expect.stringContaining('Long running operation completed') });
    expect(seen).toEqual([1, 2, 3, 4].map((progress) => ({ progress, total: 4 })));
  });

  it('cancels a long-running call mid-way: the server receives notifications/cancelled for it', async () => {
    const ac = new AbortController();
    const seen: McpProgress[] = [];
    const call = toolbox.call('t1', 'mcp:everything/trigger-long-running-operation', { duration: 30, steps: 30 }, {
      signal: ac.signal,
      onProgress: (p) => {
        seen.push(p);
        if (seen.length === 1) ac.abort(new ToolError('Cancelled', 'the invocation was cancelled: test'));
      },
    });
    const err = await failure(call);
    expect(err).toMatchObject({ failureClass: 'Cancelled', message: 'the invocation was cancelled: test' });
    const request = proxy.posted.filter((m) => m.method === 'tools/call' && (m.params as { name?: string }).name === 'trigger-long-running-operation').at(-1);
    await waitFor(() => proxy.posted.some((m) => m.method === 'notifications/cancelled' && m.params?.requestId === request?.id), {
      timeoutMs: 5_000,
      description: 'notifications/cancelled for the call',
    });
  });

  it('fails retryable McpServerUnreachable when nothing listens, and ValidationFailed for an unknown server', async () => {
    const err = await failure(toolbox.call('t1', 'mcp:down/echo', { message: 'x' }, { signal: never() }));
    expect(err).toMatchObject({ failureClass: 'NodeFailed', code: 'McpServerUnreachable', retryable: true });
    expect((await failure(toolbox.call('t2', 'mcp:everything/echo', { message: 'x' }, { signal: never() }))).code).toBe('McpServerUnknown');
    expect(await toolbox.listedNames('t1', 'down')).toBeNull();
  });

  it('refuses a loopback server outside MCP_ALLOWED_HOSTS without connecting, by IP literal and by a name resolving to it', async () => {
    const byName = everything.url.replace('127.0.0.1', 'localhost');
    const strict = createMcpToolbox({ resolve: async (_t, name) => remote(name, name === 'byname' ? byName : everything.url) });
    try {
      const err = await failure(strict.call('t1', 'mcp:everything/echo', { message: 'x' }, { signal: never() }));
      expect(err).toMatchObject({ failureClass: 'ValidationFailed', message: expect.stringMatching(/127\.0\.0\.1 is a private address \(allow it with MCP_ALLOWED_HOSTS\)/) });
      const named = await failure(strict.call('t1', 'mcp:byname/echo', { message: 'x' }, { signal: never() }));
      expect(named).toMatchObject({ failureClass: 'ValidationFailed', message: expect.stringMatching(/localhost resolves to a private address/) });
    } finally {
      await strict.close();
    }
  });

  it('calls a server over the older HTTP+SSE transport', async () => {
    const sse = await startEverything('sse');
    const viaSse = createMcpToolbox({ resolve: async () => remote('old', sse.url, { transport: 'sse' } as Partial<McpServerSpec>), allowedHosts: LOCAL });
    try {
      expect(await viaSse.call('t1', 'mcp:old/get-sum', { a: 2, b: 3 }, { signal: never() })).toMatchObject({ text: expect.stringContaining('5') });
    } finally {
      await viaSse.close();
      await sse.stop();
    }
  });
});
