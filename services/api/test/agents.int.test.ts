/**
 * `/v1/agents` against real Postgres: saved agents with versions, the Agent node's checks on
 * their members, names unique per tenant, graphs naming them, and a run start refused once
 * the agent is gone (the run's pin and the worker's merge are in tests/e2e/saved-agents).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, agentGraph, createDefinition, startHarness, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({}, undefined, { mcp: { toolbox: null, stdioNames: new Set(['memory']), allowedHosts: new Set() } });
});
afterAll(async () => {
  await h.close();
});

const BODY = { name: 'researcher', instructions: 'Find it with the tools.', tools: ['echo', 'mcp:memory/read_graph'], toolApprovals: [{ tool: 'echo', when: { path: 'arguments.text', op: 'Exists' } }], maxIterations: 4 };

describe('/v1/agents', () => {
  it('saves an agent, writes a version on every PUT, and reads each version back', async () => {
    const made = await h.call('POST', '/v1/agents', { body: BODY });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ ...BODY, version: 1, latestVersion: 1, model: null, responseJsonSchema: null });
    const id = made.body.id as string;
    const put = await h.call('PUT', `/v1/agents/${id}`, { body: { ...BODY, instructions: 'Second take.', responseJsonSchema: { type: 'object' } } });
    expect(put.body).toMatchObject({ version: 2, instructions: 'Second take.', responseJsonSchema: { type: 'object' } });
    expect((await h.call('GET', `/v1/agents/${id}`)).body).toMatchObject({ version: 2, latestVersion: 2 });
    expect((await h.call('GET', `/v1/agents/${id}?version=1`)).body).toMatchObject({ version: 1, latestVersion: 2, instructions: BODY.instructions });
    expect((await h.call('GET', `/v1/agents/${id}/versions/1`)).body).toMatchObject({ version: 1 });
    expect((await h.call('GET', `/v1/agents/${id}/versions/3`)).status).toBe(404);
    expect((await h.call('GET', `/v1/agents/${id}/versions`)).body).toMatchObject({ items: [{ version: 2 }, { version: 1 }], nextCursor: null });
    const list = await h.call('GET', '/v1/agents?limit=1');
    expect(list.body).toMatchObject({ items: [{ id, version: 2 }] });
  });

  it('refuses a second agent of the name (AgentNameTaken) but not in another tenant', async () => {
    await h.call('POST', '/v1/agents', { body: { ...BODY, name: 'twin' } });
    const again = await h.call('POST', '/v1/agents', { body: { ...BODY, name: 'twin' } });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('AgentNameTaken');
    expect((await h.call('POST', '/v1/agents', { body: { ...BODY, name: 'twin' }, token: KEYS.b })).status).toBe(201);
  });

  it("judges the members as an Agent node's, every problem keyed to its member", async () => {
    const res = await h.call('POST', '/v1/agents', {
      body: { name: 'bad', instructions: ' ', tools: ['nope', 'mcp:nowhere/x'], toolApprovals: [{ tool: '' }], responseJsonSchema: { type: 'nope' }, maxIterations: 0 },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('ValidationFailed');
    const keys = (res.body.error.details as Array<{ key: string }>).map((d) => d.key).sort();
    expect(keys).toEqual(['instructions', 'maxIterations', 'responseJsonSchema', 'toolApprovals', 'tools', 'tools']);
    expect((await h.call('POST', '/v1/agents', { body: { name: 'x', instructions: 'y', extra: 1 } })).status).toBe(400);
  });

  it('lets a graph name the agent (no instructions of its own), and refuses a start once it is deleted, keyed to the node', async () => {
    const made = await h.call('POST', '/v1/agents', { body: { ...BODY, name: 'used' } });
    const id = made.body.id as string;
    const defId = await createDefinition(h, agentGraph({ agentDefinitionId: id, agentVersion: 1 }), 'uses-agent');
    const past = await h.call('POST', '/v1/definitions', { body: { name: 'v9', graph: agentGraph({ agentDefinitionId: id, agentVersion: 9 }) } });
    expect(past.body.error).toMatchObject({ code: 'GraphInvalid', details: [{ key: 'agent', message: expect.stringMatching(/has no version 9/) }] });
    // another tenant cannot name it
    const other = await h.call('POST', '/v1/definitions', { body: { name: 'b', graph: agentGraph({ agentDefinitionId: id }) }, token: KEYS.b });
    expect(other.body.error).toMatchObject({ code: 'GraphInvalid', details: [{ key: 'agent', message: expect.stringMatching(/unknown saved agent/) }] });

    const started = await h.call('POST', `/v1/definitions/${defId}/runs`, { body: { input: {} } });
    expect(started.status).toBe(202);
    const pins = await h.db.pool.query('SELECT agent_pins FROM runs WHERE id = $1', [started.body.runId]);
    expect(pins.rows[0]?.agent_pins).toEqual({ agent: { id, version: 1 } });
    expect((await h.call('DELETE', `/v1/agents/${id}`)).status).toBe(204);
    const refused = await h.call('POST', `/v1/definitions/${defId}/runs`, { body: { input: {} } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'GraphInvalid', details: [{ key: 'agent', message: expect.stringMatching(/saved agent .* has no version 1/) }] });
  });

  it('answers 502 McpServerUnreachable when it cannot list an MCP server (the connection test)', async () => {
    await h.call('POST', '/v1/mcp-servers', { body: { name: 'far', url: 'https://mcp.example/mcp', transport: 'streamable-http' } });
    const res = await h.call('GET', '/v1/mcp-servers/far/tools');
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('McpServerUnreachable');
    expect((await h.call('GET', '/v1/mcp-servers/none/tools')).status).toBe(404);
  });
});
