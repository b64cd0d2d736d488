/**
 * Delayed starts on a whole cluster: runs created with `startAt` read Scheduled, and after the
 * dispatcher owning one of them is killed (SIGKILL) the survivor, which takes its shards, starts
 * every one within 1 s of its startAt — the wake is the run row's `wake_at`, not a timer held by
 * the dead process.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startE2eCluster, waitFor, type E2eCluster } from '@flowline/testing';

const startEnd = { nodes: [{ key: 'start', kind: 'Start' }, { key: 'end', kind: 'End', config: { outcome: 'done' } }], edges: [{ key: 'e1', from: 'start', to: 'end' }] };

describe('a delayed start across a dispatcher kill -9', () => {
  let c: E2eCluster;

  beforeAll(async () => {
    c = await startE2eCluster({ dispatchers: 2, toolWorkers: 0 });
  }, 90_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') process.stdout.write(`${c.lines.slice(-60).join('\n')}\n`);
  });

  afterAll(async () => {
    await c?.close();
  });

  it('starts every Scheduled run within 1 s of its startAt after the owner of one of them was killed', async () => {
    const definitionId = await c.api.createDefinition('later', startEnd);
    const startAt = new Date(Date.now() + 10_000).toISOString();
    const runIds: string[] = [];
    // enough runs to land on every shard, so both dispatchers own some
    for (let i = 0; i < 24; i++) runIds.push((await c.api.client.runs.start(definitionId, { startAt })).runId);
    for (const id of runIds) expect((await c.api.client.runs.get(id)).run.status).toBe('Scheduled');
    const { killed } = await c.killRunOwner(runIds[0]!);
    expect(killed).toMatch(/^dispatcher-[12]$/);
    expect(Date.now()).toBeLessThan(Date.parse(startAt));
    const lateness: number[] = [];
    for (const id of runIds) {
      const done = await c.api.waitForRun(id, (v) => v.run.status === 'Completed', 30_000, 'delayed run completed');
      const run = (await c.api.client.runs.get(done.run.id)).run;
      expect(run.notBefore).toBe(startAt);
      lateness.push(Date.parse(run.startedAt!) - Date.parse(startAt));
    }
    expect(Math.min(...lateness)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...lateness)).toBeLessThan(1_000);
  }, 90_000);
});

describe('a schedule fired by the dispatcher processes', () => {
  let c: E2eCluster;

  beforeAll(async () => {
    c = await startE2eCluster({ dispatchers: 2, toolWorkers: 0, env: { SCHEDULE_POLL_MS: '200' } });
  }, 90_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') process.stdout.write(`${c.lines.slice(-60).join('\n')}\n`);
  });

  afterAll(async () => {
    await c?.close();
  });

  it('starts one run per slot of a 6-field cron, each slot once in the ledger with its run, and stops when paused', async () => {
    const definitionId = await c.api.createDefinition('ticking', startEnd);
    const s = await c.api.client.schedules.upsert({ key: 'every-2s', definitionId, spec: { cron: '*/2 * * * * *' }, policy: { overlap: 'allowAll' } });
    const started = await waitFor(
      async () => {
        const page = await c.api.client.schedules.slots(s.id);
        return page.items.filter((x) => x.outcome === 'started').length >= 3 ? page.items : false;
      },
      { timeoutMs: 20_000, intervalMs: 250, description: 'three slots started' },
    );
    await c.api.client.schedules.pause(s.id);
    for (const slot of started.filter((x) => x.outcome === 'started')) {
      expect(Date.parse(slot.slotAt) % 2000).toBe(0);
      const done = await c.api.waitForRun(slot.runId!, (v) => v.run.status === 'Completed', 20_000, 'slot run completed');
      const run = (await c.api.client.runs.get(done.run.id)).run;
      expect(run).toMatchObject({ scheduleId: s.id, requestId: `schedule:${s.id}:${slot.slotAt}` });
    }
    const ledger = (await c.api.client.schedules.slots(s.id, { limit: 1000 })).items;
    expect(new Set(ledger.map((x) => x.slotAt)).size).toBe(ledger.length);
    const runs = await c.db.pool.query<{ n: number; keys: number }>(`SELECT count(*)::int AS n, count(DISTINCT request_id)::int AS keys FROM runs WHERE schedule_id = $1`, [s.id]);
    expect(runs.rows[0]!.n).toBe(runs.rows[0]!.keys);
    expect(runs.rows[0]!.n).toBe(ledger.filter((x) => x.runId !== null).length);
    // paused: no slot is decided any more
    const after = ledger.length;
    await new Promise((r) => setTimeout(r, 2_500));
    expect((await c.api.client.schedules.slots(s.id, { limit: 1000 })).items.length).toBe(after);
  }, 60_000);
});
