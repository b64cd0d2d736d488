/**
 * The schedule firer on real Postgres: several firer instances (each its own pool, as separate
 * dispatcher replicas are) racing over the same due slots decide each slot once and start one
 * run per started slot; catch-up after downtime; the overlap policies; a pass that died after
 * creating a run; pauseOnFailure. No dispatcher ticks here, so a started run stays live (Pending)
 * until the test ends it.
 */
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, deleteDefinitionAlias, getSchedule, insertDefinition, putDefinitionAlias, startSlotRun, updateDefinition, upsertSchedule, type SlotOutcome } from '@flowline/db';
import { checkSchedulePolicy, checkScheduleSpec, stringifyJson } from '@flowline/graph';
import { firePass, type ScheduleFireDeps } from '../src/schedule-fire';
import { createHarness, edge, graphOf, node, type Harness } from './harness';

let h: Harness;
let pools: Pool[];
let defId: string;
const counted = new Map<string, number>();
const log = pino({ level: 'warn' });

beforeAll(async () => {
  h = await createHarness();
  pools = [0, 1, 2].map(() => createPool(h.db.url, { max: 4 }));
  defId = randomUUID();
  const graph = graphOf([node('start', 'Start', {}), node('end', 'End', { outcome: 'done' })], [edge('start', 'end')]);
  const doc = stringifyJson(graph);
  await insertDefinition(h.db.pool, { id: defId, tenantId: 'default', name: 'scheduled', description: null, kind: graph.kind, graphJson: doc, planGraphJson: doc, graphHash: defId, nodeCount: 2 });
});
afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
  await h.close();
});

const deps = (pool: Pool, extra: Partial<ScheduleFireDeps> = {}): ScheduleFireDeps => ({
  pool,
  shardCount: 8,
  batchSize: 20,
  maxSlotsPerPass: 1000,
  onTimeMs: 60_000,
  log,
  metrics: { slots: (o, n) => counted.set(o, (counted.get(o) ?? 0) + n) },
  ...extra,
});

/** A schedule of `defId` whose slots count from `lastSlotAt`, due at once. */
async function schedule(key: string, spec: Record<string, unknown>, policy: Record<string, unknown>, lastSlotAt: Date, alias: string | null = null, definitionId = defId): Promise<string> {
  const s = checkScheduleSpec(spec);
  const p = checkSchedulePolicy(policy);
  if (!s.ok || !p.ok) throw new Error('bad test schedule');
  const { row } = await upsertSchedule(h.db.pool, {
    tenantId: 'default', key, definitionId, definitionVersion: null, alias, pinned: null, inputJson: '{}', metadata: {}, spec: s.value.spec, policy: p.value, nextFireAt: lastSlotAt,
  });
  await h.db.pool.query(`UPDATE schedules SET last_slot_at = $2 WHERE id = $1`, [row.id, lastSlotAt]);
  return row.id;
}

const ledger = async (id: string) =>
  (await h.db.pool.query<{ slot_at: Date; outcome: SlotOutcome; run_id: string | null }>(`SELECT slot_at, outcome, run_id FROM schedule_slots WHERE schedule_id = $1 ORDER BY slot_at`, [id])).rows;
const liveRuns = async (id: string) =>
  (await h.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM runs WHERE schedule_id = $1 AND status NOT IN ('Completed', 'Failed', 'Cancelled')`, [id])).rows[0]!.n;
const endRuns = async (id: string, status = 'Completed') => h.db.pool.query(`UPDATE runs SET status = $2 WHERE schedule_id = $1 AND status NOT IN ('Completed', 'Failed', 'Cancelled')`, [id, status]);

/** Passes of every instance at once until a round finds nothing due. */
async function fireUntilIdle(instances: ScheduleFireDeps[]): Promise<void> {
  for (let round = 0; round < 200; round++) {
    const results = await Promise.all(instances.map((d) => firePass(d)));
    if (results.every((r) => r.schedules === 0 && r.released === 0)) return;
  }
  throw new Error('the firers never went idle');
}

describe('exactly once across replicas', () => {
  it('three firers racing over 200 schedules × 5 due slots: 1,000 slots, 1,000 runs, 0 duplicates', async () => {
    const t0 = Math.floor(Date.now() / 1000) * 1000 - 1000;
    const ids: string[] = [];
    for (let i = 0; i < 200; i++) {
      ids.push(await schedule(`x-${i}`, { every: 'PT1S', endAt: new Date(t0).toISOString() }, { overlap: 'allowAll', catchup: { window: 'PT1H', mode: 'all' } }, new Date(t0 - 5000)));
    }
    await fireUntilIdle(pools.map((p) => deps(p)));
    const slots = await h.db.pool.query<{ n: number; runs: number; started: number }>(
      `SELECT count(*)::int AS n, count(DISTINCT run_id)::int AS runs, count(*) FILTER (WHERE outcome = 'started')::int AS started FROM schedule_slots WHERE schedule_id = ANY($1::uuid[])`,
      [ids],
    );
    expect(slots.rows[0]).toEqual({ n: 1000, runs: 1000, started: 1000 });
    const runs = await h.db.pool.query<{ n: number; keys: number }>(`SELECT count(*)::int AS n, count(DISTINCT request_id)::int AS keys FROM runs WHERE schedule_id = ANY($1::uuid[])`, [ids]);
    expect(runs.rows[0]).toEqual({ n: 1000, keys: 1000 });
    // every run's request id names its slot
    const mismatched = await h.db.pool.query(
      `SELECT 1 FROM schedule_slots s JOIN runs r ON r.id = s.run_id
       WHERE s.schedule_id = ANY($1::uuid[]) AND r.request_id <> 'schedule:' || s.schedule_id || ':' || to_char(s.slot_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
      [ids],
    );
    expect(mismatched.rowCount).toBe(0);
    // no slot left due, none fired twice
    expect((await getSchedule(h.db.pool, 'default', ids[0]!))?.nextFireAt).toBeNull();
    for (const id of ids) await endRuns(id);
  }, 120_000);

  it('records the run a dead pass created (found by its request id) instead of starting another', async () => {
    const t0 = Math.floor(Date.now() / 1000) * 1000 - 1000;
    const id = await schedule('crash', { every: 'PT1S', endAt: new Date(t0).toISOString() }, { overlap: 'skip', catchup: { window: 'PT1H', mode: 'all' } }, new Date(t0 - 1000));
    const row = (await getSchedule(h.db.pool, 'default', id))!;
    const orphan = await startSlotRun(h.db.pool, row, t0, { shardCount: 8 });
    expect(orphan.ok).toBe(true);
    await fireUntilIdle([deps(pools[0]!)]);
    expect(await ledger(id)).toEqual([{ slot_at: new Date(t0), outcome: 'started', run_id: orphan.ok ? orphan.runId : null }]);
    expect((await h.db.pool.query(`SELECT 1 FROM runs WHERE schedule_id = $1`, [id])).rowCount).toBe(1);
    await endRuns(id);
  });
});

describe('catch-up', () => {
  it('down 3 h with every PT5M and catchup {PT1H, latest}: one catch-up run, the other 35 slots skippedCatchup', async () => {
    const now = Date.now();
    const id = await schedule('catchup', { every: 'PT5M' }, { overlap: 'allowAll', catchup: { window: 'PT1H', mode: 'latest' } }, new Date(now - 3 * 3_600_000));
    await fireUntilIdle(pools.map((p) => deps(p)));
    const rows = await ledger(id);
    expect(rows).toHaveLength(36);
    expect(rows.filter((r) => r.outcome === 'skippedCatchup')).toHaveLength(35);
    expect(rows.at(-1)).toMatchObject({ outcome: 'started' });
    expect(await liveRuns(id)).toBe(1);
    const next = (await getSchedule(h.db.pool, 'default', id))!.nextFireAt!.getTime();
    expect(next).toBeGreaterThan(now - 60_000);
    expect(next % 300_000).toBe(0);
    await endRuns(id);
  });
});

describe('overlap', () => {
  it('skip: a slot while a run of the schedule is live is skippedOverlap, never two live', async () => {
    const id = await schedule('skip', { cron: '* * * * * *' }, { overlap: 'skip' }, new Date(Date.now() - 1000));
    const d = deps(pools[0]!);
    const until = Date.now() + 3_500;
    while (Date.now() < until) {
      await Promise.all([firePass(d), firePass(deps(pools[1]!))]);
      expect(await liveRuns(id)).toBeLessThanOrEqual(1);
      await new Promise((r) => setTimeout(r, 100));
    }
    const rows = await ledger(id);
    expect(rows.filter((r) => r.outcome === 'started')).toHaveLength(1);
    expect(rows.filter((r) => r.outcome === 'skippedOverlap').length).toBeGreaterThanOrEqual(2);
    // once the run ended, the next slot starts one
    await endRuns(id);
    await new Promise((r) => setTimeout(r, 1_100));
    await firePass(d);
    expect(await liveRuns(id)).toBe(1);
    await h.db.pool.query(`UPDATE schedules SET paused = true WHERE id = $1`, [id]);
    await endRuns(id);
  }, 20_000);

  it('bufferOne keeps one slot waiting and starts it when the live run ends; cancelPrevious cancels the live run', async () => {
    const t0 = Math.floor(Date.now() / 1000) * 1000 - 1000;
    const id = await schedule('buffer', { every: 'PT1S', endAt: new Date(t0).toISOString() }, { overlap: 'bufferOne', catchup: { window: 'PT1H', mode: 'all' } }, new Date(t0 - 3000));
    await fireUntilIdle([deps(pools[0]!)]);
    expect((await ledger(id)).map((r) => r.outcome)).toEqual(['started', 'buffered', 'skippedOverlap']);
    await endRuns(id);
    await fireUntilIdle([deps(pools[1]!)]);
    const after = await ledger(id);
    expect(after.map((r) => r.outcome)).toEqual(['started', 'started', 'skippedOverlap']);
    expect(after[1]!.run_id).not.toBeNull();
    expect(await liveRuns(id)).toBe(1);
    await endRuns(id);

    const c = await schedule('cancel', { every: 'PT1S', endAt: new Date(t0).toISOString() }, { overlap: 'cancelPrevious', catchup: { window: 'PT1H', mode: 'all' } }, new Date(t0 - 2000));
    await fireUntilIdle([deps(pools[2]!)]);
    const rows = await ledger(c);
    expect(rows.map((r) => r.outcome)).toEqual(['started', 'cancelledPrevious']);
    const first = await h.db.pool.query<{ status: string }>(`SELECT status FROM runs WHERE id = $1`, [rows[0]!.run_id]);
    expect(first.rows[0]!.status).toBe('Cancelling');
    await endRuns(c);
  });
});

describe('pauseOnFailure', () => {
  it('pauses the schedule when its newest run failed, with the run named in the reason', async () => {
    const t0 = Math.floor(Date.now() / 1000) * 1000 - 1000;
    const id = await schedule('fragile', { every: 'PT1S' }, { overlap: 'allowAll', pauseOnFailure: true }, new Date(t0 - 1000));
    await firePass(deps(pools[0]!));
    const newest = (await ledger(id)).at(-1);
    await endRuns(id, 'Failed');
    await new Promise((r) => setTimeout(r, 1_100));
    await firePass(deps(pools[0]!));
    const s = (await getSchedule(h.db.pool, 'default', id))!;
    expect(s).toMatchObject({ paused: true, nextFireAt: null, pausedReason: `run ${newest!.run_id} failed (pauseOnFailure)` });
  });
});

describe('aliases', () => {
  it('resolves the alias at each slot: current and a named alias pick their version; a deleted alias or a version without a parsed graph fails the slot with the reason', async () => {
    const aliased = randomUUID();
    const graph = graphOf([node('start', 'Start', {}), node('end', 'End', { outcome: 'done' })], [edge('start', 'end')]);
    const doc = stringifyJson(graph);
    await insertDefinition(h.db.pool, { id: aliased, tenantId: 'default', name: 'aliased', description: null, kind: graph.kind, graphJson: doc, planGraphJson: doc, graphHash: 'v1', nodeCount: 2 });
    expect(await updateDefinition(h.db.pool, 'default', aliased, 1, { graphJson: doc, planGraphJson: doc, graphHash: 'v2' })).toMatchObject({ version: 2 });
    const t0 = Math.floor(Date.now() / 1000) * 1000 - 1000;
    const once = { every: 'PT1S', endAt: new Date(t0).toISOString() };
    const policy = { overlap: 'allowAll', catchup: { window: 'PT1H', mode: 'all' } };
    const fire = async (key: string, alias: string | null) => {
      const id = await schedule(key, once, policy, new Date(t0 - 1000), alias, aliased);
      await fireUntilIdle([deps(pools[0]!)]);
      const slot = (await h.db.pool.query<{ outcome: string; reason: string | null; version: number | null }>(
        `SELECT s.outcome, s.reason, r.definition_version AS version FROM schedule_slots s LEFT JOIN runs r ON r.id = s.run_id WHERE s.schedule_id = $1`, [id])).rows;
      await endRuns(id);
      return slot;
    };
    // no alias: the latest version; `current` moved to 1: version 1, from its stored graphs
    expect(await fire('al-latest', null)).toEqual([{ outcome: 'started', reason: null, version: 2 }]);
    await putDefinitionAlias(h.db.pool, 'default', aliased, 'current', [{ version: 1, percent: 100 }]);
    expect(await fire('al-current', null)).toEqual([{ outcome: 'started', reason: null, version: 1 }]);
    await putDefinitionAlias(h.db.pool, 'default', aliased, 'canary', [{ version: 2, percent: 100 }]);
    expect(await fire('al-canary', 'canary')).toEqual([{ outcome: 'started', reason: null, version: 2 }]);
    // a version saved before versions kept their parsed graph is refused, not run unparsed
    await h.db.pool.query(`UPDATE definition_versions SET plan_graph = NULL WHERE definition_id = $1 AND version = 1`, [aliased]);
    expect(await fire('al-old', null)).toEqual([{ outcome: 'failed', reason: "alias 'current' picked version 1, saved before versions kept their parsed graph; point the alias at a newer version", version: null }]);
    await deleteDefinitionAlias(h.db.pool, 'default', aliased, 'canary');
    expect(await fire('al-gone', 'canary')).toEqual([{ outcome: 'failed', reason: "the definition has no alias 'canary' any more", version: null }]);
  });
});

describe('the slot metric', () => {
  it('counts each decided slot once, by outcome', () => {
    expect(counted.get('skippedCatchup')).toBe(35);
    expect(counted.get('started')).toBeGreaterThanOrEqual(1000 + 1 + 1);
  });
});
