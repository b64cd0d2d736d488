/**
 * Run priority and the pending-run TTL through real dispatchers (issue #16), on real Postgres
 * and Redis with the real tool worker:
 * - a tenant's held work leaves the dispatch window highest priority first, first in first
 *   out within a priority, across two dispatchers;
 * - when a run slot frees, the tenant's Pending run of highest priority (then the oldest) takes it;
 * - a run never admitted within PENDING_RUN_TTL_MS ends Failed/Expired, counted in
 *   flowline_runs_expired_total.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { waitFor } from '@flowline/testing';
import { randomUUID } from 'node:crypto';
import { insertDefinition } from '@flowline/db';
import type { Graph } from '@flowline/graph';
import { createHarness, edge, node, runStatuses, TENANT, toolChain, type Harness } from '../../../services/dispatcher/test/harness';
import { createDispatcherMetrics } from '../../../services/dispatcher/src/metrics';
import { startToolWorker } from '../tool-worker';

const allCompleted = (h: Harness, ids: string[]) => async () => [...(await runStatuses(h.db, ids)).values()].every((s) => s === 'Completed');

describe('priority orders the release of a tenant\'s held work (window 1, two dispatchers)', () => {
  let h: Harness;
  let stopWorker: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    h = await createHarness();
    await h.startDispatcher('d1', { LANE_WINDOW_TOOL: '1' });
    await h.startDispatcher('d2', { LANE_WINDOW_TOOL: '1' });
  });
  afterAll(async () => {
    await stopWorker?.();
    await h?.close();
  });

  it('releases 5s before 3s before 1s, in hold order within a priority, each once', async () => {
    const graph = toolChain('wait', { ms: 20 });
    const lane = `${h.redis.prefix}:node.tool:wait`;
    // a first run takes the window's one place on the lane
    const [first] = await h.createRuns(graph, [{ first: true }], 'ta', [1]);
    await waitFor(async () => (await h.conn.llen(lane)) === 1, { timeoutMs: 15_000, intervalMs: 50, description: 'the window filled' });
    const priorities = [1, 3, 5, 3, 1, 5, 3, 5, 1, 2, 4];
    const ids = await h.createRuns(graph, priorities.map((_, i) => ({ i })), 'ta', priorities);
    const priorityOf = new Map(ids.map((id, i) => [id, priorities[i]!]));
    const hold = `${h.redis.prefix}:window:tool:q:ta`;
    await waitFor(async () => (await h.conn.zcard(hold)) === ids.length, { timeoutMs: 30_000, intervalMs: 50, description: 'every later tool node held' });

    // the hold's order is the release order: by priority, highest first
    const held = await h.conn.zrange(hold, 0, -1);
    const inv = await h.db.pool.query<{ run_id: string; invocation_id: string }>(
      `select run_id, invocation_id from node_runs where run_id = any($1::uuid[]) and node_key = 'tool'`,
      [ids],
    );
    const runOfInvocation = new Map(inv.rows.map((r) => [r.invocation_id, r.run_id]));
    const heldRuns = held.map((jobId) => runOfInvocation.get(jobId)!);
    expect(heldRuns.map((r) => priorityOf.get(r))).toEqual([5, 5, 5, 4, 3, 3, 3, 2, 1, 1, 1]);

    stopWorker = await startToolWorker(h, 1);
    await waitFor(allCompleted(h, [first!, ...ids]), { timeoutMs: 60_000, intervalMs: 100, description: 'every run completed' });
    // one worker taking one job at a time from a window of one: pickup order = release order
    const starts = await h.db.pool.query<{ run_id: string }>(
      `select run_id from node_runs where run_id = any($1::uuid[]) and node_key = 'tool' order by started_at`,
      [[first!, ...ids]],
    );
    expect(starts.rows.map((r) => r.run_id)).toEqual([first, ...heldRuns]);
    const attempts = await h.db.pool.query<{ n: number }>(`select count(*)::int as n from node_runs where run_id = any($1::uuid[]) and node_key = 'tool' and attempt <> 1`, [ids]);
    expect(attempts.rows[0]!.n).toBe(0);
  });

  it("gives a Subworkflow's child run its parent's priority", async () => {
    const child: Graph = { ...toolChain(), nodes: [node('start', 'Start', {}), node('end', 'End', { outcome: 'done' })], edges: [edge('start', 'end')] };
    const childDefinitionId = randomUUID();
    await insertDefinition(h.db.pool, {
      id: childDefinitionId, tenantId: TENANT, name: 'child', description: null, kind: 'Standard',
      graphJson: JSON.stringify(child), planGraphJson: JSON.stringify(child), graphHash: childDefinitionId, nodeCount: 2,
    });
    const parent: Graph = {
      ...toolChain(),
      nodes: [node('start', 'Start', {}), node('sub', 'Subworkflow', { definitionId: childDefinitionId }), node('end', 'End', { outcome: 'done' })],
      edges: [edge('start', 'sub'), edge('sub', 'end')],
    };
    const [runId] = await h.createRuns(parent, [{}], TENANT, [4]);
    await waitFor(allCompleted(h, [runId!]), { timeoutMs: 30_000, intervalMs: 100, description: 'the parent run completed' });
    const children = await h.db.pool.query<{ priority: number }>(`select priority from runs where parent_run_id = $1`, [runId]);
    expect(children.rows).toEqual([{ priority: 4 }]);
  });
});

describe('priority orders the admission of Pending runs (MAX_CONCURRENT_RUNS 1)', () => {
  let h: Harness;
  let stopWorker: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    h = await createHarness();
    await h.startDispatcher('d1', { MAX_CONCURRENT_RUNS: '1' });
    await h.startDispatcher('d2', { MAX_CONCURRENT_RUNS: '1' });
  });
  afterAll(async () => {
    await stopWorker?.();
    await h?.close();
  });

  it('gives each freed slot to the highest-priority Pending run, the oldest first within a priority', async () => {
    const graph = toolChain('wait', { ms: 20 });
    // no worker yet: the first run holds the tenant's one slot, the others wait Pending
    const [first] = await h.createRuns(graph, [{ first: true }]);
    await waitFor(async () => (await runStatuses(h.db, [first!])).get(first!) === 'Running', { timeoutMs: 15_000, intervalMs: 50, description: 'the first run started' });
    const priorities = [1, 1, 5, 3, 5, 2];
    const ids: string[] = [];
    // one at a time, so creation order is certain (created_at)
    for (const [i, p] of priorities.entries()) ids.push(...(await h.createRuns(graph, [{ i }], undefined, [p])));
    await new Promise((r) => setTimeout(r, 300));
    expect([...(await runStatuses(h.db, ids)).values()].every((s) => s === 'Pending')).toBe(true);

    stopWorker = await startToolWorker(h, 4);
    await waitFor(allCompleted(h, [first!, ...ids]), { timeoutMs: 60_000, intervalMs: 100, description: 'every run completed' });
    const started = await h.db.pool.query<{ run_id: string }>(
      `select run_id from events where run_id = any($1::uuid[]) and kind = 'run.started' order by at, seq`,
      [ids],
    );
    // 5 (older), 5, 3, 2, 1 (older), 1
    expect(started.rows.map((r) => ids.indexOf(r.run_id))).toEqual([2, 4, 3, 5, 0, 1]);
  });
});

describe('PENDING_RUN_TTL_MS', () => {
  let h: Harness;
  const registry = new Registry();

  beforeAll(async () => {
    h = await createHarness();
    await h.startDispatcher('d1', { MAX_CONCURRENT_RUNS: '1', PENDING_RUN_TTL_MS: '1500' }, { metrics: createDispatcherMetrics(registry, () => null) });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('ends a run never admitted within the TTL Failed/Expired with run.failed, counted by tenant; the admitted run is untouched', async () => {
    // no worker: the first run holds the slot and stays Running
    const [first] = await h.createRuns(toolChain('wait', { ms: 20 }), [{ first: true }], 'acme');
    await waitFor(async () => (await runStatuses(h.db, [first!])).get(first!) === 'Running', { timeoutMs: 15_000, intervalMs: 50, description: 'the first run started' });
    const waiting = await h.createRuns(toolChain('wait', { ms: 20 }), [{ a: 1 }, { a: 2 }], 'acme');
    await waitFor(async () => [...(await runStatuses(h.db, waiting)).values()].every((s) => s === 'Failed'), {
      timeoutMs: 20_000,
      intervalMs: 100,
      description: 'the waiting runs expired',
    });
    const rows = await h.db.pool.query<{ failure_class: string; reason: string; started_at: Date | null; age_ms: number }>(
      `select failure_class, reason, started_at, extract(epoch from finished_at - created_at) * 1000 as age_ms from runs where id = any($1::uuid[])`,
      [waiting],
    );
    for (const r of rows.rows) {
      expect(r).toMatchObject({ failure_class: 'Expired', started_at: null });
      expect(r.reason).toContain('PENDING_RUN_TTL_MS (1500 ms)');
      expect(Number(r.age_ms)).toBeGreaterThanOrEqual(1500);
    }
    const events = await h.db.pool.query<{ kind: string; detail: { class: string } }>(
      `select kind, detail from events where run_id = any($1::uuid[]) order by run_id, seq`,
      [waiting],
    );
    expect(events.rows.map((e) => [e.kind, e.detail.class ?? null])).toEqual([
      ['run.created', null], ['run.failed', 'Expired'],
      ['run.created', null], ['run.failed', 'Expired'],
    ]);
    expect((await runStatuses(h.db, [first!])).get(first!)).toBe('Running');
    const metric = await registry.getSingleMetricAsString('flowline_runs_expired_total');
    expect(metric).toContain('flowline_runs_expired_total{tenant="acme"} 2');
  });
});
