/**
 * `/v1/mcp-servers` against real Postgres: a tenant's servers (headers never read back),
 * the URL guard, names the deployment's stdio servers hold, and graph validation naming
 * `mcp:` tools (server existence here; tool listings at a run start are in
 * tests/integration/mcp, against a real server).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, createDefinition, startHarness, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({}, undefined, { mcp: { toolbox: null, stdioNames: new Set(['memory']), allowedHosts: new Set(['10.1.2.3']) } });
});
afterAll(async () => {
  await h.close();
});

const BODY = { name: 'docs', url: 'https://mcp.example/mcp', transport: 'streamable-http', headers: { Authorization: 'Bearer s3cret' } };

function toolGraph(toolName: string) {
  return {
    nodes: [
      { key: 'start', kind: 'Start' },
      { key: 'call', kind: 'Tool', config: { toolName, arguments: { q: 'x' } } },
      { key: 'end', kind: 'End', config: { outcome: 'done' } },
    ],
    edges: [
      { key: 'a', from: 'start', to: 'call' },
      { key: 'b', from: 'call', to: 'end' },
    ],
  };
}

describe('/v1/mcp-servers', () => {
  it('registers a server, shows header names but never their values, and reads it by id or name', async () => {
    const made = await h.call('POST', '/v1/mcp-servers', { body: BODY });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ name: 'docs', transport: 'streamable-http', headerNames: ['Authorization'], allowedTools: null, timeoutMs: 30_000, version: 1 });
    expect(made.res.headers.get('location')).toBe(`/v1/mcp-servers/${made.body.id}`);
    for (const path of ['/v1/mcp-servers', `/v1/mcp-servers/${made.body.id}`, '/v1/mcp-servers/docs']) {
      const read = await h.call('GET', path);
      expect(read.status).toBe(200);
      expect(JSON.stringify(read.body)).not.toContain('s3cret');
    }
    expect((await h.call('GET', '/v1/mcp-servers')).body.items.map((s: { name: string }) => s.name)).toEqual(['docs']);
    expect((await h.call('GET', '/v1/mcp-servers', { token: KEYS.b })).body.items).toEqual([]);
    expect((await h.call('GET', '/v1/mcp-servers/docs', { token: KEYS.b })).status).toBe(404);
  });

  it('keeps the headers on a PUT without them and bumps the version', async () => {
    const { headers: _h, ...withoutHeaders } = BODY;
    const put = await h.call('PUT', '/v1/mcp-servers/docs', { body: { ...withoutHeaders, allowedTools: ['search'], timeoutMs: 5_000 } });
    expect(put.body).toMatchObject({ headerNames: ['Authorization'], allowedTools: ['search'], timeoutMs: 5_000, version: 2 });
    const cleared = await h.call('PUT', '/v1/mcp-servers/docs', { body: { ...BODY, headers: {} } });
    expect(cleared.body).toMatchObject({ headerNames: [], allowedTools: null, version: 3 });
  });

  it('refuses a taken name, a stdio server name, a private address outside MCP_ALLOWED_HOSTS and bad members', async () => {
    const refused = async (body: unknown) => {
      const r = await h.call('POST', '/v1/mcp-servers', { body });
      return `${r.status} ${r.body.error?.code}`;
    };
    expect(await refused(BODY)).toBe('409 McpServerNameTaken');
    expect(await refused({ ...BODY, name: 'memory' })).toBe('409 McpServerNameTaken');
    expect(await refused({ ...BODY, name: 'local', url: 'http://127.0.0.1:9/mcp' })).toBe('400 ValidationFailed');
    expect(await refused({ ...BODY, name: 'meta', url: 'http://[::ffff:169.254.169.254]/mcp' })).toBe('400 ValidationFailed');
    expect(await refused({ ...BODY, name: 'creds', url: 'https://user:pw@mcp.example/mcp' })).toBe('400 ValidationFailed');
    expect(await refused({ ...BODY, name: 'bad name' })).toBe('400 ValidationFailed');
    expect(await refused({ ...BODY, name: '6f1c1d1e-9a4b-4c55-8a0e-1b2c3d4e5f60' })).toBe('400 ValidationFailed');
    expect(await refused({ ...BODY, name: 'stdio', transport: 'stdio', command: 'sh' })).toBe('400 ValidationFailed');
    expect(await refused({ ...BODY, name: 'dup', allowedTools: ['a', 'a'] })).toBe('400 ValidationFailed');
    // an allow-listed private host is accepted
    expect(await refused({ ...BODY, name: 'inside', url: 'http://10.1.2.3:8080/mcp' })).toBe('201 undefined');
  });

  it("validates a graph's mcp: tools against the tenant's servers and the deployment's stdio ones", async () => {
    const ok = await h.call('POST', '/v1/definitions/validate', { body: { graph: toolGraph('mcp:docs/search') } });
    expect(ok.body).toMatchObject({ valid: true });
    expect((await h.call('POST', '/v1/definitions/validate', { body: { graph: toolGraph('mcp:memory/read_graph') } })).body.valid).toBe(true);
    const unknown = await h.call('POST', '/v1/definitions', { body: { name: 'x', graph: toolGraph('mcp:nowhere/search') } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: 'GraphInvalid', details: [{ key: 'call', message: expect.stringContaining("unknown MCP server 'nowhere'") }] });
    // another tenant's server is not this tenant's
    const other = await h.call('POST', '/v1/definitions/validate', { body: { graph: toolGraph('mcp:docs/search') }, token: KEYS.b });
    expect(other.body.valid).toBe(false);
  });

  it('refuses a run start once the server is deleted, keyed to the node, and creates nothing', async () => {
    await h.call('POST', '/v1/mcp-servers', { body: { ...BODY, name: 'brief' } });
    const def = await createDefinition(h, toolGraph('mcp:brief/search'), 'uses-brief');
    const started = await h.call('POST', `/v1/definitions/${def}/runs`, { body: {} });
    expect(started.status).toBe(202);
    expect((await h.call('DELETE', '/v1/mcp-servers/brief')).status).toBe(204);
    expect((await h.call('DELETE', '/v1/mcp-servers/brief')).status).toBe(404);
    const refused = await h.call('POST', `/v1/definitions/${def}/runs`, { body: {} });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'GraphInvalid', details: [{ key: 'call', message: expect.stringContaining("unknown MCP server 'brief'") }] });
    const runs = await h.db.pool.query('select count(*)::int as n from runs where definition_id = $1', [def]);
    expect(runs.rows[0].n).toBe(1);
  });
});
