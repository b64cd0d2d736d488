/**
 * A finished job frees space on its lane, and the dispatcher that hears its report releases
 * held work after the run's tick (issue #19: the lane is marked freed and released once,
 * unless the tick's own hold already read it). The sweep, which also releases held work as a
 * backstop, runs once a minute here, so only the release after a finished job moves the lane:
 * with it missing, the held runs would wait for the sweep and this test would time out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@flowline/testing';
import { createHarness, runStatuses, toolChain, type Harness } from '../../../services/dispatcher/test/harness';
import { startToolWorker } from '../tool-worker';
import type { Dispatcher } from '../../../services/dispatcher/src/dispatcher';

const RUNS = 6;

describe('dispatch window: release after a finished job', () => {
  let h: Harness;
  let d: Dispatcher;
  let stopWorker: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    h = await createHarness();
    d = await h.startDispatcher('d1', { LANE_WINDOW_TOOL: '1', DISPATCH_SWEEP_MS: '60000' });
  });

  afterAll(async () => {
    await stopWorker?.();
    await h?.close();
  });

  it('releases held work of other runs as each job finishes, without the sweep', async () => {
    stopWorker = await startToolWorker(h, 1);
    const runIds = await h.createRuns(toolChain('echo'), Array.from({ length: RUNS }, (_, i) => ({ i })));
    await waitFor(async () => [...(await runStatuses(h.db, runIds)).values()].every((s) => s === 'Completed'), {
      timeoutMs: 20_000,
      intervalMs: 50,
      description: 'every run completed by releases after finished jobs',
    });
    expect(d.totals().released).toBe(RUNS);
  });
});
