/**
 * Run state through a real cluster: "five searches in parallel, one summary". Start writes the
 * topic; five Tool searches (the slowest first in key order, so they finish in reverse) each
 * append a finding; an LlmCall summary reads `state.findings` and `state.topic` through
 * `inputBindings`; the End returns the state it saw. The final state is exact and in writer key
 * order whatever the completion order — also when the dispatcher owning the run is killed -9
 * mid-run and when Redis is flushed mid-run. `?atSeq` answers the state as of each event, and a
 * fork from the third search starts from the state its reused nodes wrote.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { nodeOf, startE2eCluster, type E2eCluster } from '@flowline/testing';

const SEARCHES = ['s1', 's2', 's3', 's4', 's5'];
/** s1 waits longest: the searches finish in reverse key order */
const waitOf = (i: number, slowMs: number) => slowMs + 150 * (SEARCHES.length - i);

function fiveSearches(slowMs: number) {
  return {
    state: { reducers: { findings: 'append' }, initial: { findings: [] } },
    nodes: [
      { key: 'start', kind: 'Start', writes: { topic: 'output.input.topic' } },
      ...SEARCHES.map((key, i) => ({
        key,
        kind: 'Tool',
        config: { toolName: 'wait', arguments: { ms: waitOf(i, slowMs) } },
        writes: { findings: 'output.result' },
      })),
      { key: 'summary', kind: 'LlmCall', config: { prompt: 'Summarise the findings.', inputBindings: { findings: 'state.findings', topic: 'state.topic' } } },
      { key: 'end', kind: 'End', config: { outcome: 'done', resultPath: 'state' } },
    ],
    edges: [
      ...SEARCHES.map((key) => ({ key: `to-${key}`, from: 'start', to: key })),
      ...SEARCHES.map((key) => ({ key: `${key}-sum`, from: key, to: 'summary' })),
      { key: 'sum-end', from: 'summary', to: 'end' },
    ],
  };
}

const expected = (slowMs: number) => ({ topic: 'tides', findings: SEARCHES.map((_, i) => ({ waitedMs: waitOf(i, slowMs) })) });

describe('run state through the cluster', () => {
  let c: E2eCluster;

  beforeAll(async () => {
    c = await startE2eCluster({ dispatchers: 2, toolWorkers: 2, llmWorkers: 1 });
  }, 90_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') process.stdout.write(`${c.lines.slice(-60).join('\n')}\n`);
  });

  afterAll(async () => {
    await c?.close();
  });

  const state = (runId: string, atSeq?: number) => c.api.client.runs.state(runId, atSeq === undefined ? {} : { atSeq });

  it('five searches in parallel, one summary: the exact state, each event\'s state by atSeq, and a fork from the third search', async () => {
    const definitionId = await c.api.createDefinition('five-searches', fiveSearches(0));
    const runId = await c.api.startRun(definitionId, { topic: 'tides' });
    const done = await c.api.waitForRun(runId, (v) => v.run.status === 'Completed', 40_000, 'run completed');
    expect(done.output).toEqual({ outcome: 'done', result: expected(0) });
    const events = await c.api.events(runId);
    expect(await state(runId)).toEqual({ state: expected(0), seq: events.at(-1)!.seq });

    // the summary read the state through its inputBindings
    const summary = await c.api.client.runs.node(runId, 'summary');
    expect(summary.status).toBe('Succeeded');
    expect(summary.input?.state).toEqual(expected(0));

    // every change is an event naming keys, never values; atSeq answers the state as of each event
    const updates = events.filter((e) => e.kind === 'state.updated');
    expect(updates.map((e) => e.nodeKey).sort()).toEqual([...SEARCHES, 'start']);
    expect(updates[0]!.nodeKey).toBe('start');
    const all = await c.api.client.runs.allEvents(runId);
    for (const e of all.filter((x) => x.kind === 'state.updated')) {
      expect(Object.keys(e.detail as object).sort()).toEqual(['bySeq', 'keys']);
      expect(JSON.stringify(e.detail)).not.toContain('waitedMs');
    }
    for (const e of events) {
      const at = await state(runId, e.seq);
      expect(at.seq).toBe(e.seq);
      // the searches committed so far, their findings in writer key order
      const written = updates.filter((u) => u.seq <= e.seq).map((u) => u.nodeKey!);
      const findings = SEARCHES.map((k, i) => (written.includes(k) ? expected(0).findings[i] : null)).filter((f) => f !== null);
      expect(at.state).toEqual(written.includes('start') ? { topic: 'tides', findings } : { findings: [] });
    }
    expect((await c.api.send('GET', `/v1/runs/${runId}/state?atSeq=${events.at(-1)!.seq + 1}`)).status).toBe(400);

    // a fork from the third search: only Start is reused (the searches are not its ancestors), so
    // the fork starts from Start's write alone and every search writes once again
    const fork = await c.api.client.runs.fork(runId, { fromNodeKey: 's3' });
    expect(await state(fork.runId, 1)).toEqual({ state: { topic: 'tides', findings: [] }, seq: 1 });
    const forked = await c.api.waitForRun(fork.runId, (v) => v.run.status === 'Completed', 40_000, 'fork completed');
    expect(forked.output).toEqual({ outcome: 'done', result: expected(0) });
    expect((await state(fork.runId)).state).toEqual(expected(0));
  }, 120_000);

  it('keeps the exact state when the dispatcher owning the run is killed -9 mid-run', async () => {
    const definitionId = await c.api.createDefinition('five-searches-kill', fiveSearches(2500));
    const runId = await c.api.startRun(definitionId, { topic: 'tides' });
    await c.api.waitForRun(runId, (v) => SEARCHES.every((k) => nodeOf(v, k)?.status === 'Running'), 30_000, 'searches running');
    await c.killRunOwner(runId);
    const done = await c.api.waitForRun(runId, (v) => v.run.status === 'Completed', 40_000, 'run completed');
    expect(done.output).toEqual({ outcome: 'done', result: expected(2500) });
    expect((await state(runId)).state).toEqual(expected(2500));
  }, 120_000);

  it('keeps the exact state when Redis is flushed mid-run', async () => {
    const definitionId = await c.api.createDefinition('five-searches-flush', fiveSearches(2000));
    const runId = await c.api.startRun(definitionId, { topic: 'tides' });
    await c.api.waitForRun(runId, (v) => SEARCHES.every((k) => nodeOf(v, k)?.status === 'Running'), 30_000, 'searches running');
    await c.redis.flushall();
    const done = await c.api.waitForRun(runId, (v) => v.run.status === 'Completed', 40_000, 'run completed');
    expect(done.output).toEqual({ outcome: 'done', result: expected(2000) });
    expect((await state(runId)).state).toEqual(expected(2000));
    // a search run again after the flush wrote once: one finding per search
    const updates = (await c.api.events(runId)).filter((e) => e.kind === 'state.updated');
    expect(updates.map((e) => e.nodeKey).sort()).toEqual(['s1', 's2', 's3', 's4', 's5', 'start']);
  }, 120_000);
});
