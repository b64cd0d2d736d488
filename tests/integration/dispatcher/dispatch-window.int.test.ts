/**
 * The dispatch window through two dispatchers (issue #16): ready tool work beyond the
 * lane's window stays Queued and held per tenant; releases follow the tenants' weights;
 * every held item is released exactly once. Real Postgres, real Redis, the real tool worker.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@flowline/testing';
import { WindowStore } from '@flowline/queue';
import { createHarness, runStatuses, toolChain, type Harness } from '../../../services/dispatcher/test/harness';
import { startToolWorker } from '../tool-worker';
import type { Dispatcher } from '../../../services/dispatcher/src/dispatcher';

const WINDOW = 2;
const PER_TENANT = 16;

describe('dispatch window across two dispatchers', () => {
  let h: Harness;
  let dispatchers: Dispatcher[];
  let stopWorker: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    h = await createHarness();
    const options = { LANE_WINDOW_TOOL: String(WINDOW), TENANT_WEIGHTS: 'ta=3,tb=1' };
    dispatchers = [await h.startDispatcher('d1', options), await h.startDispatcher('d2', options)];
  });

  afterAll(async () => {
    await stopWorker?.();
    await h?.close();
  });

  it('holds tool work beyond the window, then releases it 3:1 by weight, each item once', async () => {
    const graph = toolChain('wait', { ms: 30 });
    // tenant ta first: a first-in-first-out lane would serve all of ta's work before tb's
    const a = await h.createRuns(graph, Array.from({ length: PER_TENANT }, (_, i) => ({ i })), 'ta');
    const b = await h.createRuns(graph, Array.from({ length: PER_TENANT }, (_, i) => ({ i })), 'tb');
    const runIds = [...a, ...b];

    // No worker yet: every tool node is Queued in Postgres, exactly WINDOW jobs wait on the lane.
    await waitFor(
      async () => {
        const r = await h.db.pool.query<{ n: number }>(`select count(*)::int as n from node_runs where run_id = any($1::uuid[]) and node_key = 'tool' and status = 'Queued'`, [runIds]);
        return r.rows[0]!.n === 2 * PER_TENANT;
      },
      { timeoutMs: 30_000, intervalMs: 100, description: 'every tool node Queued' },
    );
    const lane = `${h.redis.prefix}:node.tool:wait`;
    let waiting = -1;
    await waitFor(async () => (waiting = await h.conn.llen(lane)) === WINDOW, {
      timeoutMs: 10_000,
      intervalMs: 50,
      description: 'the window filled',
    }).catch((err: unknown) => {
      throw new Error(`${String(err)}; ${waiting} jobs waiting`);
    });
    const facts = await new WindowStore(h.conn, h.redis.prefix).facts('tool');
    expect(facts.waiting).toBe(WINDOW);
    expect(facts.tenants.reduce((s, t) => s + t.backlog, 0)).toBe(2 * PER_TENANT - WINDOW);

    stopWorker = await startToolWorker(h, 1);
    await waitFor(async () => [...(await runStatuses(h.db, runIds)).values()].every((s) => s === 'Completed'), {
      timeoutMs: 60_000,
      intervalMs: 100,
      description: 'every run completed',
    });

    // Pickup order = release order (one worker, one job at a time, a FIFO lane).
    const starts = await h.db.pool.query<{ tenant_id: string }>(
      `select r.tenant_id from node_runs n join runs r on r.id = n.run_id
        where n.run_id = any($1::uuid[]) and n.node_key = 'tool' order by n.started_at, n.queued_at`,
      [runIds],
    );
    const order = starts.rows.map((r) => r.tenant_id);
    // While both tenants hold work, 16 releases go 12:4 (two dispatchers' adds may swap neighbours).
    const busy = order.slice(WINDOW, WINDOW + 16);
    const ta = busy.filter((t) => t === 'ta').length;
    expect(ta, order.join(',')).toBeGreaterThanOrEqual(11);
    expect(ta, order.join(',')).toBeLessThanOrEqual(13);

    // Each held item was released exactly once over both dispatchers, and ran once.
    const released = dispatchers.reduce((s, d) => s + d.totals().released, 0);
    expect(released).toBe(2 * PER_TENANT);
    const attempts = await h.db.pool.query<{ n: number }>(`select count(*)::int as n from node_runs where run_id = any($1::uuid[]) and node_key = 'tool' and attempt <> 1`, [runIds]);
    expect(attempts.rows[0]!.n).toBe(0);
    const left = await new WindowStore(h.conn, h.redis.prefix).facts('tool');
    expect(left.tenants).toEqual([]);
  });
});
