/**
 * Which version a Subworkflow or Map child runs, through a real dispatcher on real Postgres and
 * Redis: the child definition's `current` by default, the parent's alias when the child
 * definition has one of that name, the node's pinned `version` or `alias` over both; a pinned
 * alias the child lacks, or a version kept without its parsed graph, fails the child with the
 * reason (the parent fails with it, never waits).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertDefinition, putDefinitionAlias, updateDefinition } from '@flowline/db';
import { stringifyJson, type Graph, type JsonObject } from '@flowline/graph';
import { waitFor } from '@flowline/testing';
import { createHarness, edge, graphOf, node, runStatuses, TENANT, type Harness } from './harness';

let h: Harness;
const childId = randomUUID();

beforeAll(async () => {
  h = await createHarness();
  await h.startDispatcher('d1');
  // versions 1, 2, 3 of the child (3 the latest); current → 1, canary → 2
  const doc = (outcome: string) => stringifyJson(graphOf([node('start', 'Start', {}), node('end', 'End', { outcome })], [edge('start', 'end')]));
  await insertDefinition(h.db.pool, { id: childId, tenantId: TENANT, name: 'child', description: null, kind: 'Standard', graphJson: doc('one'), planGraphJson: doc('one'), graphHash: 'c1', nodeCount: 2 });
  await updateDefinition(h.db.pool, TENANT, childId, 1, { graphJson: doc('two'), planGraphJson: doc('two'), graphHash: 'c2' });
  await updateDefinition(h.db.pool, TENANT, childId, 2, { graphJson: doc('three'), planGraphJson: doc('three'), graphHash: 'c3' });
  await putDefinitionAlias(h.db.pool, TENANT, childId, 'current', [{ version: 1, percent: 100 }]);
  await putDefinitionAlias(h.db.pool, TENANT, childId, 'canary', [{ version: 2, percent: 100 }]);
});
afterAll(async () => {
  await h?.close();
});

/** Runs a parent whose `kind` node (Subworkflow or Map over run.input.items) has `config`; answers its status and its children. */
async function parentRun(kind: 'Subworkflow' | 'Map', config: JsonObject, versionAlias: string | null = null) {
  const sub = kind === 'Map' ? { definitionId: childId, items: 'run.input.items', ...config } : { definitionId: childId, ...config };
  const parent: Graph = graphOf([node('start', 'Start', {}), node('sub', kind, sub), node('end', 'End', { outcome: 'done' })], [edge('start', 'sub'), edge('sub', 'end')]);
  const [runId] = await h.createRuns(parent, [{ items: [1, 2] }], TENANT, [], versionAlias === null ? {} : { versionAlias });
  await waitFor(async () => ['Completed', 'Failed'].includes((await runStatuses(h.db, [runId!])).get(runId!) ?? ''), { timeoutMs: 30_000, intervalMs: 50, description: 'the parent ended' });
  const children = await h.db.pool.query<{ version: number; alias: string | null; status: string; reason: string | null }>(
    `SELECT definition_version AS version, version_alias AS alias, status, reason FROM runs WHERE parent_run_id = $1 ORDER BY created_at`,
    [runId],
  );
  return { status: (await runStatuses(h.db, [runId!])).get(runId!), children: children.rows };
}

const ran = (version: number, alias: string | null, n = 1) => Array.from({ length: n }, () => ({ version, alias, status: 'Completed', reason: null }));

describe('the version of a child run', () => {
  it("takes the child definition's current alias by default, and the parent's alias when the child has one of that name", async () => {
    expect(await parentRun('Subworkflow', {})).toEqual({ status: 'Completed', children: ran(1, 'current') });
    expect(await parentRun('Subworkflow', {}, 'canary')).toEqual({ status: 'Completed', children: ran(2, 'canary') });
    expect(await parentRun('Subworkflow', {}, 'beta')).toEqual({ status: 'Completed', children: ran(1, 'current') });
    expect(await parentRun('Map', {}, 'canary')).toEqual({ status: 'Completed', children: ran(2, 'canary', 2) });
  });

  it("runs the node's pinned version or alias over the parent's choice", async () => {
    expect(await parentRun('Subworkflow', { version: 3 }, 'canary')).toEqual({ status: 'Completed', children: ran(3, null) });
    expect(await parentRun('Subworkflow', { alias: 'canary' })).toEqual({ status: 'Completed', children: ran(2, 'canary') });
    expect(await parentRun('Map', { version: 2 })).toEqual({ status: 'Completed', children: ran(2, null, 2) });
  });

  it('fails the child with the reason for an alias the child lacks or a version without its parsed graph', async () => {
    expect(await parentRun('Subworkflow', { alias: 'nope' })).toEqual({
      status: 'Failed',
      children: [{ version: 0, alias: null, status: 'Failed', reason: "the child definition has no alias 'nope'" }],
    });
    await h.db.pool.query(`UPDATE definition_versions SET plan_graph = NULL WHERE definition_id = $1 AND version = 2`, [childId]);
    expect(await parentRun('Subworkflow', { version: 2 })).toEqual({
      status: 'Failed',
      children: [{ version: 0, alias: null, status: 'Failed', reason: `version 2 of definition ${childId} is retired, was never saved, or was saved before versions kept their parsed graph` }],
    });
  });
});
