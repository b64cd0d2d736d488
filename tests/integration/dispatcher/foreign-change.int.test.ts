import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestCancel } from '@flowline/db';
import { publishWake } from '@flowline/queue';
import { waitFor } from '@flowline/testing';
import { createHarness, runStatuses, TENANT, toolChainOf, type Harness } from '../../../services/dispatcher/test/harness';
import { startToolWorker } from '../tool-worker';

let h: Harness;
let stopWorker: () => Promise<void>;
beforeAll(async () => {
  h = await createHarness();
  stopWorker = await startToolWorker(h, 4);
});
afterAll(async () => {
  await stopWorker();
  await h.close();
});

describe('a run the shard owner holds in its snapshot cache', () => {
  it.each([
    ['with its wake signal', true],
    ['whose wake signal was lost, through the due sweep', false],
  ])('sees a cancel the API committed while its tool node ran, %s, and ends Cancelled', async (_how, signal) => {
    const d = await h.startDispatcher(`cache-${String(signal)}`);
    const [id] = await h.createRuns(toolChainOf(1, 'wait', { ms: 30_000 }), [{}]);
    await waitFor(() => d.isCached(id!), { timeoutMs: 10_000 });
    const r = await requestCancel(h.db.pool, TENANT, id!, 'changed elsewhere');
    expect(r?.outcome).toBe('cancelling');
    if (signal) await publishWake(h.conn, { runId: id! }, h.redis.prefix);
    await waitFor(async () => (await runStatuses(h.db, [id!])).get(id!) === 'Cancelled', { timeoutMs: 10_000 });
    await d.stop();
  });
});
