/**
 * A migration under ENCRYPTION_KEY that renames nodes: a renamed row's documents are opened
 * under its old key and sealed again to its new one (the AAD names run and node), so the run
 * reads them after the move and every document stays ciphertext at rest.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configureEncryption } from '@flowline/db';
import { waitFor } from '@flowline/testing';
import { startHarness, type Harness } from '../../../services/api/test/harness';
import { startInProcessLanes, type InProcessLanes } from './in-process-lanes';
import { defineGraph, runFinished, updateGraph, type Body } from './run-calls';

const SHARD_COUNT = 4;
const MARK = 'PLAINTEXT-MARKER-migrate-7a2d';

let h: Harness;
let lanes: InProcessLanes | null = null;

beforeAll(async () => {
  // what main.ts does at boot with the validated option (process-wide: API, dispatcher and worker here)
  configureEncryption(randomBytes(32).toString('hex'));
  h = await startHarness({ shardCount: SHARD_COUNT });
  lanes = await startInProcessLanes(h, { id: 'migrate-encrypted-test', shardCount: SHARD_COUNT, toolWorker: true });
});
afterAll(async () => {
  await lanes?.stop();
  await h?.close();
  configureEncryption(undefined);
});

/** start → <tool> (echo of the marker) → <gate> (Pause) → [after →] end */
function graph(tool: string, gate: string, after: boolean) {
  const tail = after ? [{ key: 'after', kind: 'Tool', config: { toolName: 'echo', argumentBindings: { decision: 'input.output.decision' } } }] : [];
  return {
    nodes: [
      { key: 'start', kind: 'Start' },
      { key: tool, kind: 'Tool', config: { toolName: 'echo', arguments: { secret: MARK } } },
      { key: gate, kind: 'Pause', config: { prompt: 'go?', allowedDecisions: ['Approve'] } },
      ...tail,
      { key: 'end', kind: 'End', config: { outcome: 'done' } },
    ],
    edges: [
      { key: 'e1', from: 'start', to: tool },
      { key: 'e2', from: tool, to: gate },
      ...(after ? [{ key: 'e3', from: gate, to: 'after' }, { key: 'e4', from: 'after', to: 'end' }] : [{ key: 'e3', from: gate, to: 'end' }]),
    ],
  };
}

describe('a migration with ENCRYPTION_KEY set', () => {
  it('renames settled and waiting nodes with their documents resealed, and the run completes reading them', async () => {
    const def = await defineGraph(h, graph('t', 'p', false), 'enc-migrate');
    const runId = (await h.call('POST', `/v1/definitions/${def}/runs`, { body: { input: { q: MARK } } })).body.runId as string;
    await waitFor(async () => (await h.call('GET', `/v1/runs/${runId}`)).body.run.status === 'WaitingForApproval', {
      timeoutMs: 20_000, intervalMs: 50, description: 'parked',
    });
    await updateGraph(h, def, graph('t2', 'gate', true), 1);
    const res = await h.call('POST', `/v1/runs/${runId}/migrate`, { body: { toVersion: 2, nodeMap: { t: 't2', p: 'gate' }, dryRun: false } });
    expect(res.body).toMatchObject({ verdict: 'compatible', executed: true });

    const t2 = (await h.call('GET', `/v1/runs/${runId}/nodes/t2`)).body as Body;
    expect(t2).toMatchObject({ status: 'Succeeded', output: { output: { result: { secret: MARK } } } });
    expect(t2.input).not.toBeNull();
    expect((await h.call('POST', `/v1/runs/${runId}/nodes/gate/decide`, { body: { operationId: 'go', decision: 'Approve' } })).status).toBe(202);
    const end = await runFinished(h, runId);
    expect({ status: end.run.status, reason: end.run.reason }).toEqual({ status: 'Completed', reason: null });
    expect((await h.call('GET', `/v1/runs/${runId}/nodes/after`)).body.output.output.result).toEqual({ decision: 'Approve' });
    const rest = await h.db.pool.query(`SELECT node_key, input::text AS i, output::text AS o, decision::text AS d FROM node_runs WHERE run_id = $1`, [runId]);
    expect(rest.rows.map((r) => r.node_key).sort()).toEqual(['after', 'end', 'gate', 'start', 't2']);
    for (const r of rest.rows) expect(`${r.i}${r.o}${r.d}`, r.node_key).not.toContain(MARK);
  });
});
