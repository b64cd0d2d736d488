/**
 * The cached tool listing of a session is dropped when the server sends
 * `notifications/tools/list_changed`. The packaged servers never change their tools while a
 * client is connected, so this one test uses a server built here with the official SDK
 * (streamable HTTP, a tool registered mid-session).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { waitFor } from '@flowline/testing';
import { createMcpToolbox, parseAllowedHosts, type McpServerSpec, type McpToolbox } from '@flowline/tools';

describe('MCP tool listing cache', () => {
  let mcp: McpServer;
  let http: Server;
  let toolbox: McpToolbox;

  beforeAll(async () => {
    mcp = new McpServer({ name: 'changing', version: '1' }, { capabilities: { tools: { listChanged: true } } });
    mcp.registerTool('first', { description: 'the first tool' }, async () => ({ content: [{ type: 'text', text: 'one' }] }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
    await mcp.connect(transport);
    http = createServer((req, res) => void transport.handleRequest(req, res));
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
    const spec: McpServerSpec = { name: 'changing', transport: 'streamable-http', url, headers: {}, allowedTools: null, timeoutMs: 5_000, version: 1 };
    toolbox = createMcpToolbox({ resolve: async () => spec, allowedHosts: parseAllowedHosts('127.0.0.1') });
  });

  afterAll(async () => {
    await toolbox.close();
    await mcp.close();
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  });

  it('reads the listing again after notifications/tools/list_changed, so a tool added mid-session can be called', async () => {
    expect((await toolbox.expand('t', 'mcp:changing/*')).map((t) => t.name)).toEqual(['first']);
    mcp.registerTool('second', { description: 'added later' }, async () => ({ content: [{ type: 'text', text: 'two' }] }));
    await waitFor(async () => (await toolbox.expand('t', 'mcp:changing/*')).length === 2, { timeoutMs: 5_000, description: 'the new listing' });
    expect(await toolbox.call('t', 'mcp:changing/second', {}, { signal: new AbortController().signal })).toMatchObject({ text: 'two' });
  });
});
