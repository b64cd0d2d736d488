/**
 * A fork under ENCRYPTION_KEY: the reused node documents are opened from the source rows and
 * sealed again to the new run's rows (the AAD names run and node), the edited input is sealed
 * to the forked node, and the forked run completes with every document ciphertext at rest.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configureEncryption } from '@flowline/db';
import { startHarness, type Harness } from '../../../services/api/test/harness';
import { startInProcessLanes, type InProcessLanes } from './in-process-lanes';
import { runFinished, type Body } from './run-calls';

const SHARD_COUNT = 4;
const MARK = 'PLAINTEXT-MARKER-fork-5c1e';

let h: Harness;
let lanes: InProcessLanes | null = null;

beforeAll(async () => {
  // what main.ts does at boot with the validated option (process-wide: API, dispatcher and worker here)
  configureEncryption(randomBytes(32).toString('hex'));
  h = await startHarness({ shardCount: SHARD_COUNT });
  lanes = await startInProcessLanes(h, { id: 'fork-encrypted-test', shardCount: SHARD_COUNT, toolWorker: true });
});
afterAll(async () => {
  await lanes?.stop();
  await h?.close();
  configureEncryption(undefined);
});

const finished = (runId: string) => runFinished(h, runId);

describe('a fork with ENCRYPTION_KEY set', () => {
  it('copies the reused documents sealed to the new run, seals the edited input, and completes', async () => {
    const graph = {
      nodes: [
        { key: 'start', kind: 'Start' },
        { key: 'up', kind: 'Tool', config: { toolName: 'echo', arguments: { secret: MARK } } },
        { key: 'f', kind: 'Tool', config: { toolName: 'echo', arguments: {}, argumentBindings: { seen: 'input.output.result' } } },
        { key: 'end', kind: 'End', config: { outcome: 'done' } },
      ],
      edges: [
        { key: 'e1', from: 'start', to: 'up' },
        { key: 'e2', from: 'up', to: 'f' },
        { key: 'e3', from: 'f', to: 'end' },
      ],
    };
    const def = await h.call('POST', '/v1/definitions', { body: { name: `enc-${randomUUID()}`, graph } });
    const started = await h.call('POST', `/v1/definitions/${def.body.id}/runs`, { body: { input: { q: MARK } } });
    const source = started.body.runId as string;
    expect((await finished(source)).run.status).toBe('Completed');

    const res = await h.call('POST', `/v1/runs/${source}/fork`, { body: { fromNodeKey: 'f', input: { output: { result: { edited: MARK } } } } });
    expect(res.status).toBe(202);
    const forkedId = res.body.runId as string;
    const d = await finished(forkedId);
    expect(d.run.status).toBe('Completed');
    expect(d.nodeRuns.find((n: Body) => n.nodeKey === 'up')).toMatchObject({ reusedFrom: source });
    const up = (await h.call('GET', `/v1/runs/${forkedId}/nodes/up`)).body as Body;
    expect(up.output.output.result).toEqual({ secret: MARK });
    const f = (await h.call('GET', `/v1/runs/${forkedId}/nodes/f`)).body as Body;
    expect(f.output.output.result).toEqual({ seen: { edited: MARK } });

    // at rest: nothing of the forked run holds the marker in clear
    const rows = await h.db.pool.query<{ doc: string }>(
      `SELECT concat_ws(' ', input::text, input_override::text, output::text, decision::text) AS doc FROM node_runs WHERE run_id = $1
       UNION ALL SELECT concat_ws(' ', graph::text, plan_graph::text, input::text, output::text) FROM runs WHERE id = $1`,
      [forkedId],
    );
    expect(rows.rows.length).toBe(5);
    for (const r of rows.rows) expect(r.doc).not.toContain(MARK);
  }, 60_000);

  it('resumes a failed Loop from its loop state, opened from the source row and sealed to the new one', async () => {
    const body = (step: Record<string, unknown>) => ({
      nodes: [
        { key: 'start', kind: 'Start' },
        { key: 'first', kind: 'End', config: { outcome: 'first', resultPath: 'run.input' } },
        { key: 'step', kind: 'Tool', maxAttempts: 1, config: step },
        { key: 'later', kind: 'End', config: { outcome: 'later', resultPath: 'upstream.step.output.result' } },
      ],
      edges: [
        { key: 'b1', from: 'start', to: 'first', condition: { path: 'output.input.outcome', op: 'NotExists' } },
        { key: 'b2', from: 'start', to: 'step', condition: { path: 'output.input.outcome', op: 'Exists' } },
        { key: 'b3', from: 'step', to: 'later' },
      ],
    });
    const bodyDef = await h.call('POST', '/v1/definitions', { body: { name: `body-${randomUUID()}`, graph: body({ toolName: 'test_fail', arguments: { untilAttempt: 5 } }) } });
    const loopGraph = {
      nodes: [
        { key: 'start', kind: 'Start' },
        { key: 'loop', kind: 'Loop', config: { body: bodyDef.body.id, maxIterations: 2 } },
        { key: 'end', kind: 'End', config: { outcome: 'done' } },
      ],
      edges: [
        { key: 'e1', from: 'start', to: 'loop' },
        { key: 'e2', from: 'loop', to: 'end' },
      ],
    };
    const def = await h.call('POST', '/v1/definitions', { body: { name: `loop-${randomUUID()}`, graph: loopGraph } });
    const source = (await h.call('POST', `/v1/definitions/${def.body.id}/runs`, { body: { input: { q: MARK } } })).body.runId as string;
    expect((await finished(source)).run.status).toBe('Failed');
    expect((await h.call('PUT', `/v1/definitions/${bodyDef.body.id}`, { body: { graph: body({ toolName: 'echo', arguments: { fixed: true } }), version: 1 } })).status).toBe(200);
    const res = await h.call('POST', `/v1/runs/${source}/fork`, { body: { fromNodeKey: 'loop', failedOnly: true } });
    expect(res.status).toBe(202);
    expect((await finished(res.body.runId)).run.status).toBe('Completed');
    const loop = ((await h.call('GET', `/v1/runs/${res.body.runId}/nodes/loop`)).body as Body).output.output;
    expect(loop.results).toEqual([{ outcome: 'first', result: { input: { q: MARK } } }, { outcome: 'later', result: { fixed: true } }]);
    // the loop state at rest is an envelope, not JSON in clear
    const state = await h.db.pool.query<{ enc: string | null }>(`SELECT loop_state->>'$enc' AS enc FROM node_runs WHERE run_id = $1 AND node_key = 'loop'`, [res.body.runId]);
    expect(state.rows[0]!.enc).toBe('v1');
  }, 60_000);
});
