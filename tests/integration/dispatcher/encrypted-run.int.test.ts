/**
 * ENCRYPTION_KEY end to end: a dispatcher (and the store the API uses) with a key drives a
 * run through a tool worker and a Subworkflow child run to Completed, while every graph and
 * document row stays ciphertext and the store reads the results back — numbers a double
 * cannot hold included (CONTRACT §1.2).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configureEncryption, getNodeRun, getRunDetail, insertDefinition } from '@flowline/db';
import { JsonNumber, type Graph, type JsonObject } from '@flowline/graph';
import { waitFor } from '@flowline/testing';
import { createHarness, edge, node, routeOnInput, runStatuses, TENANT, toolChain, type Harness } from '../../../services/dispatcher/test/harness';
import { startToolWorker } from '../tool-worker';

const MARK = 'PLAINTEXT-MARKER-e2e-91b4';
const KEY = randomBytes(32).toString('hex');

describe('a run with ENCRYPTION_KEY set', () => {
  let h: Harness;
  let stopWorker: () => Promise<void>;

  beforeAll(async () => {
    // what main.ts does at boot with the validated option
    configureEncryption(KEY);
    h = await createHarness();
    stopWorker = await startToolWorker(h);
    await h.startDispatcher('d1', { ENCRYPTION_KEY: KEY });
  });

  afterAll(async () => {
    await stopWorker?.();
    await h?.close();
    configureEncryption(undefined);
  });

  it('completes Start → Tool → Subworkflow(Start → Tool → End) → End with every document sealed', async () => {
    const child = toolChain('echo', { inner: MARK });
    const childDefinitionId = randomUUID();
    await insertDefinition(h.db.pool, {
      id: childDefinitionId,
      tenantId: TENANT,
      name: 'child',
      description: null,
      kind: 'Standard',
      graphJson: JSON.stringify(child),
      planGraphJson: JSON.stringify(child),
      graphHash: childDefinitionId,
      nodeCount: child.nodes.length,
    });
    const parent: Graph = {
      schemaVersion: 1,
      kind: 'Standard',
      chat: null,
      inputSchema: null,
      outputSchema: null,
      nodes: [
        node('start', 'Start', {}),
        node('tool', 'Tool', { toolName: 'echo', arguments: { outer: MARK } }, 3),
        node('sub', 'Subworkflow', { definitionId: childDefinitionId }),
        node('end', 'End', { outcome: 'done' }),
      ],
      edges: [edge('start', 'tool'), edge('tool', 'sub'), edge('sub', 'end')],
    };
    const [runId] = await h.createRuns(parent, [{ question: MARK }]);
    await waitFor(async () => (await runStatuses(h.db, [runId!])).get(runId!) === 'Completed', {
      timeoutMs: 30_000,
      description: 'run completed',
    });

    // the child ran to Completed too
    const children = await h.db.pool.query<{ id: string; status: string }>(`SELECT id, status FROM runs WHERE parent_run_id = $1`, [runId]);
    expect(children.rows.map((r) => r.status)).toEqual(['Completed']);

    // nothing readable in the database
    for (const t of ['definitions', 'runs', 'node_runs', 'events', 'intents']) {
      const r = await h.db.pool.query<{ t: string | null }>(`SELECT json_agg(x)::text AS t FROM ${t} x`);
      expect(r.rows[0]!.t ?? '', t).not.toContain(MARK);
    }
    const raw = await h.db.pool.query<{ output: { $enc?: string } }>(`SELECT output FROM node_runs WHERE run_id = $1 AND node_key = 'tool'`, [runId]);
    expect(raw.rows[0]!.output.$enc).toBe('v1');

    // the store reads it all back
    const tool = await getNodeRun(h.db.pool, runId!, 'tool');
    expect(tool).toMatchObject({ status: 'Succeeded', attempt: 1 });
    expect((tool!.output as { output: unknown }).output).toEqual({ result: { outer: MARK } });
    const childTool = await getNodeRun(h.db.pool, children.rows[0]!.id, 'tool');
    expect((childTool!.output as { output: unknown }).output).toEqual({ result: { inner: MARK } });
    const detail = await getRunDetail(h.db.pool, TENANT, runId!);
    expect(detail!.graph).toEqual(parent);
    expect(detail!.output).toMatchObject({ outcome: 'done' });
    expect(JSON.stringify(detail!.output)).toContain(MARK);
  });

  it('routes 2^53+1 through the Gt 2^53 edge and echoes it exactly, with every document sealed', async () => {
    const big = new JsonNumber('9007199254740993');
    const graph = routeOnInput('big', 9007199254740992);
    const [runId] = await h.createRuns(graph, [{ big } as unknown as JsonObject]);
    await waitFor(async () => (await runStatuses(h.db, [runId!])).get(runId!) === 'Completed', {
      timeoutMs: 30_000,
      description: 'run completed',
    });

    const raw = await h.db.pool.query<{ t: string }>(`SELECT json_agg(x)::text AS t FROM node_runs x WHERE run_id = $1`, [runId]);
    expect(raw.rows[0]!.t).not.toContain('9007199254740993');
    expect((await getNodeRun(h.db.pool, runId!, 'lte'))!.status).toBe('Skipped');
    expect(((await getNodeRun(h.db.pool, runId!, 'tool'))!.output as { output: unknown }).output).toEqual({ result: { big } });
    expect((await getRunDetail(h.db.pool, TENANT, runId!))!.output).toEqual({ outcome: 'gt', result: { big } });
  });
});
