/**
 * The Map node through a real cluster: 1,000 items, maxConcurrency 16, each item a Start → End
 * child run. Sampled from the store while the run goes, never more than 16 of its children are
 * live; it completes with 1,000 results in item order, written into the run state by the Map's
 * own `writes`. A failing item past the tolerance fails the Map and cancels its live children.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { nodeOf, startE2eCluster, type E2eCluster } from '@flowline/testing';

const ITEMS = 1_000;
const CAP = 16;

describe('Map through the cluster', () => {
  let c: E2eCluster;

  beforeAll(async () => {
    c = await startE2eCluster({ dispatchers: 2, toolWorkers: 1 });
  }, 90_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') process.stdout.write(`${c.lines.slice(-60).join('\n')}\n`);
  });

  afterAll(async () => {
    await c?.close();
  });

  const liveChildren = async (runId: string): Promise<number> =>
    Number(
      (await c.db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM runs WHERE parent_run_id = $1 AND status NOT IN ('Completed', 'Failed', 'Cancelled')`, [runId]))
        .rows[0]!.n,
    );

  it(`maps ${ITEMS} items with maxConcurrency ${CAP}: never more than ${CAP} children live, ${ITEMS} results in item order`, async () => {
    const itemDef = await c.api.createDefinition('map-item', {
      nodes: [
        { key: 'start', kind: 'Start' },
        { key: 'end', kind: 'End', config: { outcome: 'done', resultPath: 'run.input.n' } },
      ],
      edges: [{ key: 'e1', from: 'start', to: 'end' }],
    });
    const mapDef = await c.api.createDefinition('map-1000', {
      state: { initial: { urls: [] } },
      nodes: [
        { key: 'start', kind: 'Start', writes: { urls: 'output.input.urls' } },
        { key: 'each', kind: 'Map', config: { definitionId: itemDef, items: 'state.urls', maxConcurrency: CAP }, writes: { pages: 'output.results' } },
        { key: 'end', kind: 'End', config: { outcome: 'mapped', resultPath: 'input.output' } },
      ],
      edges: [
        { key: 'e1', from: 'start', to: 'each' },
        { key: 'e2', from: 'each', to: 'end' },
      ],
    });
    const began = Date.now();
    const runId = await c.api.startRun(mapDef, { urls: Array.from({ length: ITEMS }, (_, n) => ({ n })) });
    let most = 0;
    let samples = 0;
    let status = 'Pending';
    while (!['Completed', 'Failed', 'Cancelled'].includes(status) && Date.now() - began < 240_000) {
      most = Math.max(most, await liveChildren(runId));
      samples++;
      if (samples % 10 === 0) status = (await c.api.getRun(runId)).run.status;
      await new Promise((r) => setTimeout(r, 10));
    }
    const view = await c.api.waitForRun(runId, (v) => ['Completed', 'Failed', 'Cancelled'].includes(v.run.status), 60_000, 'the Map run ends');
    const tookMs = Date.now() - began;
    process.stdout.write(`map of ${ITEMS}: ${tookMs} ms, ${samples} samples, most live children ${most}\n`);
    expect(view.run).toMatchObject({ status: 'Completed' });
    expect(most).toBeLessThanOrEqual(CAP);
    expect(most).toBeGreaterThan(1);
    const out = view.output as { outcome: string; result: { results: Array<{ outcome: string; result: number }>; succeeded: number; failed: number } };
    expect(out.outcome).toBe('mapped');
    expect(out.result.succeeded).toBe(ITEMS);
    expect(out.result.failed).toBe(0);
    expect(out.result.results.map((r) => r.result)).toEqual(Array.from({ length: ITEMS }, (_, n) => n));
    const children = await c.db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM runs WHERE parent_run_id = $1 AND status = 'Completed'`, [runId]);
    expect(Number(children.rows[0]!.n)).toBe(ITEMS);
    const state = await c.api.client.runs.state(runId, {});
    expect((state.state as { pages: unknown[] }).pages).toHaveLength(ITEMS);
  }, 300_000);

  it('fails the Map one failed item past toleratedFailures and cancels the children still working', async () => {
    const itemDef = await c.api.createDefinition('map-item-maybe-fail', {
      nodes: [
        { key: 'start', kind: 'Start' },
        { key: 'work', kind: 'Tool', maxAttempts: 1, config: { toolName: 'test_fail', argumentBindings: { untilAttempt: 'run.input.until', ms: 'run.input.ms' } } },
        { key: 'end', kind: 'End', config: { outcome: 'done', resultPath: 'run.input.n' } },
      ],
      edges: [
        { key: 'e1', from: 'start', to: 'work' },
        { key: 'e2', from: 'work', to: 'end' },
      ],
    });
    const mapDef = await c.api.createDefinition('map-tolerance', {
      nodes: [
        { key: 'start', kind: 'Start' },
        { key: 'each', kind: 'Map', config: { definitionId: itemDef, items: 'run.input.items', maxConcurrency: 3, toleratedFailures: 1 } },
        { key: 'end', kind: 'End', config: { outcome: 'mapped' } },
      ],
      edges: [
        { key: 'e1', from: 'start', to: 'each' },
        { key: 'e2', from: 'each', to: 'end' },
      ],
    });
    // items 0 and 1 fail (their one attempt is below untilAttempt 2), item 2 waits long
    const items = [
      { n: 0, until: 2, ms: 0 },
      { n: 1, until: 2, ms: 0 },
      { n: 2, until: 1, ms: 120_000 },
      { n: 3, until: 1, ms: 10 },
    ];
    const runId = await c.api.startRun(mapDef, { items });
    const view = await c.api.waitForRun(runId, (v) => ['Completed', 'Failed', 'Cancelled'].includes(v.run.status), 60_000, 'the Map run ends');
    expect(view.run.status).toBe('Failed');
    expect(nodeOf(view, 'each')).toMatchObject({ status: 'Failed' });
    expect(nodeOf(view, 'each')?.reason).toContain('2 of 4 items failed, over the 1 tolerated');
    await expect.poll(() => liveChildren(runId), { timeout: 30_000 }).toBe(0);
    const byStatus = await c.db.pool.query<{ status: string; n: string }>(`SELECT status, count(*) AS n FROM runs WHERE parent_run_id = $1 GROUP BY status`, [runId]);
    const counts = Object.fromEntries(byStatus.rows.map((r) => [r.status, Number(r.n)]));
    expect(counts['Failed']).toBe(2);
    // the long item was cancelled with the Map, not left running
    expect(counts['Cancelled']).toBeGreaterThanOrEqual(1);
  }, 120_000);
});
