import { applyPlanToSnapshot, plan, type Graph, type RunSnapshot } from '@flowline/graph';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@flowline/testing';
import { applyPlans, configureEncryption, loadSnapshots, sendSignal } from '../src';
import { CHAIN, gnode, insertDefinition, insertRun, tickContext } from './fixtures';

/** start → first (Wait signal review) → second (Wait signal review) → end */
const WAITS: Graph = {
  ...CHAIN,
  signals: { review: { schema: null } },
  nodes: [gnode('start', 'Start'), { ...gnode('first', 'Wait'), config: { signal: 'review' } }, { ...gnode('second', 'Wait'), config: { signal: 'review' } }, gnode('end', 'End')],
  edges: [
    { key: 'e1', from: 'start', to: 'first', label: null, condition: null, default: false },
    { key: 'e2', from: 'first', to: 'second', label: null, condition: null, default: false },
    { key: 'e3', from: 'second', to: 'end', label: null, condition: null, default: false },
  ],
};

let db: TestDatabase;
let defId: string;
beforeAll(async () => {
  db = await createTestDatabase();
  defId = await insertDefinition(db.pool, 't1', WAITS);
});
afterAll(() => {
  configureEncryption(undefined);
  return db.drop();
});

const OPTS = { maxConcurrentRuns: 100 };
const ctx = tickContext;
const send = (runId: string, requestId: string, payload: unknown, maxPending = 10) =>
  sendSignal(db.pool, { tenantId: 't1', runId, channel: 'review', payloadJson: JSON.stringify(payload), requestId, maxPending });

async function tick(runId: string, now: number): Promise<RunSnapshot> {
  const [loaded] = await loadSnapshots(db.pool, [runId], OPTS);
  const p = plan(loaded!, ctx(now));
  const out = await applyPlans(db.pool, [{ snapshot: loaded!, plan: p }], { shardCount: 1 });
  expect(out.applied).toEqual([runId]);
  return applyPlanToSnapshot(loaded!, p);
}
const unconsumed = async (runId: string) =>
  (await db.pool.query<{ request_id: string }>('SELECT request_id FROM run_signals WHERE run_id = $1 AND consumed_at IS NULL ORDER BY created_at, id', [runId])).rows.map((r) => r.request_id);

describe('signals in the store', () => {
  it('keeps a signal sent before its Wait is reached, loads it oldest first, and marks it consumed with the Wait in one commit', async () => {
    const runId = await insertRun(db.pool, defId, { graph: WAITS });
    expect(await send(runId, 'r1', { n: 1 })).toMatchObject({ kind: 'sent', duplicate: false });
    expect(await send(runId, 'r2', { n: 2 })).toMatchObject({ kind: 'sent', duplicate: false });
    const [loaded] = await loadSnapshots(db.pool, [runId], OPTS);
    expect(loaded!.signals!.map((s) => s.payload)).toEqual([{ n: 1 }, { n: 2 }]);

    const done = await tick(runId, 1_000);
    expect(done.run.status).toBe('Completed');
    expect(done.nodes.find((n) => n.nodeKey === 'first')!.output!.output).toMatchObject({ fired: 'signal', payload: { n: 1 } });
    expect(done.nodes.find((n) => n.nodeKey === 'second')!.output!.output).toMatchObject({ fired: 'signal', payload: { n: 2 } });
    expect(await unconsumed(runId)).toEqual([]);
    const consumedBy = (await db.pool.query('SELECT request_id, consumed_by FROM run_signals WHERE run_id = $1 ORDER BY request_id', [runId])).rows;
    expect(consumedBy).toEqual([{ request_id: 'r1', consumed_by: 'first' }, { request_id: 'r2', consumed_by: 'second' }]);
  });

  it('wakes a run parked on a signal, answers the first signal for a repeated request id, and refuses past the bound', async () => {
    const runId = await insertRun(db.pool, defId, { graph: WAITS });
    const parked = await tick(runId, 1_000);
    expect(parked.run.status).toBe('WaitingForApproval');
    await db.pool.query('UPDATE runs SET wake_at = NULL WHERE id = $1', [runId]);
    const first = await send(runId, 'a', 1, 2);
    const again = await send(runId, 'a', 999, 2);
    expect(again).toEqual({ kind: 'sent', signalId: (first as { signalId: string }).signalId, duplicate: true });
    expect((await db.pool.query('SELECT wake_at IS NOT NULL AS due FROM runs WHERE id = $1', [runId])).rows[0].due).toBe(true);
    expect(await send(runId, 'b', 2, 2)).toMatchObject({ kind: 'sent' });
    expect(await send(runId, 'c', 3, 2)).toEqual({ kind: 'backlogFull', pending: 2 });
    const after = await tick(runId, 2_000);
    expect(after.run.status).toBe('Completed');
    expect(await unconsumed(runId)).toEqual([]);
  });

  it('refuses a signal to a terminal run or another tenant\'s run', async () => {
    const runId = await insertRun(db.pool, defId, { graph: WAITS, status: 'Completed' });
    expect(await send(runId, 'x', 1)).toEqual({ kind: 'runTerminal', status: 'Completed' });
    expect(await sendSignal(db.pool, { tenantId: 't2', runId, channel: 'review', payloadJson: '1', requestId: 'y', maxPending: 5 })).toEqual({ kind: 'runNotFound' });
  });

  it('seals payloads under ENCRYPTION_KEY and opens them for the planner', async () => {
    configureEncryption(Buffer.alloc(32, 7).toString('base64'));
    try {
      const runId = await insertRun(db.pool, defId, { graph: WAITS });
      await send(runId, 's1', { secret: 'x' });
      const raw = (await db.pool.query('SELECT payload::text AS p FROM run_signals WHERE run_id = $1', [runId])).rows[0].p as string;
      expect(raw).not.toContain('secret');
      const [loaded] = await loadSnapshots(db.pool, [runId], OPTS);
      expect(loaded!.signals![0]!.payload).toEqual({ secret: 'x' });
    } finally {
      configureEncryption(undefined);
    }
  });
});
