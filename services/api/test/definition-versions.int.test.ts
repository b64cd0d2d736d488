/**
 * `GET /v1/definitions/{id}/versions` and `…/versions/{version}` against real Postgres:
 * every create, update (a rename too) and duplicate records a version; the list is newest
 * first, keyset paged, without graphs; one version answers with its graph as saved; other
 * tenants, unknown or malformed ids and versions, and a bad cursor are refused; deleting the
 * definition removes its versions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, lineGraph, pauseGraph, startHarness, startRun, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

/** A definition at version 3: created (line), graph replaced (pause), renamed. */
async function threeVersions(): Promise<string> {
  const c = await h.call('POST', '/v1/definitions', { body: { name: 'first', description: 'one', graph: lineGraph() } });
  const id = c.body.id as string;
  expect((await h.call('PUT', `/v1/definitions/${id}`, { body: { graph: pauseGraph(), version: 1 } })).status).toBe(200);
  expect((await h.call('PUT', `/v1/definitions/${id}`, { body: { name: 'third', version: 2 } })).status).toBe(200);
  return id;
}

describe('definition versions', () => {
  it('lists every saved version newest first, without graphs, in the exact summary shape', async () => {
    const id = await threeVersions();
    const r = await h.call('GET', `/v1/definitions/${id}/versions`);
    expect(r.status).toBe(200);
    expect(r.body.nextCursor).toBeNull();
    expect(r.body.items.map((v: { version: number; name: string }) => [v.version, v.name])).toEqual([
      [3, 'third'],
      [2, 'first'],
      [1, 'first'],
    ]);
    expect(Object.keys(r.body.items[0]).sort()).toEqual(['createdAt', 'definitionId', 'description', 'graphHash', 'kind', 'name', 'nodeCount', 'version']);
    expect(r.body.items[2]).toMatchObject({ definitionId: id, description: 'one', kind: 'Standard', nodeCount: 2 });
    expect(r.body.items[1].graphHash).toMatch(/^[0-9a-f]{64}$/);
    expect(r.body.items[1].graphHash).not.toBe(r.body.items[2].graphHash);
  });

  it('answers one version with its graph as it was saved', async () => {
    const id = await threeVersions();
    const one = await h.call('GET', `/v1/definitions/${id}/versions/1`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ definitionId: id, version: 1, name: 'first', graph: lineGraph() });
    expect((await h.call('GET', `/v1/definitions/${id}/versions/2`)).body.graph).toEqual(pauseGraph());
    const current = await h.call('GET', `/v1/definitions/${id}`);
    const three = await h.call('GET', `/v1/definitions/${id}/versions/3`);
    expect(three.body).toMatchObject({ name: current.body.name, graph: current.body.graph, graphHash: current.body.graphHash });
  });

  it('pages with a cursor without repeating or skipping, and refuses a malformed cursor with 400', async () => {
    const id = await threeVersions();
    const first = await h.call('GET', `/v1/definitions/${id}/versions?limit=2`);
    expect(first.body.items.map((v: { version: number }) => v.version)).toEqual([3, 2]);
    const second = await h.call('GET', `/v1/definitions/${id}/versions?limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body).toMatchObject({ items: [{ version: 1 }], nextCursor: null });
    const bad = await h.call('GET', `/v1/definitions/${id}/versions?cursor=not-a-cursor`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'ValidationFailed', details: [{ key: 'cursor' }] });
  });

  it('records version 1 for a duplicate and none for a refused update', async () => {
    const id = await threeVersions();
    const stale = await h.call('PUT', `/v1/definitions/${id}`, { body: { name: 'late', version: 1 } });
    expect(stale.status).toBe(409);
    const copy = await h.call('POST', `/v1/definitions/${id}/duplicate`);
    const copies = await h.call('GET', `/v1/definitions/${copy.body.id}/versions`);
    expect(copies.body.items).toMatchObject([{ version: 1, name: 'third (copy)' }]);
    expect((await h.call('GET', `/v1/definitions/${id}/versions`)).body.items).toHaveLength(3);
  });

  it('answers 404 for another tenant, an unknown or malformed id, and an unknown or malformed version', async () => {
    const id = await threeVersions();
    const paths = [
      [`/v1/definitions/${id}/versions`, KEYS.b],
      [`/v1/definitions/${id}/versions/1`, KEYS.b],
      [`/v1/definitions/${UNKNOWN}/versions`, KEYS.a],
      [`/v1/definitions/${UNKNOWN}/versions/1`, KEYS.a],
      [`/v1/definitions/not-a-uuid/versions`, KEYS.a],
      [`/v1/definitions/${id}/versions/4`, KEYS.a],
      [`/v1/definitions/${id}/versions/0`, KEYS.a],
      [`/v1/definitions/${id}/versions/-1`, KEYS.a],
      [`/v1/definitions/${id}/versions/1.5`, KEYS.a],
      [`/v1/definitions/${id}/versions/01`, KEYS.a],
      [`/v1/definitions/${id}/versions/99999999999`, KEYS.a],
      [`/v1/definitions/${id}/versions/two`, KEYS.a],
    ] as const;
    for (const [path, token] of paths) {
      const r = await h.call('GET', path, { token });
      expect({ path, status: r.status, code: r.body?.error?.code }).toEqual({ path, status: 404, code: 'NotFound' });
    }
    expect((await h.call('GET', `/v1/definitions?limit=200`, { token: KEYS.b })).body.items.map((d: { id: string }) => d.id)).not.toContain(id);
  });

  it('names on a run the version it pinned, whose graph is the one the run answers', async () => {
    const c = await h.call('POST', '/v1/definitions', { body: { name: 'pinned', graph: pauseGraph() } });
    const runId = await startRun(h, c.body.id);
    expect((await h.call('PUT', `/v1/definitions/${c.body.id}`, { body: { graph: lineGraph(), version: 1 } })).status).toBe(200);
    const run = await h.call('GET', `/v1/runs/${runId}`);
    expect(run.body.run.definitionVersion).toBe(1);
    const listed = await h.call('GET', `/v1/runs?definitionId=${c.body.id}`);
    expect(listed.body.items[0].definitionVersion).toBe(1);
    const pinned = await h.call('GET', `/v1/definitions/${c.body.id}/versions/${run.body.run.definitionVersion}`);
    expect(pinned.body.graph).toEqual(run.body.graph);
    expect(pinned.body.graphHash).toBe(run.body.run.graphHash);
  });

  it('removes the versions with the definition', async () => {
    const id = await threeVersions();
    expect((await h.call('DELETE', `/v1/definitions/${id}`)).status).toBe(204);
    expect((await h.call('GET', `/v1/definitions/${id}/versions`)).status).toBe(404);
    expect((await h.call('GET', `/v1/definitions/${id}/versions/1`)).status).toBe(404);
    const left = await h.db.pool.query(`SELECT count(*)::int AS n FROM definition_versions WHERE definition_id = $1`, [id]);
    expect(left.rows[0].n).toBe(0);
  });
});
