import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@flowline/testing';
import type { Dispatcher } from '../src/dispatcher';
import { createHarness, toolChain, type Harness } from './harness';

/*
 * Stuck states constructed in Postgres the way a lost wake leaves them (no tool worker runs,
 * so a Tool node's job waits on its lane): rows that owe the run a tick while wake_at is NULL.
 * Nothing else would tick these runs; the watchdog makes them due and the tick heals them.
 */
describe('the stuck-run watchdog', () => {
  let h: Harness;
  let d: Dispatcher;

  beforeAll(async () => {
    h = await createHarness();
    d = await h.startDispatcher('d1', { WATCHDOG_EVERY_SWEEPS: '2', WATCHDOG_GRACE_MS: '200', CANCEL_DRAIN_GRACE_MS: '600000' });
  });
  afterAll(async () => {
    await h?.close();
  });

  async function queuedTool(runId: string): Promise<void> {
    await waitFor(
      async () => (await h.db.pool.query(`select status from node_runs where run_id = $1 and node_key = 'tool'`, [runId])).rows[0]?.status === 'Queued',
      { timeoutMs: 15_000, description: 'tool node queued' },
    );
  }

  it('times out a Queued node past its deadline whose run has no wake (runningPastDeadline)', async () => {
    const [runId] = await h.createRuns(toolChain(), [{}]);
    await queuedTool(runId!);
    await h.db.pool.query(
      `with n as (update node_runs set deadline_at = now() - interval '1 hour' where run_id = $1 and node_key = 'tool' returning run_id)
       update runs set wake_at = null where id in (select run_id from n)`,
      [runId],
    );
    await waitFor(
      async () => (await h.db.pool.query(`select 1 from events where run_id = $1 and kind = 'node.failed' and detail->>'class' = 'Timeout'`, [runId])).rowCount! >= 1,
      { timeoutMs: 20_000, description: 'node timed out' },
    );
    expect(d.totals().stuck.runningPastDeadline).toBeGreaterThanOrEqual(1);
  }, 40_000);

  it('applies an intent committed without a wake (dueNotTicked)', async () => {
    const [runId] = await h.createRuns(toolChain(), [{}]);
    await queuedTool(runId!);
    await h.db.pool.query(
      `with i as (insert into intents (run_id, kind, payload) values ($1, 'cancel', '{"reason":"lost wake"}') returning run_id)
       update runs set wake_at = null, version = version + 1 where id in (select run_id from i)`,
      [runId],
    );
    await waitFor(
      async () => (await h.db.pool.query(`select 1 from intents where run_id = $1 and applied_at is not null`, [runId])).rowCount === 1,
      { timeoutMs: 20_000, description: 'cancel intent applied' },
    );
    const run = await h.db.pool.query(`select status from runs where id = $1`, [runId]);
    expect(['Cancelling', 'Cancelled']).toContain(run.rows[0].status);
    expect(d.totals().stuck.dueNotTicked).toBeGreaterThanOrEqual(1);
  }, 40_000);
});
