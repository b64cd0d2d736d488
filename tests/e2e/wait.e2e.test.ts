/**
 * Wait nodes through a whole cluster (API, two dispatchers, a tool worker): a timer parks the
 * run on `runs.wake_at` with nothing working for it, holds no run slot while parked, fires
 * within the sweep interval and survives the kill -9 of the dispatcher that owned the run.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { nodeOf, startE2eCluster, type E2eCluster } from '@flowline/testing';

const timerGraph = (wait: Record<string, string>) => ({
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 'nap', kind: 'Wait', config: wait },
    { key: 'end', kind: 'End', config: { outcome: 'woke', resultPath: 'input.output' } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 'nap' },
    { key: 'e2', from: 'nap', to: 'end' },
  ],
});

const echoGraph = {
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 'say', kind: 'Tool', config: { toolName: 'echo', arguments: { said: 'hi' } } },
    { key: 'end', kind: 'End', config: { outcome: 'done' } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 'say' },
    { key: 'e2', from: 'say', to: 'end' },
  ],
};

describe('Wait timers on a whole cluster', () => {
  let c: E2eCluster;

  beforeAll(async () => {
    // one run slot per tenant: a parked Wait must not hold it. A 20 s shard lease: after a kill -9
    // only the dead dispatcher's released liveness lock can move its shards within a Wait PT8S.
    c = await startE2eCluster({ dispatchers: 2, toolWorkers: 1, env: { MAX_CONCURRENT_RUNS: '1', SHARD_LEASE_MS: '20000' } });
  }, 90_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') process.stdout.write(`${c.lines.slice(-60).join('\n')}\n`);
  });

  afterAll(async () => {
    await c?.close();
  });

  it('completes a Wait PT2S after about two seconds, and the run with it', async () => {
    const defId = await c.api.createDefinition('nap', timerGraph({ for: 'PT2S' }));
    const t0 = Date.now();
    const runId = await c.api.startRun(defId, {});
    const done = await c.api.waitForRun(runId, (v) => v.run.status === 'Completed', 20_000, 'run completed');
    const elapsed = Date.now() - t0;
    expect(elapsed).toBeGreaterThanOrEqual(2000);
    // the sweep is 200 ms here: the wake lands well inside one extra second
    expect(elapsed).toBeLessThan(4000);
    expect(nodeOf(done, 'nap')).toMatchObject({ status: 'Succeeded', attempt: 1 });
    expect(done.output).toMatchObject({ outcome: 'woke', result: { fired: 'timer', at: expect.any(String) } });
  }, 30_000);

  it('holds no run slot while parked: another run of the tenant starts and completes meanwhile', async () => {
    const napId = await c.api.createDefinition('long-nap', timerGraph({ for: 'PT6S' }));
    const echoId = await c.api.createDefinition('echo', echoGraph);
    const parked = await c.api.startRun(napId, {});
    await c.api.waitForRun(parked, (v) => nodeOf(v, 'nap')?.status === 'Running', 20_000, 'Wait parked');
    const other = await c.api.startRun(echoId, {});
    await c.api.waitForRun(other, (v) => v.run.status === 'Completed', 5_000, 'second run completed while the first is parked');
    const meanwhile = await c.api.waitForRun(parked, () => true, 5_000, 'parked run read');
    expect(meanwhile.run.status).toBe('WaitingForApproval');
    expect(nodeOf(meanwhile, 'nap')?.status).toBe('Running');
    const first = await c.api.waitForRun(parked, (v) => v.run.status === 'Completed', 20_000, 'parked run completed');
    expect(nodeOf(first, 'nap')?.status).toBe('Succeeded');
  }, 40_000);

  it("survives a kill -9 of the dispatcher owning the parked run: the survivor wakes it on time, before the dead one's lease ends", async () => {
    const defId = await c.api.createDefinition('nap-kill', timerGraph({ for: 'PT8S' }));
    const t0 = Date.now();
    const runId = await c.api.startRun(defId, {});
    await c.api.waitForRun(runId, (v) => nodeOf(v, 'nap')?.status === 'Running', 20_000, 'Wait parked');
    const owner = await c.ownerOf(runId);
    const killed0 = await c.db.pool.query<{ renewed: Date }>('select max(expires_at) as renewed from shard_leases where owner = $1', [owner]);
    const { killed } = await c.killRunOwner(runId);
    expect(killed).toMatch(/^dispatcher-[12]$/);
    const done = await c.api.waitForRun(runId, (v) => v.run.status === 'Completed', 30_000, 'run completed after the kill');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(8000);
    // on the database clock: the run ended while the killed dispatcher's last lease still ran
    const ended = await c.db.pool.query<{ finished_at: Date }>('select finished_at from runs where id = $1', [runId]);
    expect(ended.rows[0]!.finished_at.getTime()).toBeLessThan(killed0.rows[0]!.renewed.getTime());
    expect(nodeOf(done, 'nap')).toMatchObject({ status: 'Succeeded', attempt: 1 });
    expect(done.output).toMatchObject({ outcome: 'woke', result: { fired: 'timer' } });
  }, 60_000);
});
