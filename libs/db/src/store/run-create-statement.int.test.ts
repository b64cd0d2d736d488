import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@flowline/testing';
import { runWithAuditEntry, type AuditEntry } from './audit-context';
import { insertDefinition } from './definitions';
import { createRun, readStartFacts, type CreateRunParams, type DefinitionForRun } from './run-create';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

async function newDefinition(tenant: string): Promise<string> {
  const d = await insertDefinition(db.pool, {
    id: randomUUID(),
    tenantId: tenant,
    name: `d-${randomUUID().slice(0, 6)}`,
    description: null,
    kind: 'Standard',
    graphJson: '{"v":1}',
    planGraphJson: '{}',
    graphHash: 'h1',
    nodeCount: 1,
  });
  return d.id;
}

/** A start as the API makes it: the facts read first, then the creation handed the definition row and the precheck. */
async function start(tenant: string, definitionId: string, over: Partial<CreateRunParams> = {}, between?: () => Promise<void>) {
  const requestId = over.requestId ?? randomUUID();
  const facts = await readStartFacts(db.pool, tenant, definitionId, requestId, null);
  await between?.();
  const seen: DefinitionForRun[] = [];
  const res = await createRun(db.pool, {
    tenantId: tenant,
    definitionId,
    requestId,
    conversationId: null,
    shardCount: 4,
    precheck: facts.precheck,
    definition: facts.definition,
    prepare: (def) => {
      seen.push(def);
      if (!def.enabled) throw new Error('disabled');
      return { inputJson: '{}', nodes: [{ key: 'start', kind: 'Start', attemptLimit: 1 }] };
    },
    ...over,
  });
  return { res, seen };
}

const auditEntry = (tenant: string): AuditEntry => ({
  tenant,
  principal: 'key:abc',
  keyPrefix: null,
  action: 'run.start',
  resourceType: 'run',
  resourceId: null,
  requestId: randomUUID(),
  clientAddress: null,
  patch: null,
  rowId: null,
  claimed: false,
  closed: false,
});

describe('a start created from the definition read with its precheck', () => {
  it('commits the run, its node rows, run.created and the request audit row together', async () => {
    const defId = await newDefinition('s1');
    const entry = auditEntry('s1');
    const { res } = await runWithAuditEntry(entry, () => start('s1', defId));
    if (res.kind !== 'created') throw new Error(`expected a new run, got ${res.kind}`);
    expect(entry.rowId).not.toBeNull();
    const x = await db.pool.query<{ run: string; nodes: string; ev: string; audit: string; version: number; graph: unknown }>(
      `SELECT r.xmin::text AS run, r.definition_version AS version, r.graph,
              (SELECT string_agg(DISTINCT n.xmin::text, ',') FROM node_runs n WHERE n.run_id = r.id) AS nodes,
              (SELECT e.xmin::text FROM events e WHERE e.run_id = r.id AND e.seq = 1) AS ev,
              (SELECT a.xmin::text FROM audit_log a WHERE a.id = $2) AS audit
       FROM runs r WHERE r.id = $1`,
      [res.runId, entry.rowId],
    );
    const row = x.rows[0]!;
    expect(row.version).toBe(1);
    expect(row.graph).toEqual({ v: 1 });
    expect([row.nodes, row.ev, row.audit]).toEqual([row.run, row.run, row.run]);
  });

  it('creates at the current version when the definition changed after the read', async () => {
    const defId = await newDefinition('s2');
    const { res, seen } = await start('s2', defId, {}, async () => {
      await db.pool.query(`UPDATE definitions SET version = 2, graph = '{"v":2}', graph_hash = 'h2' WHERE id = $1`, [defId]);
    });
    if (res.kind !== 'created') throw new Error(`expected a new run, got ${res.kind}`);
    const r = await db.pool.query(`SELECT definition_version, graph, graph_hash FROM runs WHERE id = $1`, [res.runId]);
    expect(r.rows[0]).toEqual({ definition_version: 2, graph: { v: 2 }, graph_hash: 'h2' });
    // checked twice: on the row read first, then on the locked current one
    expect(seen.map((d) => d.version)).toEqual([1, 2]);
  });

  it('refuses, writing nothing, when the definition was disabled after the read', async () => {
    const defId = await newDefinition('s3');
    const entry = auditEntry('s3');
    await expect(
      runWithAuditEntry(entry, () =>
        start('s3', defId, {}, async () => {
          await db.pool.query(`UPDATE definitions SET enabled = false WHERE id = $1`, [defId]);
        }),
      ),
    ).rejects.toThrow('disabled');
    expect((await db.pool.query(`SELECT 1 FROM runs WHERE definition_id = $1`, [defId])).rowCount).toBe(0);
    // the entry is left for the request's answer to write
    expect(entry).toMatchObject({ rowId: null, claimed: false });
  });

  it('answers backlogFull at the tenant Pending bound and a replay for a request id taken after the read', async () => {
    const defId = await newDefinition('s4');
    const first = await start('s4', defId, { maxPendingRuns: 1 });
    expect(first.res.kind).toBe('created');
    expect((await start('s4', defId, { maxPendingRuns: 1 })).res).toEqual({ kind: 'backlogFull', pending: 1 });
    const requestId = randomUUID();
    let twin = '';
    const { res } = await start('s4', defId, { requestId }, async () => {
      const t = await start('s4', defId, { requestId });
      if (t.res.kind !== 'created') throw new Error('expected the twin to create');
      twin = t.res.runId;
    });
    expect(res).toEqual({ kind: 'replayed', runId: twin });
  });
});
