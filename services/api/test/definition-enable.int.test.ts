/**
 * Disabling a definition, validating a saved one by id, and the checks a run start makes of
 * what may have changed since the definition was saved (a tool dropped, the node cap lowered).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app';
import type { AppDeps } from '../src/context';
import { KEYS, chatGraph, createDefinition, lineGraph, startHarness, startRun, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

/** Start → Tool(echo) → End. */
function echoGraph() {
  return {
    nodes: [
      { key: 'start', kind: 'Start' },
      { key: 'say', kind: 'Tool', config: { toolName: 'echo', arguments: { text: 'hi' } } },
      { key: 'end', kind: 'End', config: { outcome: 'done' } },
    ],
    edges: [
      { key: 'e1', from: 'start', to: 'say' },
      { key: 'e2', from: 'say', to: 'end' },
    ],
  };
}

/** A second replica of the API built from the harness's deps with `change` applied. */
async function callOn(change: Partial<AppDeps>, method: string, path: string, body?: unknown) {
  const app = createApp({ ...h.deps, ...change });
  const res = await app.request(path, {
    method,
    headers: { authorization: `Bearer ${KEYS.a}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

const withoutEcho = (): AppDeps['tools'] => ({
  catalog: () => h.deps.tools.catalog().filter((t) => t.name !== 'echo'),
  parserCatalog: () => new Map([...h.deps.tools.parserCatalog()].filter(([name]) => name !== 'echo')),
});

describe('disable and enable', () => {
  it('a definition reads enabled: true until disabled; disable refuses new starts with 409 DefinitionDisabled', async () => {
    const id = await createDefinition(h, lineGraph());
    expect((await h.call('GET', `/v1/definitions/${id}`)).body.enabled).toBe(true);
    const before = await startRun(h, id, { requestId: 'before-disable' });

    const off = await h.call('POST', `/v1/definitions/${id}/disable`);
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ id, enabled: false, version: 1 });
    expect((await h.call('GET', `/v1/definitions/${id}`)).body.enabled).toBe(false);
    const listed = await h.call('GET', '/v1/definitions');
    expect(listed.body.items.find((d: { id: string }) => d.id === id).enabled).toBe(false);

    const refused = await h.call('POST', `/v1/definitions/${id}/runs`, { body: {} });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('DefinitionDisabled');
    // a replay of a run started before is still that run, not a new start
    const replay = await h.call('POST', `/v1/definitions/${id}/runs`, { body: { requestId: 'before-disable' } });
    expect(replay.status).toBe(202);
    expect(replay.body.runId).toBe(before);
    // the run started before is untouched
    expect((await h.call('GET', `/v1/runs/${before}`)).status).toBe(200);

    // idempotent both ways
    expect((await h.call('POST', `/v1/definitions/${id}/disable`)).body.enabled).toBe(false);
    const on = await h.call('POST', `/v1/definitions/${id}/enable`);
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({ enabled: true, version: 1 });
    expect((await h.call('POST', `/v1/definitions/${id}/runs`, { body: {} })).status).toBe(202);
  });

  it('refuses a conversation send to a disabled Chat definition', async () => {
    const id = await createDefinition(h, chatGraph(), 'chat');
    await h.call('POST', `/v1/definitions/${id}/disable`);
    const r = await h.call('POST', '/v1/conversations/conv-disabled/messages', { body: { definitionId: id, text: 'hi', requestId: 'm1' } });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe('DefinitionDisabled');
  });

  it('is tenant-scoped (404 for another tenant) and needs the define scope', async () => {
    const id = await createDefinition(h, lineGraph());
    expect((await h.call('POST', `/v1/definitions/${id}/disable`, { token: KEYS.b })).status).toBe(404);
    expect((await h.call('GET', `/v1/definitions/${id}`)).body.enabled).toBe(true);
    expect((await h.call('POST', '/v1/definitions/00000000-0000-4000-8000-000000000000/enable')).status).toBe(404);
    expect((await h.call('POST', '/v1/definitions/not-a-uuid/enable')).status).toBe(404);
  });
});

describe('a run start re-checks what changed since the save', () => {
  it('refuses with 400 GraphInvalid keyed to the node when its tool is no longer registered, creating nothing', async () => {
    const id = await createDefinition(h, echoGraph());
    const r = await callOn({ tools: withoutEcho() }, 'POST', `/v1/definitions/${id}/runs`, { requestId: 'no-echo' });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('GraphInvalid');
    expect(r.body.error.details).toEqual([{ key: 'say', message: expect.stringContaining("tool 'echo' is no longer registered") }]);
    const runs = await h.call('GET', `/v1/runs?definitionId=${id}`);
    expect(runs.body.items).toEqual([]);
    // the same start on a replica that still has the tool goes through
    expect((await h.call('POST', `/v1/definitions/${id}/runs`, { body: { requestId: 'no-echo' } })).status).toBe(202);
  });

  it('refuses a graph over the node cap as it is now', async () => {
    const id = await createDefinition(h, echoGraph());
    const r = await callOn({ limits: { ...h.deps.limits, maxNodesPerDefinition: 2 } }, 'POST', `/v1/definitions/${id}/runs`, {});
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('GraphInvalid');
    expect(r.body.error.details[0].message).toBe('the graph has 3 nodes; at most 2 are allowed now');
  });
});

describe('POST /v1/definitions/{id}/validate', () => {
  it('answers valid for a saved definition, and the errors once its tool is gone', async () => {
    const id = await createDefinition(h, echoGraph());
    const ok = await h.call('POST', `/v1/definitions/${id}/validate`);
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ valid: true, errors: [], warnings: [] });
    const gone = await callOn({ tools: withoutEcho() }, 'POST', `/v1/definitions/${id}/validate`);
    expect(gone.status).toBe(200);
    expect(gone.body.valid).toBe(false);
    expect(gone.body.errors).toEqual([expect.objectContaining({ key: 'say', message: expect.stringContaining("unknown tool 'echo'") })]);
  });

  it('answers 404 for a definition of another tenant', async () => {
    const id = await createDefinition(h, lineGraph());
    expect((await h.call('POST', `/v1/definitions/${id}/validate`, { token: KEYS.b })).status).toBe(404);
  });
});
