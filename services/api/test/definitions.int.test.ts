import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertDefinition } from '@flowline/db';
import { parseGraph } from '@flowline/graph';
import { KEYS, createDefinition, lineGraph, pauseGraph, startHarness, startRun, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

describe('definitions', () => {
  it('creates a definition and answers 201 with the exact definition shape', async () => {
    const r = await h.call('POST', '/v1/definitions', { body: { name: 'approval', description: 'd', graph: pauseGraph() } });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual(
      ['createdAt', 'description', 'enabled', 'graph', 'graphHash', 'id', 'kind', 'name', 'nodeCount', 'updatedAt', 'version'].sort(),
    );
    expect(r.body).toMatchObject({ name: 'approval', description: 'd', kind: 'Standard', version: 1, nodeCount: 4 });
    expect(r.body.graphHash).toMatch(/^[0-9a-f]{64}$/);
    expect(r.body.graph).toEqual(pauseGraph());
    expect(new Date(r.body.createdAt).toISOString()).toBe(r.body.createdAt);
  });

  it('refuses an invalid graph with 400 GraphInvalid listing every keyed error and the warnings', async () => {
    const graph = {
      nodes: [
        { key: 'a', kind: 'Start' },
        { key: 'b', kind: 'Tool', config: { toolName: 'nope', bogus: 1 } },
        { key: 'c', kind: 'End', config: {} },
      ],
      edges: [
        { key: 'x', from: 'a', to: 'b' },
        { key: 'y', from: 'b', to: 'c' },
      ],
    };
    const r = await h.call('POST', '/v1/definitions', { body: { name: 'bad', graph } });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('GraphInvalid');
    expect(Array.isArray(r.body.warnings)).toBe(true);
    const keyed = r.body.error.details.map((d: { key: string }) => d.key);
    expect(keyed).toEqual(expect.arrayContaining(['b', 'c']));
    expect(r.body.error.details.length).toBeGreaterThanOrEqual(3);
  });

  it('refuses a body without a name with 400 ValidationFailed keyed by member', async () => {
    const r = await h.call('POST', '/v1/definitions', { body: { graph: lineGraph() } });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('ValidationFailed');
    expect(r.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ key: 'name' })]));
  });

  it('validates a graph without saving it', async () => {
    const ok = await h.call('POST', '/v1/definitions/validate', { body: { graph: lineGraph() } });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ valid: true, errors: [], warnings: [] });
    const bad = await h.call('POST', '/v1/definitions/validate', { body: { graph: { nodes: [], edges: [] } } });
    expect(bad.status).toBe(200);
    expect(bad.body.valid).toBe(false);
    expect(bad.body.errors.length).toBeGreaterThan(0);
  });

  it('warns when the Start defaultInput breaks the graph-level inputSchema, as it does for a Start-level one', async () => {
    const graph = { ...lineGraph(), inputSchema: { type: 'object', required: ['q'] } };
    graph.nodes[0] = { key: 'start', kind: 'Start', config: { defaultInput: { other: 1 } } } as never;
    const r = await h.call('POST', '/v1/definitions/validate', { body: { graph } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ valid: true, errors: [], warnings: [{ key: 'start', message: expect.stringMatching(/defaultInput does not satisfy the graph inputSchema/) }] });
    // and the run it warns about is indeed refused when it starts from that default
    const defId = await createDefinition(h, graph, 'default-breaks-graph-schema');
    const run = await h.call('POST', `/v1/definitions/${defId}/runs`, { body: {} });
    expect(run.status).toBe(400);
    expect(run.body.error.details.map((d: { key: string }) => d.key)).toEqual(['inputSchema']);
  });

  it('keeps a graph argument written with an exponent in its own short form, stored and read back', async () => {
    const graph = `{"nodes":[{"key":"start","kind":"Start"},{"key":"t","kind":"Tool","config":{"toolName":"echo","arguments":{"n":1e100000}}},{"key":"end","kind":"End","config":{"outcome":"done"}}],"edges":[{"key":"e1","from":"start","to":"t"},{"key":"e2","from":"t","to":"end"}]}`;
    const r = await h.call('POST', '/v1/definitions', { raw: `{"name":"exponent-argument","graph":${graph}}` });
    expect(r.status).toBe(201);
    const stored = await h.db.pool.query<{ g: number; p: number; r: number }>(
      `SELECT length(d.graph::text) AS g, length(d.plan_graph::text) AS p, (SELECT max(length(v.graph::text)) FROM definition_versions v WHERE v.definition_id = d.id) AS r FROM definitions d WHERE d.id = $1`,
      [r.body.id],
    );
    expect(Math.max(stored.rows[0]!.g, stored.rows[0]!.p, stored.rows[0]!.r ?? 0)).toBeLessThan(3_000);
    const read = await h.call('GET', `/v1/definitions/${r.body.id}`);
    expect(read.status).toBe(200);
    const text = await read.res.text();
    expect(text).toContain('"n":1e100000');
    expect(text.length).toBeLessThan(5_000);
  });

  it('refuses a node, edge or graph member outside the contract, keyed to its element, at save and validate', async () => {
    const graph = lineGraph({ title: 'x' });
    (graph.nodes[1] as Record<string, unknown>).colour = 'red';
    (graph.edges[0] as Record<string, unknown>).weight = 2;
    const v = await h.call('POST', '/v1/definitions/validate', { body: { graph } });
    expect(v.status).toBe(200);
    expect(v.body).toMatchObject({ valid: false, warnings: [] });
    expect(v.body.errors).toEqual([
      { key: 'end', message: "End 'end': node member 'colour' is not part of the graph contract" },
      { key: 'e1', message: "edge 'e1': edge member 'weight' is not part of the graph contract" },
      { key: null, message: "graph member 'title' is not part of the graph contract" },
    ]);
    const r = await h.call('POST', '/v1/definitions', { body: { name: 'open', graph } });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('GraphInvalid');
    expect(r.body.error.details).toEqual(v.body.errors);
  });

  it('keeps loading and running a definition stored with a member outside the contract before documents were closed', async () => {
    const doc = { ...lineGraph(), note: 'saved long ago' };
    const parsed = parseGraph(doc, { maxNodes: 200, tools: new Map(), stored: true });
    if (!parsed.ok) throw new Error('the stored document should re-parse');
    const row = await insertDefinition(h.db.pool, {
      id: randomUUID(), tenantId: 'tenantA', name: 'old', description: null, kind: 'Standard',
      graphJson: JSON.stringify(doc), planGraphJson: JSON.stringify(parsed.graph), graphHash: 'f'.repeat(64), nodeCount: 2, refs: [],
    });
    const got = await h.call('GET', `/v1/definitions/${row.id}`);
    expect(got.status).toBe(200);
    expect(got.body.graph).toEqual(doc);
    expect((await h.call('POST', `/v1/definitions/${row.id}/runs`, { body: {} })).status).toBe(202);
    expect((await h.call('POST', `/v1/definitions/${row.id}/duplicate`)).status).toBe(201);
    expect((await h.call('PUT', `/v1/definitions/${row.id}`, { body: { name: 'renamed', version: 1 } })).status).toBe(200);
  });

  it('reads a definition with its graph and 404s unknown, malformed and other-tenant ids', async () => {
    const id = await createDefinition(h, lineGraph(), 'read-me');
    const r = await h.call('GET', `/v1/definitions/${id}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id, name: 'read-me', version: 1, graph: lineGraph() });
    expect((await h.call('GET', '/v1/definitions/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await h.call('GET', '/v1/definitions/not-a-uuid')).status).toBe(404);
    const other = await h.call('GET', `/v1/definitions/${id}`, { token: KEYS.b });
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe('NotFound');
  });

  it('lists newest first without graphs, paging with a cursor and clamping the limit', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await createDefinition(h, lineGraph(), `page-${i}`, KEYS.b));
    const first = await h.call('GET', '/v1/definitions?limit=2', { token: KEYS.b });
    expect(first.status).toBe(200);
    expect(first.body.items.map((d: { id: string }) => d.id)).toEqual([ids[2], ids[1]]);
    expect(first.body.items[0].graph).toBeUndefined();
    expect(first.body.items[0]).toMatchObject({ kind: 'Standard', version: 1, nodeCount: 2 });
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await h.call('GET', `/v1/definitions?limit=2&cursor=${first.body.nextCursor}`, { token: KEYS.b });
    expect(second.body.items.map((d: { id: string }) => d.id)).toEqual([ids[0]]);
    expect(second.body.nextCursor).toBeNull();
    const clamped = await h.call('GET', '/v1/definitions?limit=5000', { token: KEYS.b });
    expect(clamped.status).toBe(200);
    expect(clamped.body.items).toHaveLength(3);
    expect((await h.call('GET', '/v1/definitions?cursor=garbage', { token: KEYS.b })).status).toBe(400);
  });

  it('updates with the version compare-and-set and answers 409 VersionConflict on a stale version', async () => {
    const id = await createDefinition(h, lineGraph(), 'v');
    const r = await h.call('PUT', `/v1/definitions/${id}`, { body: { name: 'v2', graph: pauseGraph(), version: 1 } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ name: 'v2', version: 2, nodeCount: 4 });
    const stale = await h.call('PUT', `/v1/definitions/${id}`, { body: { name: 'v3', version: 1 } });
    expect(stale.status).toBe(409);
    expect(stale.body.error.code).toBe('VersionConflict');
    const invalid = await h.call('PUT', `/v1/definitions/${id}`, { body: { graph: { nodes: [], edges: [] }, version: 2 } });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.code).toBe('GraphInvalid');
    expect((await h.call('PUT', `/v1/definitions/${id}`, { body: { name: 'x', version: 2 }, token: KEYS.b })).status).toBe(404);
  });

  it('duplicates a definition as "<name> (copy)" at version 1', async () => {
    const id = await createDefinition(h, pauseGraph(), 'orig');
    const r = await h.call('POST', `/v1/definitions/${id}/duplicate`);
    expect(r.status).toBe(201);
    expect(r.body.id).not.toBe(id);
    expect(r.body).toMatchObject({ name: 'orig (copy)', version: 1, graph: pauseGraph(), nodeCount: 4 });
    expect((await h.call('POST', `/v1/definitions/${id}/duplicate`, { token: KEYS.b })).status).toBe(404);
  });

  it('deletes with 204, but answers 409 DefinitionInUse while a live run pins it', async () => {
    const id = await createDefinition(h, lineGraph(), 'pinned');
    const runId = await startRun(h, id);
    const refused = await h.call('DELETE', `/v1/definitions/${id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('DefinitionInUse');
    await h.db.pool.query(`UPDATE runs SET status = 'Completed' WHERE id = $1`, [runId]);
    expect((await h.call('DELETE', `/v1/definitions/${id}`, { token: KEYS.b })).status).toBe(404);
    const ok = await h.call('DELETE', `/v1/definitions/${id}`);
    expect(ok.status).toBe(204);
    expect((await h.call('GET', `/v1/definitions/${id}`)).status).toBe(404);
  });
});
