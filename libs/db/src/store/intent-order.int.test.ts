/**
 * Operator intents load in the order their transactions committed (the planner applies
 * them in load order): an intent's time is taken once its transaction holds the run row,
 * which every intent writer locks, so a later commit always carries a later time.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, waitFor, type TestDatabase } from '@flowline/testing';
import { insertDefinition } from './definitions';
import { appendSteer, recordNodeIntent } from './intents';
import { loadSnapshots } from './run-snapshots';
import { createRun } from './run-create';
import { recordDecision, requestCancel } from './intents';

let db: TestDatabase;
let defId: string;
beforeAll(async () => {
  db = await createTestDatabase();
  defId = (
    await insertDefinition(db.pool, {
      id: randomUUID(),
      tenantId: 't1',
      name: 'd',
      description: null,
      kind: 'Standard',
      graphJson: '{}',
      planGraphJson: '{"nodes":[]}',
      graphHash: 'h',
      nodeCount: 3,
    })
  ).id;
});
afterAll(async () => {
  await db?.drop();
});

/** A Running run with `gate` waiting on a person, `agent` Running and `later` Pending. */
async function liveRun(): Promise<string> {
  const created = await createRun(db.pool, {
    tenantId: 't1',
    definitionId: defId,
    requestId: null,
    conversationId: null,
    shardCount: 8,
    prepare: () => ({
      inputJson: '{}',
      nodes: [
        { key: 'gate', kind: 'Pause', attemptLimit: 1 },
        { key: 'agent', kind: 'Agent', attemptLimit: 1 },
        { key: 'later', kind: 'Tool', attemptLimit: 1 },
      ],
    }),
  });
  if (created.kind !== 'created') throw new Error('run not created');
  await db.pool.query(`UPDATE runs SET status = 'Running' WHERE id = $1`, [created.runId]);
  await db.pool.query(`UPDATE node_runs SET status = 'WaitingForApproval' WHERE run_id = $1 AND node_key = 'gate'`, [created.runId]);
  await db.pool.query(`UPDATE node_runs SET status = 'Running', attempt = 1 WHERE run_id = $1 AND node_key = 'agent'`, [created.runId]);
  return created.runId;
}

const loadedKinds = async (runId: string) =>
  (await loadSnapshots(db.pool, [runId], { maxConcurrentRuns: 100 }))[0]!.intents.map((i) => i.kind);

/**
 * Runs `first` while another session holds `lockSql`'s row, so `first` starts, then waits;
 * meanwhile `second` runs to its commit; then the row is released and `first` commits.
 */
async function interleave(lockSql: string, params: unknown[], first: () => Promise<unknown>, second: () => Promise<unknown>): Promise<void> {
  const holder = new pg.Client({ connectionString: db.url });
  await holder.connect();
  try {
    await holder.query('BEGIN');
    await holder.query(lockSql, params);
    const blocked = first();
    await waitFor(
      async () => {
        const r = await db.pool.query(
          `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
        );
        return (r.rowCount ?? 0) > 0;
      },
      { timeoutMs: 5000, description: 'the first write waits on the held row' },
    );
    await second();
    await holder.query('COMMIT');
    await blocked;
  } finally {
    await holder.end();
  }
}

describe('intent order', () => {
  it('loads a decision that began first but committed after a skip after that skip', async () => {
    const runId = await liveRun();
    await interleave(
      `SELECT 1 FROM node_runs WHERE run_id = $1 AND node_key = 'gate' FOR UPDATE`,
      [runId],
      () => recordDecision(db.pool, 't1', runId, 'gate', 'op-1', '{"decision":"Approve"}'),
      () => recordNodeIntent(db.pool, 't1', runId, 'later', 'skip', '{}'),
    );
    expect(await loadedKinds(runId)).toEqual(['skip', 'decide']);
  });

  it('loads a steer that began first but committed after a cancel after that cancel', async () => {
    const runId = await liveRun();
    await interleave(
      `SELECT 1 FROM node_runs WHERE run_id = $1 AND node_key = 'agent' FOR UPDATE`,
      [runId],
      () => appendSteer(db.pool, 't1', runId, 'agent', { operationId: 's-1', message: 'shorter', atUtc: Date.now() }, 5),
      () => requestCancel(db.pool, 't1', runId, 'stop'),
    );
    expect(await loadedKinds(runId)).toEqual(['cancel', 'steer']);
  });

  it('loads intents written one after another in that order', async () => {
    const runId = await liveRun();
    await recordNodeIntent(db.pool, 't1', runId, 'later', 'skip', '{}');
    await recordDecision(db.pool, 't1', runId, 'gate', 'op-2', '{"decision":"Approve"}');
    await appendSteer(db.pool, 't1', runId, 'agent', { operationId: 's-2', message: 'go', atUtc: Date.now() }, 5);
    await requestCancel(db.pool, 't1', runId, null);
    expect(await loadedKinds(runId)).toEqual(['skip', 'decide', 'steer', 'cancel']);
  });
});
