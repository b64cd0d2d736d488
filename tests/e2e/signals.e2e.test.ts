/**
 * Signals through a whole cluster (API, two dispatchers, a tool worker): a signal sent before
 * its Wait is reached is kept and consumed, and a race trial where each run's signal is sent
 * within ±50 ms of the moment its Wait is reached loses none.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { nodeOf, startE2eCluster, type E2eCluster } from '@flowline/testing';

/**
 * Runs in the race trial. The acceptance figure is 1,000; 200 keeps this file near a
 * minute on a shared 2-core machine. Raise it (e.g. `SIGNAL_RACE_RUNS=1000`) for the full trial.
 */
const RACE_RUNS = Number(process.env.SIGNAL_RACE_RUNS ?? 200);
/** How long the `wait` tool in front of the Wait node takes, ms. */
const WORK_MS = 500;
/** Time between two run starts of the race trial: WORK_MS / 16 tool slots, with room to spare. */
const START_SPACING_MS = 40;

/** start → work (the `wait` tool, WORK_MS) → await (Wait on signal `review`) → end */
const graph = {
  signals: { review: { schema: { type: 'object', required: ['n'] } } },
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 'work', kind: 'Tool', config: { toolName: 'wait', arguments: { ms: WORK_MS } } },
    { key: 'await', kind: 'Wait', config: { signal: 'review' } },
    { key: 'end', kind: 'End', config: { outcome: 'signalled', resultPath: 'input.output' } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 'work' },
    { key: 'e2', from: 'work', to: 'await' },
    { key: 'e3', from: 'await', to: 'end' },
  ],
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

describe('signals on a whole cluster', () => {
  let c: E2eCluster;
  let defId: string;

  beforeAll(async () => {
    c = await startE2eCluster({ dispatchers: 2, toolWorkers: 1, env: { MAX_CONCURRENT_RUNS: '1000' } });
    defId = await c.api.createDefinition('signalled', graph);
  }, 90_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') process.stdout.write(`${c.lines.slice(-60).join('\n')}\n`);
  });

  afterAll(async () => {
    await c?.close();
  });

  const signal = (runId: string, n: number) => c.api.send('POST', `/v1/runs/${runId}/signals`, { channel: 'review', payload: { n }, requestId: `sig-${runId}` });

  it('consumes a signal sent before the Wait is reached (the Wait is behind a 500 ms tool)', async () => {
    const runId = await c.api.startRun(defId, {});
    const sent = await signal(runId, 7);
    expect(sent.status).toBe(202);
    const early = await c.api.getRun(runId);
    expect(nodeOf(early, 'await')?.status).toBe('Pending');
    const done = await c.api.waitForRun(runId, (v) => v.run.status === 'Completed', 20_000, 'run completed');
    expect(done.output).toMatchObject({ outcome: 'signalled', result: { fired: 'signal', channel: 'review', payload: { n: 7 } } });
  }, 30_000);

  it(`loses no signal of ${RACE_RUNS} runs whose signal is sent 0–50 ms around the moment the Wait is reached`, async () => {
    const runs: string[] = [];
    const sends: Promise<{ status: number }>[] = [];
    const t0 = Date.now();
    for (let i = 0; i < RACE_RUNS; i++) {
      // paced so the tool lane (16 slots) is never the queue: each run's work starts at once and
      // its Wait is reached about WORK_MS after its start
      await sleep(t0 + i * START_SPACING_MS - Date.now());
      const runId = await c.api.startRun(defId, {});
      runs.push(runId);
      // the Wait is reached about WORK_MS after the start (plus a hop or two): aim ±50 ms around it
      const offset = WORK_MS + Math.round(Math.random() * 100) - 50;
      sends.push(sleep(offset).then(() => signal(runId, i)));
    }
    const answers = await Promise.all(sends);
    expect(answers.filter((a) => a.status !== 202)).toEqual([]);
    const lost: string[] = [];
    for (const [i, runId] of runs.entries()) {
      const done = await c.api.waitForRun(runId, (v) => v.run.status === 'Completed', 60_000, `run ${i} completed`).catch(() => null);
      if (!done || (done.output as { result?: { payload?: { n?: number } } }).result?.payload?.n !== i) lost.push(runId);
    }
    expect(lost).toEqual([]);
    const left = await c.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM run_signals WHERE run_id = ANY($1::uuid[]) AND consumed_at IS NULL', [runs]);
    expect(left.rows[0]!.n).toBe(0);
    // which side of the race each signal landed on: sent before its Wait was reached, or after
    const split = await c.db.pool.query<{ early: number; late: number }>(
      `SELECT count(*) FILTER (WHERE s.created_at < n.started_at)::int AS early, count(*) FILTER (WHERE s.created_at >= n.started_at)::int AS late
       FROM run_signals s JOIN node_runs n ON n.run_id = s.run_id AND n.node_key = 'await' WHERE s.run_id = ANY($1::uuid[])`,
      [runs],
    );
    expect(split.rows[0]!.early + split.rows[0]!.late).toBe(RACE_RUNS);
    process.stdout.write(`signal race: ${split.rows[0]!.early} sent before the Wait was reached, ${split.rows[0]!.late} after\n`);
  }, 240_000);
});
