/**
 * Dangling references (issue 12 item 7): a Subworkflow `config.definitionId` or Loop
 * `config.body` must name a definition of the tenant at validate, create and update (400
 * keyed to the node); a definition that others name is not deleted (409 DefinitionReferenced
 * listing them) until they stop naming it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, createDefinition, lineGraph, startHarness, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

/** start → child (Subworkflow or Loop naming `ref`) → end. */
function parentGraph(ref: string, kind: 'Subworkflow' | 'Loop' = 'Subworkflow') {
  const config = kind === 'Subworkflow' ? { definitionId: ref } : { body: ref, maxIterations: 2 };
  return {
    nodes: [
      { key: 'start', kind: 'Start' },
      { key: 'child', kind, config },
      { key: 'end', kind: 'End', config: { outcome: 'done' } },
    ],
    edges: [
      { key: 'e1', from: 'start', to: 'child' },
      { key: 'e2', from: 'child', to: 'end' },
    ],
  };
}

const unknown = (kind: string, ref: string) => ({ key: 'child', message: `${kind} 'child': unknown definition '${ref}' (not found in this tenant)` });

describe('a Subworkflow or Loop naming a definition', () => {
  it('is invalid at validate when the definition does not exist in the tenant, keyed to the node, and valid once it does', async () => {
    const otherTenants = await createDefinition(h, lineGraph(), 'theirs', KEYS.b);
    for (const ref of ['x', UNKNOWN, otherTenants]) {
      for (const kind of ['Subworkflow', 'Loop'] as const) {
        const r = await h.call('POST', '/v1/definitions/validate', { body: { graph: parentGraph(ref, kind) } });
        expect({ ref, kind, status: r.status, valid: r.body.valid, errors: r.body.errors }).toEqual({ ref, kind, status: 200, valid: false, errors: [unknown(kind, ref)] });
      }
    }
    const mine = await createDefinition(h, lineGraph(), 'mine');
    const ok = await h.call('POST', '/v1/definitions/validate', { body: { graph: parentGraph(mine.toUpperCase(), 'Loop') } });
    expect({ valid: ok.body.valid, errors: ok.body.errors }).toEqual({ valid: true, errors: [] });
  });

  it('is refused at create and at update with 400 GraphInvalid keyed to the node, and nothing is written', async () => {
    const created = await h.call('POST', '/v1/definitions', { body: { name: 'dangling', graph: parentGraph(UNKNOWN) } });
    expect({ status: created.status, code: created.body.error?.code, details: created.body.error?.details }).toEqual({
      status: 400,
      code: 'GraphInvalid',
      details: [unknown('Subworkflow', UNKNOWN)],
    });
    const def = await createDefinition(h, lineGraph(), 'to-update');
    const updated = await h.call('PUT', `/v1/definitions/${def}`, { body: { version: 1, graph: parentGraph('nope', 'Loop') } });
    expect({ status: updated.status, details: updated.body.error?.details }).toEqual({ status: 400, details: [unknown('Loop', 'nope')] });
    expect((await h.call('GET', `/v1/definitions/${def}`)).body.version).toBe(1);
    const names = (await h.call('GET', '/v1/definitions?limit=200')).body.items.map((d: { name: string }) => d.name);
    expect(names).not.toContain('dangling');
  });
});

describe('deleting a definition that another definition names', () => {
  it('answers 409 DefinitionReferenced listing the definitions that name it, and deletes it once none does', async () => {
    const child = await createDefinition(h, lineGraph(), 'child');
    const parent = await createDefinition(h, parentGraph(child), 'parent');
    const looper = await createDefinition(h, parentGraph(child, 'Loop'), 'looper');
    const refused = await h.call('DELETE', `/v1/definitions/${child}`);
    expect({ status: refused.status, error: refused.body.error }).toEqual({
      status: 409,
      error: {
        code: 'DefinitionReferenced',
        message: expect.any(String),
        details: [
          { definitionId: parent, name: 'parent' },
          { definitionId: looper, name: 'looper' },
        ],
      },
    });
    expect((await h.call('GET', `/v1/definitions/${child}`)).status).toBe(200);
    // the parent stops naming it; the looper goes
    expect((await h.call('PUT', `/v1/definitions/${parent}`, { body: { version: 1, graph: lineGraph() } })).status).toBe(200);
    expect((await h.call('DELETE', `/v1/definitions/${looper}`)).status).toBe(204);
    expect((await h.call('DELETE', `/v1/definitions/${child}`)).status).toBe(204);
  });

  it('lets a definition that names itself be deleted', async () => {
    const self = await createDefinition(h, lineGraph(), 'self');
    expect((await h.call('PUT', `/v1/definitions/${self}`, { body: { version: 1, graph: parentGraph(self) } })).status).toBe(200);
    expect((await h.call('DELETE', `/v1/definitions/${self}`)).status).toBe(204);
  });

  it('copies the references with the graph on duplicate', async () => {
    const child = await createDefinition(h, lineGraph(), 'dup-child');
    const parent = await createDefinition(h, parentGraph(child), 'dup-parent');
    const copy = await h.call('POST', `/v1/definitions/${parent}/duplicate`);
    expect((await h.call('DELETE', `/v1/definitions/${parent}`)).status).toBe(204);
    const refused = await h.call('DELETE', `/v1/definitions/${child}`);
    expect({ status: refused.status, details: refused.body.error?.details }).toEqual({ status: 409, details: [{ definitionId: copy.body.id, name: 'dup-parent (copy)' }] });
  });
});
