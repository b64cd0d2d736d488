/**
 * POST /v1/runs/{id}/migrate through the real app, the real dispatcher and tool worker
 * (in-process), Postgres and Redis: a run parked on a Pause of v1 moves to a version that adds
 * a node after it and, once approved, completes through that node; a migration that cannot be
 * done answers its keyed reasons and leaves the run as it was.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@flowline/testing';
import { KEYS, startHarness, type Harness } from '../../../services/api/test/harness';
import { startInProcessLanes, type InProcessLanes } from './in-process-lanes';
import { defineGraph, runFinished, updateGraph, type Body } from './run-calls';

const SHARD_COUNT = 4;

const pause = (key = 'p') => ({ key, kind: 'Pause', config: { prompt: 'ship it?', allowedDecisions: ['Approve', 'Reject'] } });
/** v1: start → p (Pause) → end */
const v1 = () => ({
  nodes: [{ key: 'start', kind: 'Start' }, pause(), { key: 'end', kind: 'End', config: { outcome: 'done' } }],
  edges: [{ key: 'e1', from: 'start', to: 'p' }, { key: 'e2', from: 'p', to: 'end' }],
});
/** v1 with `after` (an echo Tool) between the Pause and the End */
const withAfter = (gate = 'p') => ({
  nodes: [
    { key: 'start', kind: 'Start' },
    pause(gate),
    { key: 'after', kind: 'Tool', config: { toolName: 'echo', arguments: { shipped: true } } },
    { key: 'end', kind: 'End', config: { outcome: 'done' } },
  ],
  edges: [{ key: 'e1', from: 'start', to: gate }, { key: 'e2b', from: gate, to: 'after' }, { key: 'e3', from: 'after', to: 'end' }],
});
/** the Pause replaced by a Tool of the same key */
const pauseGone = () => ({
  nodes: [{ key: 'start', kind: 'Start' }, { key: 'p', kind: 'Tool', config: { toolName: 'echo' } }, { key: 'end', kind: 'End', config: { outcome: 'done' } }],
  edges: [{ key: 'e1', from: 'start', to: 'p' }, { key: 'e2', from: 'p', to: 'end' }],
});

let h: Harness;
let lanes: InProcessLanes | null = null;

beforeAll(async () => {
  h = await startHarness({ shardCount: SHARD_COUNT });
  lanes = await startInProcessLanes(h, { id: 'migrate-test', shardCount: SHARD_COUNT, toolWorker: true, env: { MAX_CONCURRENT_RUNS: '1000' } });
});
afterAll(async () => {
  await lanes?.stop();
  await h?.close();
});

const define = (graph: unknown) => defineGraph(h, graph, 'migrate');
const update = (defId: string, graph: unknown, version: number) => updateGraph(h, defId, graph, version);
async function parkedRun(defId: string): Promise<string> {
  const res = await h.call('POST', `/v1/definitions/${defId}/runs`, { body: { input: { q: 1 } } });
  expect(res.status).toBe(202);
  const runId = res.body.runId as string;
  await waitFor(async () => (await h.call('GET', `/v1/runs/${runId}`)).body.run.status === 'WaitingForApproval', {
    timeoutMs: 20_000, intervalMs: 50, description: `run ${runId} parked`,
  });
  return runId;
}
const finished = (runId: string) => runFinished(h, runId);
const migrate = (runId: string, body: unknown, token: string = KEYS.a) => h.call('POST', `/v1/runs/${runId}/migrate`, { body, token });
const events = async (runId: string): Promise<Body[]> => (await h.call('GET', `/v1/runs/${runId}/events`)).body.events as Body[];

/** What must not move under a migration that is not executed: the run row and its node rows. */
async function stored(runId: string) {
  const run = await h.db.pool.query('SELECT definition_version, version, last_seq, graph_hash, plan_graph FROM runs WHERE id = $1', [runId]);
  const nodes = await h.db.pool.query('SELECT node_key, status, attempt, attempt_limit, decision FROM node_runs WHERE run_id = $1 ORDER BY node_key', [runId]);
  return { run: run.rows[0], nodes: nodes.rows };
}

describe('POST /v1/runs/{id}/migrate', () => {
  it('moves a run parked on a Pause of v1 to v2 (a node after it): a dry run changes nothing, the execution commits, the approval completes through the new node', async () => {
    const def = await define(v1());
    const runId = await parkedRun(def);
    await update(def, withAfter(), 1);
    const before = await stored(runId);

    const dry = await migrate(runId, { toVersion: 2, dryRun: true });
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({ verdict: 'compatible', reasons: [], executed: false, fromVersion: 1, toVersion: 2 });
    expect(dry.body.mapping).toEqual(expect.arrayContaining([
      { from: 'p', to: 'p', kind: 'Pause', status: 'WaitingForApproval', action: 'keep' },
      { from: null, to: 'after', kind: 'Tool', status: 'Pending', action: 'add' },
      { from: 'start', to: 'start', kind: 'Start', status: 'Succeeded', action: 'carry' },
    ]));
    expect(await stored(runId)).toEqual(before);
    expect((await events(runId)).some((e) => e.kind === 'run.migrated')).toBe(false);

    const done = await migrate(runId, { toVersion: 2, dryRun: false });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ verdict: 'compatible', executed: true, fromVersion: 1, toVersion: 2 });
    const moved = (await h.call('GET', `/v1/runs/${runId}`)).body as Body;
    expect(moved.run).toMatchObject({ status: 'WaitingForApproval', definitionVersion: 2 });
    expect(moved.graph.nodes.map((n: Body) => n.key)).toEqual(['start', 'p', 'after', 'end']);
    expect(moved.nodeRuns.find((n: Body) => n.nodeKey === 'p')).toMatchObject({ status: 'WaitingForApproval', pendingDecisionKind: 'Approve' });
    const migrated = (await events(runId)).filter((e) => e.kind === 'run.migrated');
    expect(migrated).toMatchObject([{ nodeKey: null, detail: { from: 1, to: 2, nodeMap: {} } }]);

    const decided = await h.call('POST', `/v1/runs/${runId}/nodes/p/decide`, { body: { operationId: 'ship', decision: 'Approve' } });
    expect(decided.status).toBe(202);
    const end = await finished(runId);
    expect(end.run.status).toBe('Completed');
    expect(end.nodeRuns.map((n: Body) => [n.nodeKey, n.status])).toEqual([['start', 'Succeeded'], ['p', 'Succeeded'], ['after', 'Succeeded'], ['end', 'Succeeded']]);
    expect((await h.call('GET', `/v1/runs/${runId}/nodes/after`)).body.output.output.result).toEqual({ shipped: true });
  });

  it('answers an incompatible migration with keyed reasons and leaves the run untouched, then the run finishes on its own version', async () => {
    const def = await define(v1());
    const runId = await parkedRun(def);
    await update(def, pauseGone(), 1);
    const before = await stored(runId);
    const eventsBefore = await events(runId);

    const res = await migrate(runId, { toVersion: 2, dryRun: false });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ verdict: 'incompatible', executed: false, fromVersion: 1, toVersion: 2 });
    expect(res.body.reasons).toEqual([{ code: 'KindChanged', nodeKey: 'p', message: expect.stringContaining('Pause') }]);
    expect(await stored(runId)).toEqual(before);
    expect(await events(runId)).toEqual(eventsBefore);

    expect((await h.call('POST', `/v1/runs/${runId}/nodes/p/decide`, { body: { operationId: 'ok', decision: 'Approve' } })).status).toBe(202);
    const end = await finished(runId);
    expect(end.run).toMatchObject({ status: 'Completed', definitionVersion: 1 });
  });

  it('needs a mapping for a renamed Pause, and carries its open decision over under the new key once mapped', async () => {
    const def = await define(v1());
    const runId = await parkedRun(def);
    await update(def, withAfter('gate'), 1);
    const unmapped = await migrate(runId, { toVersion: 2, dryRun: false });
    expect(unmapped.body).toMatchObject({ verdict: 'needsMapping', executed: false, reasons: [{ code: 'NodeMissing', nodeKey: 'p' }] });
    const mapped = await migrate(runId, { toVersion: 2, nodeMap: { p: 'gate' }, dryRun: false });
    expect(mapped.body).toMatchObject({ verdict: 'compatible', executed: true });
    expect((await events(runId)).filter((e) => e.kind === 'run.migrated')).toMatchObject([{ detail: { from: 1, to: 2, nodeMap: { p: 'gate' } } }]);
    expect((await h.call('POST', `/v1/runs/${runId}/nodes/gate/decide`, { body: { operationId: 'go', decision: 'Approve' } })).status).toBe(202);
    const end = await finished(runId);
    expect(end.run.status).toBe('Completed');
    expect(end.nodeRuns.find((n: Body) => n.nodeKey === 'gate')).toMatchObject({ status: 'Succeeded' });
    expect(end.nodeRuns.find((n: Body) => n.nodeKey === 'p')).toBeUndefined();
  });

  it('re-queues a running Tool whose config changed: the new config runs on the same attempt, the old invocation is ignored', async () => {
    const slow = (ms: number) => ({
      nodes: [{ key: 'start', kind: 'Start' }, { key: 'slow', kind: 'Tool', config: { toolName: 'wait', arguments: { ms } } }, { key: 'end', kind: 'End', config: { outcome: 'done' } }],
      edges: [{ key: 'e1', from: 'start', to: 'slow' }, { key: 'e2', from: 'slow', to: 'end' }],
    });
    const def = await define(slow(60_000));
    const res = await h.call('POST', `/v1/definitions/${def}/runs`, { body: { input: {} } });
    const runId = res.body.runId as string;
    await waitFor(async () => (await h.call('GET', `/v1/runs/${runId}/nodes/slow`)).body.status === 'Running', {
      timeoutMs: 20_000, intervalMs: 50, description: 'slow running',
    });
    await update(def, slow(10), 1);
    const moved = await migrate(runId, { toVersion: 2, dryRun: false });
    expect(moved.body).toMatchObject({ verdict: 'compatible', executed: true });
    expect(moved.body.mapping).toContainEqual({ from: 'slow', to: 'slow', kind: 'Tool', status: 'Running', action: 'requeue' });
    // well before the first invocation's 60 s wait could end
    const end = await finished(runId);
    expect(end.run.status).toBe('Completed');
    expect(end.nodeRuns.find((n: Body) => n.nodeKey === 'slow')).toMatchObject({ status: 'Succeeded', attempt: 1 });
    const retried = (await events(runId)).filter((e) => e.kind === 'node.retried');
    expect(retried).toMatchObject([{ nodeKey: 'slow', detail: { by: 'migration', to: 2 } }]);
  });

  it('keeps a running Tool whose work is unchanged on its invocation: its result lands after the move and the run goes through the added node', async () => {
    const line = (withTail: boolean) => ({
      nodes: [
        { key: 'start', kind: 'Start' },
        { key: 'slow', kind: 'Tool', config: { toolName: 'wait', arguments: { ms: 1500 } } },
        ...(withTail ? [{ key: 'tail', kind: 'Tool', config: { toolName: 'echo', arguments: { tail: true } } }] : []),
        { key: 'end', kind: 'End', config: { outcome: 'done' } },
      ],
      edges: withTail
        ? [{ key: 'e1', from: 'start', to: 'slow' }, { key: 'e2t', from: 'slow', to: 'tail' }, { key: 'e3', from: 'tail', to: 'end' }]
        : [{ key: 'e1', from: 'start', to: 'slow' }, { key: 'e2', from: 'slow', to: 'end' }],
    });
    const def = await define(line(false));
    const runId = (await h.call('POST', `/v1/definitions/${def}/runs`, { body: { input: {} } })).body.runId as string;
    await waitFor(async () => (await h.call('GET', `/v1/runs/${runId}/nodes/slow`)).body.status === 'Running', {
      timeoutMs: 20_000, intervalMs: 20, description: 'slow running',
    });
    await update(def, line(true), 1);
    const moved = await migrate(runId, { toVersion: 2, dryRun: false });
    expect(moved.body).toMatchObject({ verdict: 'compatible', executed: true });
    expect(moved.body.mapping).toContainEqual({ from: 'slow', to: 'slow', kind: 'Tool', status: 'Running', action: 'keep' });
    const end = await finished(runId);
    expect(end.run).toMatchObject({ status: 'Completed', definitionVersion: 2 });
    expect(end.nodeRuns.map((n: Body) => [n.nodeKey, n.status, n.attempt])).toEqual([
      ['start', 'Succeeded', 1], ['slow', 'Succeeded', 1], ['tail', 'Succeeded', 1], ['end', 'Succeeded', 1],
    ]);
    expect((await events(runId)).filter((e) => e.kind === 'node.queued' && e.nodeKey === 'slow')).toHaveLength(1);
  });

  it('migrates many parked runs at once, each exactly once, and every one completes through the new node', async () => {
    const def = await define(v1());
    const runs = await Promise.all(Array.from({ length: 20 }, () => parkedRun(def)));
    await update(def, withAfter(), 1);
    // each run twice in parallel: one of a pair moves the run, the other finds it already on version 2
    const answers = await Promise.all(runs.map((r) => Promise.all([migrate(r, { toVersion: 2, dryRun: false }), migrate(r, { toVersion: 2, dryRun: false })])));
    for (const pair of answers) {
      expect(pair.every((a) => a.status === 200 && a.body.verdict === 'compatible')).toBe(true);
      expect(pair.map((a) => a.body.executed).sort()).toEqual([false, true]);
    }
    for (const r of runs) {
      expect((await events(r)).filter((e) => e.kind === 'run.migrated').map((e) => `${e.detail.from}->${e.detail.to}`)).toEqual(['1->2']);
    }
    await Promise.all(runs.map((r, i) => h.call('POST', `/v1/runs/${r}/nodes/p/decide`, { body: { operationId: `go-${i}`, decision: 'Approve' } })));
    for (const r of runs) {
      const end = await finished(r);
      expect(end.run.status).toBe('Completed');
      expect(end.nodeRuns.find((n: Body) => n.nodeKey === 'after')?.status).toBe('Succeeded');
    }
  });

  it('refuses a bad body with 400, an unknown version or run with 404, another tenant with 404', async () => {
    const def = await define(v1());
    const runId = await parkedRun(def);
    expect((await migrate(runId, { toVersion: 2 })).status).toBe(400);
    expect((await migrate(runId, { toVersion: 0, dryRun: true })).status).toBe(400);
    expect((await migrate(runId, { toVersion: 2, nodeMap: { p: 'no spaces' }, dryRun: true })).status).toBe(400);
    const unknownVersion = await migrate(runId, { toVersion: 9, dryRun: true });
    expect(unknownVersion.status).toBe(404);
    expect(unknownVersion.body.error).toMatchObject({ code: 'NotFound', details: [{ key: 'toVersion' }] });
    expect((await migrate(randomUUID(), { toVersion: 1, dryRun: true })).status).toBe(404);
    expect((await migrate(runId, { toVersion: 1, dryRun: true }, KEYS.b)).status).toBe(404);
    // its own version: compatible, nothing to change
    const same = await migrate(runId, { toVersion: 1, dryRun: true });
    expect(same.body).toMatchObject({ verdict: 'compatible', reasons: [], executed: false });
    expect(same.body.mapping.every((m: Body) => m.from === m.to)).toBe(true);
  });

  it('migrates a run whose two Agent nodes swap keys, their checkpointed steps swapping with them', async () => {
    const agent = (key: string, instructions: string) => ({ key, kind: 'Agent', config: { instructions } });
    const chain = (first: unknown, second: unknown, k1: string, k2: string) => ({
      nodes: [{ key: 'start', kind: 'Start' }, first, second, pause(), { key: 'end', kind: 'End', config: { outcome: 'done' } }],
      edges: [{ key: 'e1', from: 'start', to: k1 }, { key: 'e2', from: k1, to: k2 }, { key: 'e3', from: k2, to: 'p' }, { key: 'e4', from: 'p', to: 'end' }],
    });
    const def = await define(chain(agent('a', 'draft'), agent('b', 'review'), 'a', 'b'));
    const runId = (await h.call('POST', `/v1/definitions/${def}/runs`, { body: { input: {} } })).body.runId as string;
    // no LLM worker here: an operator completes each Agent, and each gets the steps its worker would have checkpointed
    for (const key of ['a', 'b']) {
      await waitFor(async () => (await h.call('GET', `/v1/runs/${runId}/nodes/${key}`)).body.status === 'Queued', { timeoutMs: 20_000, intervalMs: 50, description: `${key} queued` });
      expect((await h.call('POST', `/v1/runs/${runId}/nodes/${key}/complete`, { body: { output: { text: `by ${key}` } } })).status).toBe(202);
      await h.db.pool.query(
        `INSERT INTO agent_steps (run_id, node_key, step, tenant_id, generation, attempt, kind, payload, bytes)
         SELECT id, $2, s, tenant_id, 1, 1, 'model', jsonb_build_object('by', $2::text, 'step', s), 20 FROM runs, generate_series(1, 2) s WHERE id = $1`,
        [runId, key],
      );
    }
    await waitFor(async () => (await h.call('GET', `/v1/runs/${runId}`)).body.run.status === 'WaitingForApproval', { timeoutMs: 20_000, intervalMs: 50, description: 'parked on p' });
    // v2: the same chain with the two agents' keys swapped
    await update(def, chain(agent('b', 'draft'), agent('a', 'review'), 'b', 'a'), 1);

    const res = await migrate(runId, { toVersion: 2, nodeMap: { a: 'b', b: 'a' }, dryRun: false });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ verdict: 'compatible', executed: true });
    const steps = await h.db.pool.query<{ node_key: string; by: string }>(
      `SELECT node_key, payload->>'by' AS by FROM agent_steps WHERE run_id = $1 ORDER BY node_key, step`,
      [runId],
    );
    expect(steps.rows).toEqual([{ node_key: 'a', by: 'b' }, { node_key: 'a', by: 'b' }, { node_key: 'b', by: 'a' }, { node_key: 'b', by: 'a' }]);
    const nodes = (await h.call('GET', `/v1/runs/${runId}`)).body.nodeRuns as Body[];
    expect(nodes.filter((n) => n.nodeKey === 'a' || n.nodeKey === 'b').map((n) => n.status)).toEqual(['Succeeded', 'Succeeded']);
  });
});
