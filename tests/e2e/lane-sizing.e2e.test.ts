/**
 * 101 runs each waiting 14 s under MAX_CONCURRENT_RUNS=100 on the default cluster (two
 * dispatchers, one tool worker with its default LANE_CONCURRENCY): with a `Wait PT14S` node they
 * park on wake_at holding no run slot and no worker; with the `wait` tool each holds a run slot
 * and a tool-lane slot, and the lane's default (100 slots, an I/O-bound lane) runs the first 100
 * at once, so the 101st starts when a slot frees. The test asserts completion and prints the
 * durations (timing thresholds on a shared machine would be flaky), plus the tool worker's
 * resident memory idle and with 100 `wait` calls in flight — the per-slot figure of
 * docs/scaling.md.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startE2eCluster, type E2eCluster } from '@flowline/testing';

const RUNS = 101;

const graphWith = (node: Record<string, unknown>) => ({
  nodes: [{ key: 'start', kind: 'Start' }, { key: 'nap', ...node }, { key: 'end', kind: 'End', config: { outcome: 'done' } }],
  edges: [
    { key: 'e1', from: 'start', to: 'nap' },
    { key: 'e2', from: 'nap', to: 'end' },
  ],
});

/** Resident memory (KiB) of `pid` and every process below it (a service runs under tsx). */
function treeRssKb(pid: number): number {
  const rows = execFileSync('ps', ['-eo', 'pid=,ppid=,rss='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/).map(Number) as [number, number, number]);
  const inTree = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [p, pp] of rows) {
      if (inTree.has(pp) && !inTree.has(p)) {
        inTree.add(p);
        grew = true;
      }
    }
  }
  return rows.filter(([p]) => inTree.has(p)).reduce((n, [, , rss]) => n + rss, 0);
}

describe('101 runs waiting 14 s under MAX_CONCURRENT_RUNS=100', () => {
  let c: E2eCluster;

  beforeAll(async () => {
    c = await startE2eCluster({ dispatchers: 2, toolWorkers: 1, env: { MAX_CONCURRENT_RUNS: '100' } });
  }, 90_000);
  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') process.stdout.write(`${c.lines.slice(-60).join('\n')}\n`);
  });
  afterAll(async () => {
    await c?.close();
  });

  /** Starts RUNS runs of `defId` and waits for every one to complete; answers the wall time, ms. */
  async function runAll(defId: string, during?: () => void): Promise<number> {
    const t0 = Date.now();
    const ids: string[] = [];
    for (let i = 0; i < RUNS; i++) ids.push(await c.api.startRun(defId, {}));
    const sampler = during ? setInterval(during, 500) : null;
    try {
      const done = await Promise.all(ids.map((id) => c.api.waitForRun(id, (v) => ['Completed', 'Failed', 'Cancelled'].includes(v.run.status), 150_000, `run ${id} ended`)));
      expect(done.map((v) => v.run.status)).toEqual(ids.map(() => 'Completed'));
    } finally {
      if (sampler) clearInterval(sampler);
    }
    return Date.now() - t0;
  }

  it('finishes all 101 with a Wait PT14S node: parked runs hold neither a run slot nor a worker', async () => {
    const defId = await c.api.createDefinition('nap-node', graphWith({ kind: 'Wait', config: { for: 'PT14S' } }));
    const ms = await runAll(defId);
    process.stdout.write(`[lane-sizing] ${RUNS} runs with a Wait PT14S node completed in ${ms} ms\n`);
  }, 180_000);

  it('finishes all 101 with the wait tool for 14 s on the default tool lane, and reports memory per slot', async () => {
    const defId = await c.api.createDefinition('nap-tool', graphWith({ kind: 'Tool', config: { toolName: 'wait', arguments: { ms: 14_000 } } }));
    const worker = c.cluster.processes.get('worker-tool-1')!.proc.pid!;
    const idleKb = treeRssKb(worker);
    let peakKb = idleKb;
    const ms = await runAll(defId, () => {
      peakKb = Math.max(peakKb, treeRssKb(worker));
    });
    const perSlotKb = (peakKb - idleKb) / 100;
    process.stdout.write(
      `[lane-sizing] ${RUNS} runs with the wait tool (14 s) completed in ${ms} ms; tool worker RSS idle ${idleKb} KiB, ` +
        `peak with 100 calls in flight ${peakKb} KiB (${perSlotKb.toFixed(1)} KiB per busy slot)\n`,
    );
  }, 240_000);
});
