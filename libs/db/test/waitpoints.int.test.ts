import { randomUUID } from 'node:crypto';
import { applyPlanToSnapshot, plan, type Graph, type RunSnapshot } from '@flowline/graph';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@flowline/testing';
import { applyPlans, completeWaitpoint, getWaitpoint, listWaitpoints, loadSnapshots, revokeWaitpoint, sendInboundEvents } from '../src';
import { CHAIN, gnode, insertDefinition, insertRun, tickContext } from './fixtures';

const waitGraph = (config: Record<string, unknown>): Graph => ({
  ...CHAIN,
  nodes: [gnode('start', 'Start'), { ...gnode('w', 'Wait'), config: config as never }, gnode('end', 'End')],
  edges: [
    { key: 'e1', from: 'start', to: 'w', label: null, condition: null, default: false },
    { key: 'e2', from: 'w', to: 'end', label: null, condition: null, default: false },
  ],
});
const TOKEN_OR_TIMER = waitGraph({ any: [{ token: { timeout: 'PT1H', schema: { type: 'object' } } }, { timer: 'PT2S' }] });
const EVENT = waitGraph({ event: 'payment.settled', filter: { path: 'data.order', op: 'Eq', value: 'o-1' } });

let db: TestDatabase;
const defs: Record<string, string> = {};
beforeAll(async () => {
  db = await createTestDatabase();
  defs.token = await insertDefinition(db.pool, 't1', TOKEN_OR_TIMER);
  defs.event = await insertDefinition(db.pool, 't1', EVENT);
});
afterAll(() => db.drop());

const OPTS = { maxConcurrentRuns: 100 };
/** the tick context at a wall-clock time (waitpoint expiries are judged by the database clock) */
const at = (now: number) => ({ ...tickContext(0), now, newId: () => randomUUID() });
async function load(runId: string): Promise<RunSnapshot> {
  const [loaded] = await loadSnapshots(db.pool, [runId], OPTS);
  return loaded!;
}
async function tick(runId: string, now: number): Promise<{ snap: RunSnapshot; applied: boolean }> {
  const loaded = await load(runId);
  const p = plan(loaded, at(now));
  const out = await applyPlans(db.pool, [{ snapshot: loaded, plan: p }], { shardCount: 1 });
  return { snap: applyPlanToSnapshot(loaded, p), applied: out.applied.includes(runId) };
}
const wNode = (s: RunSnapshot) => s.nodes.find((n) => n.nodeKey === 'w')!;

describe('waitpoints in the store', () => {
  it('mints the token with the parking commit, completes it once (a repeat changes nothing) and the next tick fires the Wait on it', async () => {
    const runId = await insertRun(db.pool, defs.token!, { graph: TOKEN_OR_TIMER });
    const parked = await tick(runId, Date.now());
    const [wp] = parked.snap.waitpoints!;
    expect(await getWaitpoint(db.pool, 't1', wp!.id)).toMatchObject({ runId, nodeKey: 'w', kind: 'token', status: 'waiting', schema: { type: 'object' }, singleUse: true });
    expect(await getWaitpoint(db.pool, 't2', wp!.id)).toBeNull();
    expect((await listWaitpoints(db.pool, { tenantId: 't1', runId, limit: 10 })).items.map((i) => i.id)).toEqual([wp!.id]);

    expect(await completeWaitpoint(db.pool, null, wp!.id, '{"paid":true}')).toMatchObject({ kind: 'completed', record: { status: 'completed', payload: { paid: true } } });
    expect(await completeWaitpoint(db.pool, 't1', wp!.id, '{"paid":false}')).toMatchObject({ kind: 'alreadyCompleted', record: { payload: { paid: true } } });
    const done = await tick(runId, Date.now());
    expect(done.applied).toBe(true);
    expect(wNode(done.snap).output!.output).toMatchObject({ kind: 'token', payload: { paid: true } });
    expect(await getWaitpoint(db.pool, 't1', wp!.id)).toMatchObject({ status: 'completed', settled: true });
  });

  it('refuses the commit of a timer win planned before a completion landed: the next tick fires on the token', async () => {
    const runId = await insertRun(db.pool, defs.token!, { graph: TOKEN_OR_TIMER });
    const t0 = Date.now();
    const parked = await tick(runId, t0);
    const id = parked.snap.waitpoints![0]!.id;
    const stale = await load(runId);
    const timerWins = plan(stale, at(t0 + 2_000));
    expect(timerWins.resolvedWaitpoints).toEqual([{ id, nodeKey: 'w', status: 'revoked' }]);
    expect((await completeWaitpoint(db.pool, 't1', id, '{"late":1}')).kind).toBe('completed');
    const out = await applyPlans(db.pool, [{ snapshot: stale, plan: timerWins }], { shardCount: 1 });
    expect(out.conflicted).toEqual([runId]);
    const next = await tick(runId, t0 + 2_001);
    expect(wNode(next.snap).output!.output).toMatchObject({ kind: 'token', payload: { late: 1 } });
  });

  it('revokes the loser token with the timer win; a later completion finds it revoked', async () => {
    const runId = await insertRun(db.pool, defs.token!, { graph: TOKEN_OR_TIMER });
    const t0 = Date.now();
    const id = (await tick(runId, t0)).snap.waitpoints![0]!.id;
    const fired = await tick(runId, t0 + 2_000);
    expect(wNode(fired.snap).output!.output).toMatchObject({ kind: 'timer' });
    expect(await getWaitpoint(db.pool, 't1', id)).toMatchObject({ status: 'revoked', settled: true });
    expect((await completeWaitpoint(db.pool, null, id, '{}')).kind).toBe('revoked');
    expect((await listWaitpoints(db.pool, { tenantId: 't1', runId, status: 'revoked', limit: 10 })).items).toHaveLength(1);
  });

  it('fires a token arm at once once DELETE revoked its waitpoint', async () => {
    const runId = await insertRun(db.pool, defs.token!, { graph: TOKEN_OR_TIMER });
    const id = (await tick(runId, Date.now())).snap.waitpoints![0]!.id;
    expect((await revokeWaitpoint(db.pool, 't1', id)).kind).toBe('revoked');
    expect((await revokeWaitpoint(db.pool, 't1', id)).kind).toBe('notWaiting');
    const next = await tick(runId, Date.now());
    expect(wNode(next.snap).output!.output).toMatchObject({ kind: 'token', fired: [{ revoked: true }] });
  });

  it('takes an event sent after the Wait began that passes its filter, deduplicated by id, and wakes the run', async () => {
    const runId = await insertRun(db.pool, defs.event!, { graph: EVENT });
    await sendInboundEvents(db.pool, 't1', [{ id: 'before', name: 'payment.settled', dataJson: '{"order":"o-1"}' }]);
    const parked = await tick(runId, Date.now());
    expect(wNode(parked.snap).status).toBe('Running');
    const sent = await sendInboundEvents(db.pool, 't1', [
      { id: 'e-other', name: 'payment.settled', dataJson: '{"order":"o-2"}' },
      { id: 'e-hit', name: 'payment.settled', dataJson: '{"order":"o-1"}' },
    ]);
    expect(sent.wokenRunIds).toEqual([runId]);
    expect((await sendInboundEvents(db.pool, 't1', [{ id: 'e-hit', name: 'payment.settled', dataJson: '{"order":"x"}' }])).kept).toEqual([]);
    const done = await tick(runId, Date.now());
    expect(wNode(done.snap).output!.output).toEqual({ fired: 'event', event: 'payment.settled', eventId: 'e-hit', payload: { order: 'o-1' }, at: expect.any(String) });
  });

  it('wakes a run whose parking commit missed an event posted after its tick planned and before it committed', async () => {
    const runId = await insertRun(db.pool, defs.event!, { graph: EVENT });
    const loaded = await load(runId);
    const parks = plan(loaded, at(Date.now()));
    expect(parks.createdWaitpoints).toHaveLength(1);
    // the event lands while the tick is in flight: the intake finds no waitpoint yet to wake
    const sent = await sendInboundEvents(db.pool, 't1', [{ id: 'e-mid', name: 'payment.settled', dataJson: '{"order":"o-1"}' }]);
    expect(sent.wokenRunIds).toEqual([]);
    const out = await applyPlans(db.pool, [{ snapshot: loaded, plan: parks }], { shardCount: 1 });
    expect(out.applied).toEqual([runId]);
    const row = (await db.pool.query(`SELECT wake_at <= now() AS due, version FROM runs WHERE id = $1`, [runId])).rows[0];
    expect(row.due).toBe(true);
    // two past the planned version: a snapshot cached from this commit cannot commit over the event
    expect(row.version).toBe(loaded.run.version + 2);
    const next = await tick(runId, Date.now());
    expect(wNode(next.snap).output!.output).toMatchObject({ fired: 'event', eventId: 'e-mid', payload: { order: 'o-1' } });
  });

  it('orders a parking commit after an intake of the same event name in flight, so the commit sees its event', async () => {
    const runId = await insertRun(db.pool, defs.event!, { graph: EVENT });
    const loaded = await load(runId);
    const parks = plan(loaded, at(Date.now()));
    // an intake mid-transaction: it holds its name's lock and has inserted the event, not committed
    const intake = await db.pool.connect();
    try {
      await intake.query('BEGIN');
      await intake.query(`SELECT pg_advisory_xact_lock(flowline_event_lock_key('t1', 'payment.settled'))`);
      await intake.query(`INSERT INTO inbound_events (tenant_id, id, name, data) VALUES ('t1', 'e-flight', 'payment.settled', '{"order":"o-1"}')`);
      let settled = false;
      const applying = applyPlans(db.pool, [{ snapshot: loaded, plan: parks }], { shardCount: 1 }).finally(() => (settled = true));
      await new Promise((r) => setTimeout(r, 300));
      expect(settled).toBe(false);
      await intake.query('COMMIT');
      expect((await applying).applied).toEqual([runId]);
    } finally {
      intake.release();
    }
    expect((await db.pool.query(`SELECT wake_at <= now() AS due FROM runs WHERE id = $1`, [runId])).rows[0].due).toBe(true);
    const next = await tick(runId, Date.now());
    expect(wNode(next.snap).output!.output).toMatchObject({ fired: 'event', eventId: 'e-flight' });
  });
});
