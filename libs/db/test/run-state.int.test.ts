import { randomBytes } from 'node:crypto';
import { applyPlanToSnapshot, DEFAULT_CORE_OPTIONS, plan, type Graph, type RunSnapshot } from '@flowline/graph';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@flowline/testing';
import { applyPlans, configureEncryption, getRunState, loadSnapshots, loadStateLog } from '../src';
import { CHAIN, gnode, insertDefinition, insertRun } from './fixtures';

/** start (writes topic) → tool (appends a finding) → end */
const STATEFUL: Graph = {
  ...CHAIN,
  state: { schema: null, reducers: { findings: 'append' }, initial: { findings: [] } },
  nodes: [{ ...gnode('start', 'Start'), writes: { topic: 'output.input.q' } }, { ...gnode('tool', 'Tool', 3), writes: { findings: 'output.hit' } }, gnode('end', 'End')],
};

let db: TestDatabase;
let defId: string;
beforeAll(async () => {
  db = await createTestDatabase();
  defId = await insertDefinition(db.pool, 't1', STATEFUL);
});
afterAll(() => {
  configureEncryption(undefined);
  return db.drop();
});

const OPTS = { maxConcurrentRuns: 100 };
const ctx = (now: number) => {
  let n = 0;
  return { now, options: DEFAULT_CORE_OPTIONS, newId: () => `00000000-0000-4000-8000-${String(now * 10 + ++n).padStart(12, '0')}` };
};

/** Plans and commits one tick of `runId`, with the given results attached. */
async function tick(runId: string, now: number, results: RunSnapshot['results'] = []): Promise<RunSnapshot> {
  const [loaded] = await loadSnapshots(db.pool, [runId], OPTS);
  const snap = { ...loaded!, results };
  const p = plan(snap, ctx(now));
  const out = await applyPlans(db.pool, [{ snapshot: snap, plan: p }], { shardCount: 1 });
  expect(out.applied).toEqual([runId]);
  return applyPlanToSnapshot(snap, p);
}

describe('run state in the store', () => {
  it('commits each write with its tick, loads it back for the planner, and folds it as of any event', async () => {
    const runId = await insertRun(db.pool, defId, { graph: STATEFUL });
    const afterStart = await tick(runId, 1_000);
    const tool = afterStart.nodes.find((n) => n.nodeKey === 'tool')!;
    expect(tool.input!.state).toEqual({ findings: [], topic: 1 });
    const done = await tick(runId, 2_000, [{ invocationId: tool.invocationId!, nodeKey: 'tool', outcome: { ok: true, output: { hit: 'h1' }, startedAt: 1_500, finishedAt: 1_900 } }]);
    expect(done.run.status).toBe('Completed');

    const [loaded] = await loadSnapshots(db.pool, [runId], OPTS);
    expect(loaded!.stateLog).toEqual(done.stateLog);
    expect(loaded!.stateLog!.map((w) => w.nodeKey)).toEqual(['start', 'tool']);

    const events = (await db.pool.query<{ seq: number; kind: string; node_key: string; detail: { keys: string[]; bySeq: number } }>(
      `SELECT seq, kind, node_key, detail FROM events WHERE run_id = $1 AND kind = 'state.updated' ORDER BY seq`, [runId])).rows;
    expect(events.map((e) => [e.node_key, e.detail.keys])).toEqual([['start', ['topic']], ['tool', ['findings']]]);
    // each write is stored under its state.updated event's seq, after the node.completed it names
    expect(loaded!.stateLog!.map((w) => w.seq)).toEqual(events.map((e) => e.seq));
    for (const e of events) expect(e.detail.bySeq).toBe(e.seq - 1);

    const now = await getRunState(db.pool, 't1', runId);
    expect(now).toEqual({ state: { findings: ['h1'], topic: 1 }, seq: done.run.lastSeq });
    expect(await getRunState(db.pool, 't1', runId, events[0]!.seq - 1)).toEqual({ state: { findings: [] }, seq: events[0]!.seq - 1 });
    expect(await getRunState(db.pool, 't1', runId, events[0]!.seq)).toEqual({ state: { findings: [], topic: 1 }, seq: events[0]!.seq });
    expect(await getRunState(db.pool, 't2', runId)).toBeNull();
  });

  it('costs a graph without state no read and no row', async () => {
    const plain = await insertDefinition(db.pool);
    const runId = await insertRun(db.pool, plain);
    const s = await tick(runId, 1_000);
    expect(s.stateLog).toBeUndefined();
    const [loaded] = await loadSnapshots(db.pool, [runId], OPTS);
    expect('stateLog' in loaded!).toBe(false);
    expect(await getRunState(db.pool, 't1', runId)).toEqual({ state: {}, seq: s.run.lastSeq });
  });

  it('seals the writes under ENCRYPTION_KEY and opens them on read', async () => {
    configureEncryption(randomBytes(32).toString('base64'));
    try {
      const runId = await insertRun(db.pool, defId, { graph: STATEFUL });
      await tick(runId, 1_000);
      const raw = (await db.pool.query<{ entries: unknown }>('SELECT entries FROM run_state_writes WHERE run_id = $1', [runId])).rows[0]!.entries;
      expect(raw).toMatchObject({ $enc: 'v1' });
      expect(await loadStateLog(db.pool, runId)).toEqual([{ seq: expect.any(Number), nodeKey: 'start', writes: { topic: 1 } }]);
    } finally {
      configureEncryption(undefined);
    }
  });
});
