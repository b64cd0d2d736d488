/**
 * POST /v1/runs/{id}/fork through the real app, the real dispatcher and tool worker
 * (in-process), Postgres and Redis. Tool invocations are counted by the `counter` test tool
 * (per key, in this process): a reused upstream node is never invoked again.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@flowline/testing';
import { KEYS, startHarness, type Harness } from '../../../services/api/test/harness';
import { startInProcessLanes, type InProcessLanes } from './in-process-lanes';
import { defineGraph, runFinished, updateGraph, type Body } from './run-calls';

const SHARD_COUNT = 4;

/** Start → up(counter) → f(echo of up's result, bound) → after(counter) → End. */
function forkGraph(tag: string, fArgs: Record<string, unknown> = { label: 'v1' }) {
  return {
    nodes: [
      { key: 'start', kind: 'Start' },
      { key: 'up', kind: 'Tool', config: { toolName: 'counter', arguments: { key: `up-${tag}` } } },
      { key: 'f', kind: 'Tool', config: { toolName: 'echo', arguments: fArgs, argumentBindings: { seen: 'input.output.result' } } },
      { key: 'after', kind: 'Tool', config: { toolName: 'counter', arguments: { key: `after-${tag}` } } },
      { key: 'end', kind: 'End', config: { outcome: 'done' } },
    ],
    edges: [
      { key: 'e1', from: 'start', to: 'up' },
      { key: 'e2', from: 'up', to: 'f' },
      { key: 'e3', from: 'f', to: 'after' },
      { key: 'e4', from: 'after', to: 'end' },
    ],
  };
}

let h: Harness;
let lanes: InProcessLanes | null = null;

beforeAll(async () => {
  h = await startHarness({ shardCount: SHARD_COUNT });
  lanes = await startInProcessLanes(h, { id: 'fork-test', shardCount: SHARD_COUNT, toolWorker: true, env: { MAX_CONCURRENT_RUNS: '1000' } });
});
afterAll(async () => {
  await lanes?.stop();
  await h?.close();
});

const define = (graph: unknown) => defineGraph(h, graph, 'fork');
const update = (defId: string, graph: unknown, version: number) => updateGraph(h, defId, graph, version);
async function start(defId: string, input: unknown = { q: 1 }): Promise<string> {
  const res = await h.call('POST', `/v1/definitions/${defId}/runs`, { body: { input } });
  expect(res.status).toBe(202);
  return res.body.runId as string;
}
const finished = (runId: string) => runFinished(h, runId);
async function fork(runId: string, body: unknown, token: string = KEYS.a) {
  return h.call('POST', `/v1/runs/${runId}/fork`, { body, token });
}
async function node(runId: string, key: string): Promise<Body> {
  return (await h.call('GET', `/v1/runs/${runId}/nodes/${key}`)).body as Body;
}
async function events(runId: string): Promise<Body[]> {
  return (await h.call('GET', `/v1/runs/${runId}/events`)).body.events as Body[];
}
const row = (d: Body, key: string): Body => d.nodeRuns.find((n: Body) => n.nodeKey === key);

describe('POST /v1/runs/{id}/fork', () => {
  it('forks from a node with an edited input: the node runs with it, the upstream tool is not invoked again, both runs name the link', async () => {
    const tag = randomUUID();
    const def = await define(forkGraph(tag));
    const source = await start(def);
    const src = await finished(source);
    expect(src.run.status).toBe('Completed');
    const upOut = (await node(source, 'up')).output;
    expect(upOut.output.result).toMatchObject({ key: `up-${tag}`, count: 1 });

    const res = await fork(source, { fromNodeKey: 'f', input: { output: { result: { edited: true } } } });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ runId: expect.any(String), forkedFrom: { runId: source, nodeKey: 'f' } });
    expect(res.res.headers.get('location')).toBe(`/v1/runs/${res.body.runId}`);
    const forked = await finished(res.body.runId);
    expect(forked.run).toMatchObject({ status: 'Completed', forkedFrom: { runId: source, nodeKey: 'f' }, definitionVersion: 1 });
    expect(src.run.forkedFrom).toBeNull();
    // the forked node ran with the edited input; downstream ran again; upstream was copied
    expect((await node(res.body.runId, 'f')).output.output.result).toEqual({ label: 'v1', seen: { edited: true } });
    expect(row(forked, 'start')).toMatchObject({ status: 'Succeeded', reusedFrom: source });
    expect(row(forked, 'up')).toMatchObject({ status: 'Succeeded', reusedFrom: source, attempt: 1 });
    expect(row(forked, 'f')).toMatchObject({ status: 'Succeeded', reusedFrom: null });
    expect((await node(res.body.runId, 'up')).output).toEqual(upOut);
    expect((await node(res.body.runId, 'after')).output.output.result).toMatchObject({ key: `after-${tag}`, count: 2 });
    const forkedEvents = await events(res.body.runId);
    expect(forkedEvents[0]).toMatchObject({ seq: 1, kind: 'run.created', detail: { forkedFrom: { runId: source, nodeKey: 'f' }, reused: ['start', 'up'] } });
    expect(forkedEvents.filter((e) => e.nodeKey === 'up')).toEqual([]);
    const forkedOn = (await events(source)).filter((e) => e.kind === 'run.forked');
    expect(forkedOn).toMatchObject([{ nodeKey: 'f', detail: { newRunId: res.body.runId, fromNodeKey: 'f' } }]);

    // counted: a fresh run invokes `up` for the 2nd time only, so the fork invoked it 0 times
    const fresh = await finished(await start(def));
    expect(fresh.run.status).toBe('Completed');
    expect((await node(fresh.run.id, 'up')).output.output.result).toMatchObject({ count: 2 });
  }, 60_000);

  it('forks onto a newer definition version (current, and an older saved one parsed again), refusing versions whose keys no longer line up', async () => {
    const tag = randomUUID();
    const def = await define(forkGraph(tag));
    const source = await start(def);
    await finished(source);
    await update(def, forkGraph(tag, { label: 'v2' }), 1);
    const onV2 = await fork(source, { fromNodeKey: 'f', definitionVersion: 2 });
    expect(onV2.status).toBe(202);
    const d2 = await finished(onV2.body.runId);
    expect(d2.run).toMatchObject({ status: 'Completed', definitionVersion: 2 });
    expect((await node(onV2.body.runId, 'f')).output.output.result).toMatchObject({ label: 'v2', seen: { key: `up-${tag}`, count: 1 } });
    expect(row(d2, 'up').reusedFrom).toBe(source);

    // v3 drops `f`; v4 makes `up` a Parallel; v5 drops `up`
    const g = forkGraph(tag);
    await update(def, { ...g, nodes: g.nodes.filter((n) => n.key !== 'f'), edges: [g.edges[0], { key: 'e5', from: 'up', to: 'after' }, g.edges[3]] }, 2);
    await update(def, { ...g, nodes: g.nodes.map((n) => (n.key === 'up' ? { key: 'up', kind: 'Parallel' } : n)) }, 3);
    await update(def, { ...g, nodes: g.nodes.filter((n) => n.key !== 'up'), edges: [{ key: 'e6', from: 'start', to: 'f' }, g.edges[2], g.edges[3]] }, 4);
    expect((await fork(source, { fromNodeKey: 'f', definitionVersion: 3 })).body.error).toMatchObject({ code: 'ForkNodeNotInVersion', details: [{ key: 'f' }] });
    const kind = await fork(source, { fromNodeKey: 'f', definitionVersion: 4 });
    expect(kind.status).toBe(409);
    expect(kind.body.error).toMatchObject({ code: 'ForkUpstreamMismatch', details: [{ key: 'up', message: expect.stringContaining('Parallel') }] });
    const gone = await fork(source, { fromNodeKey: 'f', definitionVersion: 5 });
    expect(gone.body.error).toMatchObject({ code: 'ForkUpstreamMismatch', details: [{ key: 'up', message: expect.stringContaining('missing') }] });

    // v2 is no longer the definition's current version: read from the saved versions and parsed again
    const again = await fork(source, { fromNodeKey: 'after', definitionVersion: 2 });
    expect(again.status).toBe(202);
    const d2b = await finished(again.body.runId);
    expect(d2b.run.definitionVersion).toBe(2);
    expect(d2b.nodeRuns.filter((n: Body) => n.reusedFrom === source).map((n: Body) => n.nodeKey)).toEqual(['start', 'up', 'f']);
  }, 60_000);

  it('refuses with keyed errors: unknown node, unknown version, failedOnly with input, a bad body, and a reused request id', async () => {
    const def = await define(forkGraph(randomUUID()));
    const source = await start(def);
    await finished(source);
    const unknown = await fork(source, { fromNodeKey: 'nope' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: 'ForkNodeUnknown', details: [{ key: 'nope' }] });
    const version = await fork(source, { fromNodeKey: 'f', definitionVersion: 99 });
    expect(version.status).toBe(400);
    expect(version.body.error).toMatchObject({ code: 'ForkVersionUnknown', details: [{ key: 'definitionVersion' }] });
    const withInput = await fork(source, { fromNodeKey: 'f', failedOnly: true, input: { x: 1 } });
    expect(withInput.status).toBe(400);
    expect(withInput.body.error).toMatchObject({ code: 'ValidationFailed', details: [{ key: 'input' }] });
    expect((await fork(source, {})).status).toBe(400);
    const big = await fork(source, { fromNodeKey: 'f', input: { s: 'x'.repeat(70_000) } });
    expect(big.body.error).toMatchObject({ code: 'InputTooLarge' });

    const requestId = randomUUID();
    const first = await fork(source, { fromNodeKey: 'f', requestId });
    expect(first.status).toBe(202);
    const replay = await h.call('POST', `/v1/runs/${source}/fork`, { body: { fromNodeKey: 'f' }, headers: { 'idempotency-key': requestId } });
    expect(replay.body.runId).toBe(first.body.runId);
    const reused = await fork(source, { fromNodeKey: 'after', requestId });
    expect(reused.status).toBe(409);
    expect(reused.body.error.code).toBe('RequestIdReused');
    expect((await events(source)).filter((e) => e.kind === 'run.forked')).toHaveLength(1);
    await finished(first.body.runId);

    // concurrent forks under one key: one run, one run.forked
    const raceKey = randomUUID();
    const raced = await Promise.all(Array.from({ length: 6 }, () => fork(source, { fromNodeKey: 'after', requestId: raceKey })));
    expect(raced.map((r) => r.status)).toEqual(Array(6).fill(202));
    expect(new Set(raced.map((r) => r.body.runId)).size).toBe(1);
    expect((await events(source)).filter((e) => e.kind === 'run.forked')).toHaveLength(2);
    await finished(raced[0]!.body.runId);
  }, 60_000);

  it('keeps a node an operator declared not taken as not taken in the fork: the node after it runs again from it', async () => {
    const tag = randomUUID();
    const def = await define({
      nodes: [
        { key: 'start', kind: 'Start' },
        { key: 'gate', kind: 'Pause', config: { prompt: 'Go?', allowedDecisions: ['Approve'] } },
        { key: 'f', kind: 'Tool', config: { toolName: 'counter', arguments: { key: `f-${tag}` } } },
        { key: 'end', kind: 'End', config: { outcome: 'done' } },
      ],
      edges: [
        { key: 'e1', from: 'start', to: 'gate' },
        { key: 'e2', from: 'gate', to: 'f' },
        { key: 'e3', from: 'f', to: 'end' },
      ],
    });
    const source = await start(def);
    await waitFor(async () => (await h.call('GET', `/v1/runs/${source}`)).body.run.status === 'WaitingForApproval', {
      timeoutMs: 20_000,
      description: 'the gate waits',
    });
    expect((await h.call('POST', `/v1/runs/${source}/nodes/gate/skip`, { body: {} })).status).toBe(202);
    expect((await finished(source)).run.status).toBe('Completed');
    const res = await fork(source, { fromNodeKey: 'f' });
    expect(res.status).toBe(202);
    const forked = await finished(res.body.runId);
    expect(forked.run.status).toBe('Completed');
    expect(row(forked, 'gate')).toMatchObject({ status: 'Skipped', reusedFrom: source });
    expect((await node(res.body.runId, 'f')).output.output.result).toMatchObject({ key: `f-${tag}`, count: 2 });
  });

  it('answers 404 for another tenant’s run, an unknown run and a malformed id', async () => {
    const def = await define(forkGraph(randomUUID()));
    const source = await start(def);
    expect((await fork(source, { fromNodeKey: 'f' }, KEYS.b)).status).toBe(404);
    expect((await fork('00000000-0000-4000-8000-000000000000', { fromNodeKey: 'f' })).status).toBe(404);
    expect((await fork('nope', { fromNodeKey: 'f' })).status).toBe(404);
    expect((await events(source)).filter((e) => e.kind === 'run.forked')).toEqual([]);
    await finished(source);
  }, 60_000);

  it('forks from Start with a new run input, and forks a run that is still live', async () => {
    const def = await define(forkGraph(randomUUID()));
    const source = await start(def, { q: 1 });
    // forked at once, while the source is live: a new run of its own
    const live = await fork(source, { fromNodeKey: 'start', input: { q: 2 } });
    expect(live.status).toBe(202);
    const d = await finished(live.body.runId);
    expect(d.run.status).toBe('Completed');
    expect(d.nodeRuns.every((n: Body) => n.reusedFrom === null)).toBe(true);
    expect((await node(live.body.runId, 'start')).output.output).toEqual({ input: { q: 2 } });
    expect((await finished(source)).run.status).toBe('Completed');
  }, 60_000);

  it('failedOnly keeps the succeeded branches of a Parallel fan-out and runs the failed one (onto a version that fixes it)', async () => {
    const tag = randomUUID();
    const branch = (key: string, config: Record<string, unknown>) => ({ key, kind: 'Tool', maxAttempts: 1, config });
    const fan = (bConfig: Record<string, unknown>) => ({
      nodes: [
        { key: 'start', kind: 'Start' },
        { key: 'p', kind: 'Parallel' },
        branch('a', { toolName: 'counter', arguments: { key: `a-${tag}` } }),
        // b fails only after a and c succeeded (the run's failure cancels what is still live)
        branch('bw', { toolName: 'wait', arguments: { ms: 400 } }),
        branch('b', bConfig),
        branch('c', { toolName: 'counter', arguments: { key: `c-${tag}` } }),
        { key: 'j', kind: 'Join' },
        { key: 'end', kind: 'End', config: { outcome: 'done' } },
      ],
      edges: [
        { key: 'e1', from: 'start', to: 'p' },
        { key: 'e2', from: 'p', to: 'a' },
        { key: 'e3', from: 'p', to: 'bw' },
        { key: 'e3b', from: 'bw', to: 'b' },
        { key: 'e4', from: 'p', to: 'c' },
        { key: 'e5', from: 'a', to: 'j' },
        { key: 'e6', from: 'b', to: 'j' },
        { key: 'e7', from: 'c', to: 'j' },
        { key: 'e8', from: 'j', to: 'end' },
      ],
    });
    const def = await define(fan({ toolName: 'test_fail', arguments: { untilAttempt: 5 } }));
    const source = await start(def);
    const src = await finished(source);
    expect(src.run.status).toBe('Failed');
    await update(def, fan({ toolName: 'echo', arguments: { fixed: true } }), 1);

    const res = await fork(source, { fromNodeKey: 'p', failedOnly: true, definitionVersion: 2 });
    expect(res.status).toBe(202);
    const d = await finished(res.body.runId);
    expect(d.run.status).toBe('Completed');
    expect(d.nodeRuns.filter((n: Body) => n.reusedFrom === source).map((n: Body) => n.nodeKey).sort()).toEqual(['a', 'bw', 'c', 'p', 'start']);
    expect(row(d, 'b')).toMatchObject({ status: 'Succeeded', reusedFrom: null });
    const ran = (await events(res.body.runId)).filter((e) => e.kind === 'node.queued').map((e) => e.nodeKey);
    expect(ran).toEqual(['b']);
    expect((await node(res.body.runId, 'a')).output).toEqual((await node(source, 'a')).output);

  }, 60_000);

  it('failedOnly resumes a Loop that failed at its 2nd iteration there, keeping the 1st (onto a fixed body version)', async () => {
    // the body: its first iteration (input without `outcome`) ends at once; a later one runs `step`
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
    const bodyDef = await define(body({ toolName: 'test_fail', arguments: { untilAttempt: 5 } }));
    const loopDef = await define({
      nodes: [
        { key: 'start', kind: 'Start' },
        { key: 'loop', kind: 'Loop', config: { body: bodyDef, maxIterations: 2 } },
        { key: 'end', kind: 'End', config: { outcome: 'done' } },
      ],
      edges: [
        { key: 'e1', from: 'start', to: 'loop' },
        { key: 'e2', from: 'loop', to: 'end' },
      ],
    });
    const source = await start(loopDef, { q: 'loop' });
    const src = await finished(source);
    expect(src.run.status).toBe('Failed');
    expect(row(src, 'loop').status).toBe('Failed');
    await update(bodyDef, body({ toolName: 'echo', arguments: { fixed: true } }), 1);

    const res = await fork(source, { fromNodeKey: 'loop', failedOnly: true });
    expect(res.status).toBe(202);
    const d = await finished(res.body.runId);
    expect(d.run.status).toBe('Completed');
    const loop = (await node(res.body.runId, 'loop')).output.output;
    expect(loop).toMatchObject({ iterations: 2, exitReason: 'maxIterations', last: { outcome: 'later', result: { fixed: true } } });
    expect(loop.results).toEqual([{ outcome: 'first', result: { input: { q: 'loop' } } }, { outcome: 'later', result: { fixed: true } }]);
    // one child run: the 2nd iteration; the 1st was kept from the source
    const children = ((await h.call('GET', '/v1/runs?limit=200')).body.items as Body[]).filter((r) => r.parentRunId === res.body.runId);
    expect(children).toHaveLength(1);
  }, 60_000);
});
