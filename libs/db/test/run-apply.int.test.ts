import { randomUUID } from 'node:crypto';
import type { RunSnapshot } from '@flowline/graph';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@flowline/testing';
import { applyPlans, loadSnapshots, shardOfRun, type LoadedSnapshot } from '../src';
import { emptyPlan, insertDefinition, insertRun } from './fixtures';

const OPTS = { shardCount: 64 };
let db: TestDatabase;
let defId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  defId = await insertDefinition(db.pool);
});
afterAll(() => db.drop());

async function snap(runId: string): Promise<LoadedSnapshot> {
  const [s] = await loadSnapshots(db.pool, [runId], { maxConcurrentRuns: 100 });
  return s!;
}
async function eventSeqs(runId: string): Promise<number[]> {
  const r = await db.pool.query('SELECT seq FROM events WHERE run_id = $1 ORDER BY seq', [runId]);
  return r.rows.map((x) => x.seq);
}
async function runRow(runId: string) {
  const r = await db.pool.query('SELECT * FROM runs WHERE id = $1', [runId]);
  return r.rows[0];
}

/** Start the run: Running, start Succeeded, tool Queued. */
function startPlan(s: RunSnapshot, now: number, invocationId: string = randomUUID()) {
  return emptyPlan({
    run: { expectVersion: s.run.version, set: { status: 'Running', startedAt: now } },
    nodes: [
      {
        nodeKey: 'start',
        expect: { status: 'Pending', attempt: 0 },
        set: { status: 'Succeeded', attempt: 1, finishedAt: now },
      },
      {
        nodeKey: 'tool',
        expect: { status: 'Pending', attempt: 0 },
        set: { status: 'Queued', attempt: 1, invocationId, queuedAt: now, deadlineAt: now + 600_000 },
      },
    ],
    events: [
      { kind: 'run.started', nodeKey: null, detail: {} },
      { kind: 'node.completed', nodeKey: 'start', detail: {} },
      { kind: 'node.queued', nodeKey: 'tool', detail: { invocationId } },
    ],
    wakeAt: now + 600_000,
  });
}

describe('applyPlans', () => {
  it('commits a plan: guarded run and node writes, events numbered after last_seq, intents consumed', async () => {
    const runId = await insertRun(db.pool, defId, { wakeAt: new Date() });
    const intentId = randomUUID();
    await db.pool.query(
      `INSERT INTO intents (id, run_id, kind, payload) VALUES ($1, $2, 'cancel', '{"reason":null}')`,
      [intentId, runId],
    );
    const s = await snap(runId);
    const now = 1_800_000_000_123;
    const inv = randomUUID();
    const plan = { ...startPlan(s, now, inv), consumedIntentIds: [intentId] };
    const out = await applyPlans(db.pool, [{ snapshot: s, plan }], OPTS);
    expect(out).toEqual({ applied: [runId], conflicted: [], skipped: [], failed: [] });

    const after = await snap(runId);
    expect(after.run).toMatchObject({ status: 'Running', startedAt: now, version: 1, lastSeq: 4 });
    expect(after.wakeAt).toBe(now + 600_000);
    expect(after.intents).toEqual([]);
    expect(after.nodes.map((n) => [n.nodeKey, n.status, n.attempt])).toEqual([
      ['start', 'Succeeded', 1],
      ['tool', 'Queued', 1],
      ['end', 'Pending', 0],
    ]);
    expect(after.nodes[1]).toMatchObject({ invocationId: inv, queuedAt: now, deadlineAt: now + 600_000 });
    expect(await eventSeqs(runId)).toEqual([1, 2, 3, 4]);
    const ev = await db.pool.query(
      'SELECT kind, node_key, detail FROM events WHERE run_id = $1 AND seq = 4',
      [runId],
    );
    expect(ev.rows[0]).toEqual({ kind: 'node.queued', node_key: 'tool', detail: { invocationId: inv } });
  });

  it('refuses a plan made from a stale version and writes none of it', async () => {
    const runId = await insertRun(db.pool, defId);
    const s = await snap(runId);
    await db.pool.query('UPDATE runs SET version = version + 1 WHERE id = $1', [runId]);
    const out = await applyPlans(db.pool, [{ snapshot: s, plan: startPlan(s, 1_800_000_000_000) }], OPTS);
    expect(out.conflicted).toEqual([runId]);
    expect(out.applied).toEqual([]);
    const row = await runRow(runId);
    expect(row).toMatchObject({ status: 'Pending', version: 1, last_seq: 1 });
    expect(await eventSeqs(runId)).toEqual([1]);
    const nodes = await db.pool.query(
      `SELECT count(*) AS n FROM node_runs WHERE run_id = $1 AND status <> 'Pending'`,
      [runId],
    );
    expect(nodes.rows[0].n).toBe(0);
  });

  it('refuses the whole run when one node is no longer in the expected status', async () => {
    const runId = await insertRun(db.pool, defId);
    const s = await snap(runId);
    await db.pool.query(`UPDATE node_runs SET status = 'Skipped' WHERE run_id = $1 AND node_key = 'tool'`, [
      runId,
    ]);
    const out = await applyPlans(db.pool, [{ snapshot: s, plan: startPlan(s, 1_800_000_000_000) }], OPTS);
    expect(out.conflicted).toEqual([runId]);
    const row = await runRow(runId);
    expect(row).toMatchObject({ status: 'Pending', version: 0, last_seq: 1 });
    const start = await db.pool.query(
      `SELECT status FROM node_runs WHERE run_id = $1 AND node_key = 'start'`,
      [runId],
    );
    expect(start.rows[0].status).toBe('Pending');
  });

  it('numbers events gap-free across successive commits', async () => {
    const runId = await insertRun(db.pool, defId);
    for (let i = 0; i < 4; i++) {
      const s = await snap(runId);
      const plan = emptyPlan({
        run: { expectVersion: s.run.version, set: { totalAttempts: i + 1 } },
        events: Array.from({ length: i + 1 }, () => ({
          kind: 'node.steered' as const,
          nodeKey: 'tool',
          detail: { i },
        })),
      });
      expect((await applyPlans(db.pool, [{ snapshot: s, plan }], OPTS)).applied).toEqual([runId]);
    }
    expect(await eventSeqs(runId)).toEqual(Array.from({ length: 11 }, (_, i) => i + 1));
    expect(await runRow(runId)).toMatchObject({ version: 4, last_seq: 11, total_attempts: 4 });
  });

  it('lets exactly one of two concurrent commits of the same run win', async () => {
    for (let round = 0; round < 5; round++) {
      const runId = await insertRun(db.pool, defId);
      const s = await snap(runId);
      const [a, b] = await Promise.all([
        applyPlans(db.pool, [{ snapshot: s, plan: startPlan(s, 1_800_000_000_000) }], OPTS),
        applyPlans(db.pool, [{ snapshot: s, plan: startPlan(s, 1_800_000_000_001) }], OPTS),
      ]);
      expect([...a.applied, ...b.applied]).toEqual([runId]);
      expect([...a.conflicted, ...b.conflicted]).toEqual([runId]);
      expect(await eventSeqs(runId)).toEqual([1, 2, 3, 4]);
      expect(await runRow(runId)).toMatchObject({ version: 1, last_seq: 4 });
    }
  });

  it('commits the fresh runs of a batch and refuses only the stale one', async () => {
    const ids = await Promise.all([
      insertRun(db.pool, defId),
      insertRun(db.pool, defId),
      insertRun(db.pool, defId),
    ]);
    const snaps = await loadSnapshots(db.pool, ids, { maxConcurrentRuns: 100 });
    const stale = snaps[1]!.run.id;
    await db.pool.query('UPDATE runs SET version = 7 WHERE id = $1', [stale]);
    const out = await applyPlans(
      db.pool,
      snaps.map((s) => ({ snapshot: s, plan: startPlan(s, 1_800_000_000_000) })),
      OPTS,
    );
    expect(out.conflicted).toEqual([stale]);
    expect(out.applied.sort()).toEqual(ids.filter((i) => i !== stale).sort());
    expect(await eventSeqs(stale)).toEqual([1]);
  });

  it('skips a plan with nothing to write and an unchanged wake', async () => {
    const runId = await insertRun(db.pool, defId);
    const s = await snap(runId);
    const out = await applyPlans(db.pool, [{ snapshot: s, plan: emptyPlan() }], OPTS);
    expect(out).toEqual({ applied: [], conflicted: [], skipped: [runId], failed: [] });
  });

  it('moves only the wake of a plan with nothing else to write', async () => {
    const runId = await insertRun(db.pool, defId, { wakeAt: new Date(Date.now() - 1000) });
    const s = await snap(runId);
    const out = await applyPlans(db.pool, [{ snapshot: s, plan: emptyPlan({ wakeAt: null }) }], OPTS);
    expect(out.applied).toEqual([runId]);
    expect(await runRow(runId)).toMatchObject({ wake_at: null, version: 0 });
  });

  it('keeps the run due while an intent it did not consume is pending', async () => {
    const runId = await insertRun(db.pool, defId);
    const s = await snap(runId);
    await db.pool.query(`INSERT INTO intents (run_id, kind, node_key) VALUES ($1, 'skip', 'end')`, [runId]);
    const out = await applyPlans(db.pool, [{ snapshot: s, plan: startPlan(s, 1_800_000_000_000) }], OPTS);
    expect(out.applied).toEqual([runId]);
    const row = await db.pool.query('SELECT wake_at <= now() AS due FROM runs WHERE id = $1', [runId]);
    expect(row.rows[0].due).toBe(true);
  });

  it('reports a malformed item as failed and still commits the rest of the batch', async () => {
    const good = await insertRun(db.pool, defId);
    const bad = await insertRun(db.pool, defId);
    const [sg, sb] = await loadSnapshots(db.pool, [good, bad], { maxConcurrentRuns: 100 });
    const out = await applyPlans(
      db.pool,
      [
        { snapshot: sg!, plan: startPlan(sg!, 1_800_000_000_000) },
        { snapshot: sb!, plan: startPlan(sb!, 1_800_000_000_000, 'not-a-uuid') },
      ],
      OPTS,
    );
    expect(out.applied).toEqual([good]);
    expect(out.failed.map((f) => f.runId)).toEqual([bad]);
    expect(await eventSeqs(bad)).toEqual([1]);
  });
});

describe('applyPlans on one connection', () => {
  it('prepares its statement once per connection, then binds it on every commit', async () => {
    const client = await db.pool.connect();
    try {
      for (let i = 0; i < 2; i++) {
        const runId = await insertRun(db.pool, defId, { wakeAt: new Date() });
        const s = await snap(runId);
        expect(await applyPlans(client, [{ snapshot: s, plan: startPlan(s, Date.now()) }], OPTS)).toMatchObject({ applied: [runId], failed: [] });
      }
      const prepared = await client.query("SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name = 'flowline_apply'");
      expect(prepared.rows[0].n).toBe(1);
      // a statement refused by the store reaches the caller as a failure, and the connection stays usable
      const gone = await snap(await insertRun(db.pool, defId, { wakeAt: new Date() }));
      const bad = startPlan(gone, Date.now(), 'not-a-uuid');
      expect((await applyPlans(client, [{ snapshot: gone, plan: bad }], OPTS)).failed).toHaveLength(1);
      expect((await client.query('SELECT 1 AS one')).rows[0].one).toBe(1);
    } finally {
      client.release();
    }
  });
});

describe('applyPlans never waits on a lock', () => {
  it('reports a run conflicted at once while another transaction holds its row or one of its node rows', async () => {
    for (const lockSql of [
      'SELECT 1 FROM runs WHERE id = $1 FOR UPDATE',
      `SELECT 1 FROM node_runs WHERE run_id = $1 AND node_key = 'tool' FOR UPDATE`,
      'SELECT pg_advisory_xact_lock(flowline_run_lock_key($1))',
    ]) {
      const runId = await insertRun(db.pool, defId);
      const s = await snap(runId);
      const holder = await db.pool.connect();
      try {
        await holder.query('BEGIN');
        await holder.query(lockSql, [runId]);
        const out = await applyPlans(db.pool, [{ snapshot: s, plan: startPlan(s, 1_800_000_000_000) }], OPTS);
        expect(out.conflicted).toEqual([runId]);
      } finally {
        await holder.query('ROLLBACK');
        holder.release();
      }
      expect(await eventSeqs(runId)).toEqual([1]);
      const again = await applyPlans(db.pool, [{ snapshot: s, plan: startPlan(s, 1_800_000_000_000) }], OPTS);
      expect(again.applied).toEqual([runId]);
    }
  });
});

describe('applyPlans under contention', () => {
  it('applies each run exactly once when four dispatchers commit overlapping batches in different orders', async () => {
    const ids = await Promise.all(Array.from({ length: 20 }, () => insertRun(db.pool, defId)));
    const snaps = await loadSnapshots(db.pool, ids, { maxConcurrentRuns: 100 });
    const orders = [
      snaps,
      [...snaps].reverse(),
      [...snaps.slice(10), ...snaps.slice(0, 10)],
      [...snaps].sort(() => 0.5 - Math.random()),
    ];
    const outs = await Promise.all(
      orders.map((o) =>
        applyPlans(
          db.pool,
          o.map((s) => ({ snapshot: s, plan: startPlan(s, 1_800_000_000_000) })),
          OPTS,
        ),
      ),
    );
    expect(outs.flatMap((o) => o.failed)).toEqual([]);
    expect(outs.flatMap((o) => o.applied).sort()).toEqual([...ids].sort());
    expect(outs.flatMap((o) => o.conflicted)).toHaveLength(ids.length * 3);
    const seqs = await db.pool.query(
      'SELECT run_id, max(seq) AS m, count(*) AS n FROM events WHERE run_id = ANY($1) GROUP BY run_id',
      [ids],
    );
    for (const r of seqs.rows) expect(r).toMatchObject({ m: 4, n: 4 });
  });
});

describe('applyPlans with child runs', () => {
  it('creates a child run pinning the definition, in the shard shardOfRun computes', async () => {
    const parent = await insertRun(db.pool, defId, { status: 'Running' });
    const s = await snap(parent);
    const childRunId = randomUUID();
    const plan = emptyPlan({
      nodes: [
        {
          nodeKey: 'tool',
          expect: { status: 'Pending', attempt: 0 },
          set: { status: 'Running', childRunId },
        },
      ],
      startChildren: [{ nodeKey: 'tool', childRunId, definitionId: defId, input: { item: 3 } }],
    });
    expect((await applyPlans(db.pool, [{ snapshot: s, plan }], OPTS)).applied).toEqual([parent]);
    const child = await runRow(childRunId);
    expect(child).toMatchObject({
      status: 'Pending',
      parent_run_id: parent,
      parent_node_key: 'tool',
      depth: 1,
      last_seq: 1,
      input: { item: 3 },
      definition_id: defId,
      shard: shardOfRun(childRunId, 64),
    });
    expect(child.wake_at).not.toBeNull();
    const nodes = await db.pool.query(
      'SELECT node_key, attempt_limit FROM node_runs WHERE run_id = $1 ORDER BY node_key',
      [childRunId],
    );
    expect(nodes.rows).toEqual([
      { node_key: 'end', attempt_limit: 1 },
      { node_key: 'start', attempt_limit: 1 },
      { node_key: 'tool', attempt_limit: 3 },
    ]);
    const parentSnap = await snap(parent);
    expect(parentSnap.children).toEqual([
      { childRunId, nodeKey: 'tool', status: 'Pending', output: null, failureClass: 'None', reason: null, usage: null, totalAttempts: 0 },
    ]);
  });

  it('creates a Failed child when the definition is gone, and keeps the parent due', async () => {
    const parent = await insertRun(db.pool, defId, { status: 'Running' });
    const s = await snap(parent);
    const childRunId = randomUUID();
    const plan = emptyPlan({
      events: [{ kind: 'node.started', nodeKey: 'tool', detail: {} }],
      startChildren: [{ nodeKey: 'tool', childRunId, definitionId: randomUUID(), input: null }],
    });
    expect((await applyPlans(db.pool, [{ snapshot: s, plan }], OPTS)).applied).toEqual([parent]);
    expect(await runRow(childRunId)).toMatchObject({ status: 'Failed', failure_class: 'ValidationFailed' });
    const p = await db.pool.query('SELECT wake_at <= now() AS due FROM runs WHERE id = $1', [parent]);
    expect(p.rows[0].due).toBe(true);
  });

  it('wakes and re-versions the parent when a child run changes status', async () => {
    const parent = await insertRun(db.pool, defId, { status: 'Running' });
    const child = await insertRun(db.pool, defId, { status: 'Running', parentRunId: parent });
    const s = await snap(child);
    const plan = emptyPlan({
      run: {
        expectVersion: s.run.version,
        set: { status: 'Completed', finishedAt: 1_800_000_000_000, output: { ok: 1 } },
      },
      events: [{ kind: 'run.completed', nodeKey: null, detail: {} }],
    });
    expect((await applyPlans(db.pool, [{ snapshot: s, plan }], OPTS)).applied).toEqual([child]);
    const p = await db.pool.query('SELECT version, wake_at <= now() AS due FROM runs WHERE id = $1', [
      parent,
    ]);
    expect(p.rows[0]).toEqual({ version: 1, due: true });
  });

  it('cancels child runs with a cancel intent', async () => {
    const parent = await insertRun(db.pool, defId, { status: 'Cancelling' });
    const child = await insertRun(db.pool, defId, { status: 'Running', parentRunId: parent });
    const s = await snap(parent);
    const plan = emptyPlan({
      cancelChildren: [child],
      events: [{ kind: 'node.cancelled', nodeKey: 'tool', detail: {} }],
    });
    expect((await applyPlans(db.pool, [{ snapshot: s, plan }], OPTS)).applied).toEqual([parent]);
    const c = await snap(child);
    expect(c.run.status).toBe('Cancelling');
    expect(c.intents).toEqual([{ id: expect.any(String), kind: 'cancel', reason: 'parent run cancelled' }]);
  });
});

describe('flowline_shard_of', () => {
  it('agrees with shardOfRun for every id', async () => {
    const ids = Array.from({ length: 200 }, () => randomUUID());
    const r = await db.pool.query('SELECT id, flowline_shard_of(id, 64) AS s FROM unnest($1::uuid[]) AS id', [
      ids,
    ]);
    for (const row of r.rows) expect(row.s).toBe(shardOfRun(row.id, 64));
  });
});
