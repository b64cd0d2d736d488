/**
 * A run start re-checks that each MCP tool a definition names is still listed by its server
 * (the API's start check, against a real `@modelcontextprotocol/server-everything` over
 * streamable HTTP); a server it cannot read in time is not judged there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpToolbox, parseAllowedHosts, type McpToolbox } from '@flowline/tools';
import { mcpServerForUse } from '@flowline/db';
import { createDefinition, startHarness, type Harness } from '../../../services/api/test/harness';
import { freePort, startEverything, type EverythingServer } from './mcp-servers';

function toolGraph(toolName: string) {
  return {
    nodes: [
      { key: 'start', kind: 'Start' },
      { key: 'call', kind: 'Tool', config: { toolName, arguments: { a: 1, b: 2 } } },
      { key: 'end', kind: 'End', config: { outcome: 'done' } },
    ],
    edges: [
      { key: 'a', from: 'start', to: 'call' },
      { key: 'b', from: 'call', to: 'end' },
    ],
  };
}

describe('run start re-checks MCP tool listings (API + server-everything)', () => {
  let h: Harness;
  let everything: EverythingServer;
  let toolbox: McpToolbox;

  beforeAll(async () => {
    everything = await startEverything();
    const allowedHosts = parseAllowedHosts('127.0.0.1');
    // the harness' pool is made with the app: the resolver reads it when first asked
    let pool: Harness['db']['pool'] | null = null;
    toolbox = createMcpToolbox({ resolve: (tenant, name) => mcpServerForUse(pool!, tenant, name), allowedHosts, spawnStdio: false });
    h = await startHarness({}, undefined, { mcp: { toolbox, stdioNames: new Set(), allowedHosts, startCheckTimeoutMs: 5_000 } });
    pool = h.db.pool;
  }, 60_000);

  afterAll(async () => {
    await toolbox?.close();
    await h?.close();
    await everything?.stop();
  });

  it('starts a run of a listed tool, and refuses it, keyed to the node, once the server no longer offers it', async () => {
    const made = await h.call('POST', '/v1/mcp-servers', { body: { name: 'everything', url: everything.url, transport: 'streamable-http', allowedTools: ['echo', 'get-sum'] } });
    expect(made.status).toBe(201);
    const def = await createDefinition(h, toolGraph('mcp:everything/get-sum'), 'sum');
    expect((await h.call('POST', `/v1/definitions/${def}/runs`, { body: {} })).status).toBe(202);
    // the tenant narrows the server: get-sum is no longer offered
    const put = await h.call('PUT', '/v1/mcp-servers/everything', { body: { name: 'everything', url: everything.url, transport: 'streamable-http', allowedTools: ['echo'] } });
    expect(put.status).toBe(200);
    const refused = await h.call('POST', `/v1/definitions/${def}/runs`, { body: {} });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({
      code: 'GraphInvalid',
      details: [{ key: 'call', message: "MCP server 'everything' does not list the tool 'get-sum' now" }],
    });
  });

  it('saves a definition naming a tool the server does not list (only the server is judged at save) and refuses its start', async () => {
    await h.call('POST', '/v1/mcp-servers', { body: { name: 'all', url: everything.url, transport: 'streamable-http' } });
    const def = await createDefinition(h, toolGraph('mcp:all/no-such-tool'), 'missing');
    const refused = await h.call('POST', `/v1/definitions/${def}/runs`, { body: {} });
    expect(refused.body.error).toMatchObject({ code: 'GraphInvalid', details: [{ key: 'call', message: "MCP server 'all' does not list the tool 'no-such-tool' now" }] });
  });

  it('does not judge a tool whose server cannot be read at the start (the call judges it)', async () => {
    await h.call('POST', '/v1/mcp-servers', { body: { name: 'down', url: `http://127.0.0.1:${await freePort()}/mcp`, transport: 'streamable-http' } });
    const def = await createDefinition(h, toolGraph('mcp:down/get-sum'), 'down');
    expect((await h.call('POST', `/v1/definitions/${def}/runs`, { body: {} })).status).toBe(202);
  });
});
