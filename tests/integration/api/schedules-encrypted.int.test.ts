/**
 * Schedules under ENCRYPTION_KEY: a schedule pinning an older definition version carries that
 * version's graph (sealed to the definition and version) and its plan graph (sealed the same
 * way) into the runs it starts; a triggered run of it completes on the real dispatcher, and no
 * graph of the schedule or the run is plaintext at rest.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configureEncryption } from '@flowline/db';
import { waitFor } from '@flowline/testing';
import { startHarness, type Harness } from '../../../services/api/test/harness';
import { startInProcessLanes, type InProcessLanes } from './in-process-lanes';

const SHARD_COUNT = 4;
const MARK = 'PLAINTEXT-MARKER-schedule-7d2a';

let h: Harness;
let lanes: InProcessLanes | null = null;

beforeAll(async () => {
  configureEncryption(randomBytes(32).toString('hex'));
  h = await startHarness({ shardCount: SHARD_COUNT });
  lanes = await startInProcessLanes(h, { id: 'schedules-encrypted-test', shardCount: SHARD_COUNT, toolWorker: false });
});
afterAll(async () => {
  await lanes?.stop();
  await h?.close();
  configureEncryption(undefined);
});

const graphOf = (outcome: string) => ({
  nodes: [{ key: 'start', kind: 'Start' }, { key: 'end', kind: 'End', config: { outcome: `${MARK}-${outcome}` } }],
  edges: [{ key: 'e1', from: 'start', to: 'end' }],
});

describe('a schedule pinning a version, encrypted at rest', () => {
  it('runs the pinned version to completion with every graph sealed', async () => {
    const def = await h.call('POST', '/v1/definitions', { body: { name: 'sealed', graph: graphOf('first') } });
    expect(def.status).toBe(201);
    expect((await h.call('PUT', `/v1/definitions/${def.body.id}`, { body: { graph: graphOf('second'), version: 1 } })).status).toBe(200);
    const s = await h.call('POST', '/v1/schedules', { body: { key: 'sealed-v1', definitionId: def.body.id, version: 1, spec: { every: 'PT1H' } } });
    expect(s.status).toBe(201);
    const t = await h.call('POST', `/v1/schedules/${s.body.id}/trigger`);
    expect(t.status).toBe(202);
    const done = await waitFor(
      async () => {
        const r = await h.call('GET', `/v1/runs/${t.body.runId}`);
        return r.body.run.status === 'Completed' ? r.body : false;
      },
      { timeoutMs: 20_000, description: 'the pinned run completed' },
    );
    expect(done.run.definitionVersion).toBe(1);
    expect(done.output).toMatchObject({ outcome: `${MARK}-first` });
    const rows = await h.db.pool.query<{ text: string }>(
      `SELECT pinned_graph::text || pinned_plan_graph::text AS text FROM schedules WHERE id = $1
       UNION ALL SELECT graph::text || plan_graph::text FROM runs WHERE id = $2`,
      [s.body.id, t.body.runId],
    );
    expect(rows.rows).toHaveLength(2);
    for (const r of rows.rows) expect(r.text).not.toContain(MARK);
  });
});
