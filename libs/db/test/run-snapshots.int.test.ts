import { randomUUID } from 'node:crypto';
import type { NodeRunState } from '@flowline/graph';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@flowline/testing';
import { applyPlans, loadSnapshots } from '../src';
import { CHAIN, emptyPlan, insertDefinition, insertRun } from './fixtures';

let db: TestDatabase;
let defId: string;
beforeAll(async () => {
  db = await createTestDatabase();
  defId = await insertDefinition(db.pool);
});
afterAll(() => db.drop());

const OPTS = { maxConcurrentRuns: 100 };

describe('loadSnapshots', () => {
  it('round-trips every run and node field written through applyPlans', async () => {
    const runId = await insertRun(db.pool, defId, { status: 'Running' });
    await db.pool.query(
      `UPDATE runs SET paused = true, breakpoints = '["tool"]', edge_overrides = '{"e1": false}',
                       step_allowance = '{"id":"s1","mode":"node","nodeKey":"tool"}', depth = 2
       WHERE id = $1`,
      [runId],
    );
    const [s0] = await loadSnapshots(db.pool, [runId], OPTS);
    const child = randomUUID();
    const mapChild = randomUUID();
    const full: Omit<NodeRunState, 'nodeKey' | 'kind'> = {
      status: 'WaitingForApproval',
      attempt: 2,
      attemptLimit: 6,
      invocationId: randomUUID(),
      failureClass: 'Interrupted',
      cause: 'CancelUnconfirmed',
      reason: 'worker died',
      input: { run: { input: { q: 1 } }, upstream: {}, input: null },
      inputOverride: { input: { x: [1, 'two', null] } },
      output: { status: 'succeeded', attempt: 2, branch: 'e2', output: { answer: 42 } },
      notBefore: 1_800_000_000_001,
      deadlineAt: 1_800_000_600_002,
      queuedAt: 1_800_000_000_003,
      startedAt: 1_800_000_000_004,
      finishedAt: 1_800_000_000_005,
      steering: [
        { operationId: 'op1', message: 'shorter', atUtc: 1_800_000_000_006, attempt: 2, applied: false },
      ],
      pendingDecisionKind: 'Approve',
      decision: {
        operationId: 'op2',
        decision: 'Approve',
        comment: null,
        payload: { a: 1 },
        at: 1_800_000_000_007,
        applied: false,
      },
      approvals: [{ principal: 'key:0123456789abcdef', scopes: ['run'], groups: [], decision: 'Approve', path: 'rest', comment: 'fine', at: 1_800_000_000_006 }],
      held: true,
      childRunId: child,
      loop: { iteration: 3, results: [1, { b: 2 }], last: 'x' },
      map: { total: 3, next: 2, live: [{ childRunId: mapChild, index: 1 }], results: [{ r: 0 }, null], failed: 0, errors: [] },
    };
    const plan = emptyPlan({
      run: {
        expectVersion: s0!.run.version,
        set: {
          status: 'WaitingForApproval',
          failureClass: 'NodeFailed',
          reason: 'because',
          totalAttempts: 9,
          stepAllowance: null,
          startedAt: 1_800_000_000_010,
          finishedAt: null,
          cancelReason: 'stop it',
          usage: { inputTokens: 7, outputTokens: 5, costUsd: 0.000123, unpricedTokens: 2, childAttempts: 1 },
        },
      },
      nodes: [{ nodeKey: 'tool', expect: { status: 'Pending', attempt: 0 }, set: full }],
      events: [{ kind: 'gate.requested', nodeKey: 'tool', detail: {} }],
      wakeAt: 1_800_000_000_100,
    });
    expect((await applyPlans(db.pool, [{ snapshot: s0!, plan }], { shardCount: 64 })).applied).toEqual([
      runId,
    ]);

    const [s] = await loadSnapshots(db.pool, [runId], OPTS);
    expect(s!.graph).toEqual(CHAIN);
    expect(s!.nodes.map((n) => n.nodeKey)).toEqual(['start', 'tool', 'end']);
    expect(s!.nodes[1]).toEqual({ nodeKey: 'tool', kind: 'Tool', ...full });
    // a Map's working children are kept as ids the load reads
    const live = await db.pool.query<{ live_children: string[] }>(`SELECT live_children FROM node_runs WHERE run_id = $1 AND node_key = 'tool'`, [runId]);
    expect(live.rows[0]!.live_children).toEqual([mapChild]);
    expect(s!.nodes[0]).toEqual({
      nodeKey: 'start',
      kind: 'Start',
      status: 'Pending',
      attempt: 0,
      attemptLimit: 1,
      invocationId: null,
      failureClass: 'None',
      cause: 'None',
      reason: null,
      input: null,
      inputOverride: null,
      output: null,
      notBefore: null,
      deadlineAt: null,
      queuedAt: null,
      startedAt: null,
      finishedAt: null,
      steering: [],
      pendingDecisionKind: null,
      decision: null,
      approvals: null,
      held: false,
      childRunId: null,
      loop: null,
      map: null,
    });
    expect(s!.run).toEqual({
      id: runId,
      tenantId: 't1',
      status: 'WaitingForApproval',
      failureClass: 'NodeFailed',
      reason: 'because',
      paused: true,
      version: 1,
      lastSeq: 2,
      input: { q: 1 },
      totalAttempts: 9,
      breakpoints: ['tool'],
      stepAllowance: null,
      edgeOverrides: { e1: false },
      cancelReason: 'stop it',
      createdAt: s0!.run.createdAt,
      notBefore: null,
      startedAt: 1_800_000_000_010,
      finishedAt: null,
      parentRunId: null,
      depth: 2,
      budget: null,
      usage: { inputTokens: 7, outputTokens: 5, costUsd: 0.000123, unpricedTokens: 2, childAttempts: 1 },
      priority: 3,
    });
    expect(s0!.run.stepAllowance).toEqual({ id: 's1', mode: 'node', nodeKey: 'tool' });
    expect(typeof s0!.run.createdAt).toBe('number');
    expect(s).toMatchObject({
      wakeAt: 1_800_000_000_100,
      started: [],
      results: [],
      children: [],
      intents: [],
    });
  });

  it('maps intents in creation order with their payload members', async () => {
    const runId = await insertRun(db.pool, defId);
    const rows = [
      ['cancel', null, { reason: 'enough' }],
      ['skip', 'end', {}],
      ['retry', 'tool', {}],
      ['complete', 'tool', { output: { v: 1 } }],
      ['steer', 'tool', { operationId: 'o1' }],
      ['decide', 'tool', { operationId: 'o2' }],
    ] as const;
    const ids: string[] = [];
    for (const [i, [kind, nodeKey, payload]] of rows.entries()) {
      const id = randomUUID();
      ids.push(id);
      await db.pool.query(
        `INSERT INTO intents (id, run_id, kind, node_key, payload, created_at)
         VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))`,
        [id, runId, kind, nodeKey, JSON.stringify(payload), i],
      );
    }
    const [s] = await loadSnapshots(db.pool, [runId], OPTS);
    expect(s!.intents).toEqual([
      { id: ids[0], kind: 'cancel', reason: 'enough' },
      { id: ids[1], kind: 'skip', nodeKey: 'end' },
      { id: ids[2], kind: 'retry', nodeKey: 'tool' },
      { id: ids[3], kind: 'complete', nodeKey: 'tool', output: { v: 1 } },
      { id: ids[4], kind: 'steer', nodeKey: 'tool', operationId: 'o1' },
      { id: ids[5], kind: 'decide', nodeKey: 'tool', operationId: 'o2' },
    ]);
  });

  it('shares the tenant’s free run slots among Pending runs in creation order; parked and child runs need none', async () => {
    const tenant = `slots-${randomUUID()}`;
    const def = await insertDefinition(db.pool, tenant);
    await insertRun(db.pool, def, { tenantId: tenant, status: 'Running' });
    await insertRun(db.pool, def, { tenantId: tenant, status: 'WaitingForApproval' });
    const parent = await insertRun(db.pool, def, { tenantId: tenant, status: 'Running' });
    const p1 = await insertRun(db.pool, def, { tenantId: tenant });
    const p2 = await insertRun(db.pool, def, { tenantId: tenant });
    const child = await insertRun(db.pool, def, { tenantId: tenant, parentRunId: parent });
    const snaps = await loadSnapshots(db.pool, [child, p2, p1, parent], { maxConcurrentRuns: 3 });
    // oldest run first, whatever the order asked in
    expect(snaps.map((s) => s.run.id)).toEqual([parent, p1, p2, child]);
    const slot = Object.fromEntries(snaps.map((s) => [s.run.id, s.runSlotAvailable]));
    expect(slot).toEqual({ [parent]: true, [p1]: true, [p2]: false, [child]: true });
    // as many free slots as Pending runs: each has one (their order is not counted)
    const fits = await loadSnapshots(db.pool, [p2, p1], { maxConcurrentRuns: 4 });
    expect(fits.map((s) => s.runSlotAvailable)).toEqual([true, true]);
    // no free slot: none
    expect((await loadSnapshots(db.pool, [p1], { maxConcurrentRuns: 2 }))[0]!.runSlotAvailable).toBe(false);
    // only runs that need no slot: nothing counted, nothing refused
    expect((await loadSnapshots(db.pool, [parent], { maxConcurrentRuns: 1 }))[0]!.runSlotAvailable).toBe(true);
  });

  it('reads through a generic plan: the load is not planned afresh for each call’s run ids (issue #19)', async () => {
    const runId = await insertRun(db.pool, defId, { status: 'Running' });
    const client = await db.pool.connect();
    const plans: string[] = [];
    client.on('notice', (n) => plans.push(n.message ?? ''));
    try {
      // auto_explain (shipped with the server) sends each plan, nested statements included, as a notice
      await client.query("LOAD 'auto_explain'");
      await client.query('SET auto_explain.log_min_duration = 0');
      await client.query('SET auto_explain.log_nested_statements = on');
      await client.query('SET auto_explain.log_level = notice');
      for (let i = 0; i < 3; i++) expect((await loadSnapshots(client, [runId], OPTS)).map((s) => s.run.id)).toEqual([runId]);
      const load = plans.filter((p) => p.includes('FROM runs WHERE id = ANY('));
      expect(load).toHaveLength(3);
      // a custom plan names the ids it was planned for; the generic one keeps the parameter
      for (const p of load) {
        expect(p).toContain('id = ANY ($1)');
        expect(p).not.toContain(runId);
      }
    } finally {
      client.release(true);
    }
  });

  it('leaves out unknown run ids and answers an empty list without a query', async () => {
    expect(await loadSnapshots(db.pool, [randomUUID()], OPTS)).toEqual([]);
    expect(await loadSnapshots(db.pool, [], OPTS)).toEqual([]);
  });
});
