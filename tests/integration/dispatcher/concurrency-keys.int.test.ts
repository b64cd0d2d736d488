/**
 * Concurrency keys through two real dispatchers (issue #16), on real Postgres and Redis with
 * the real tool worker: a definition's `concurrency: { key: "input.customerId", limit: 2 }`
 * never lets more than two runs of one customer live at once, whichever dispatcher owns them;
 * the others wait Pending (blocker facts: concurrencyKey) and start as runs of the key end;
 * another key, and a run whose input has no key, are not held back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getRunBlockerFacts } from '@flowline/db';
import { waitFor } from '@flowline/testing';
import { createHarness, runStatuses, toolChain, TENANT, type Harness } from '../../../services/dispatcher/test/harness';
import { startToolWorker } from '../tool-worker';

const LIMIT = 2;

describe('concurrency keys across two dispatchers', () => {
  let h: Harness;
  let stopWorker: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    h = await createHarness();
    await h.startDispatcher('d1');
    await h.startDispatcher('d2');
  });
  afterAll(async () => {
    await stopWorker?.();
    await h?.close();
  });

  it('keeps at most `limit` live runs per key value, the others Pending until runs of the key end', async () => {
    const graph = { ...toolChain('wait', { ms: 100 }), concurrency: { key: 'input.customerId', limit: LIMIT } };
    const inputs = [
      ...Array.from({ length: 6 }, (_, i) => ({ customerId: 'acme', i })),
      { customerId: 'beta', i: 0 },
      { customerId: 'beta', i: 1 },
      { other: true },
    ];
    const ids = await h.createRuns(graph, inputs);
    const acme = ids.slice(0, 6);
    const [beta0, beta1, unkeyed] = ids.slice(6) as [string, string, string];

    // No worker: the runs that started hold their key's places; two acme runs, both beta runs and the unkeyed run start.
    await waitFor(
      async () => {
        const st = await runStatuses(h.db, ids);
        return [beta0, beta1, unkeyed].every((id) => st.get(id) === 'Running') && acme.filter((id) => st.get(id) === 'Running').length === LIMIT;
      },
      { timeoutMs: 20_000, intervalMs: 100, description: 'two acme runs, both beta runs and the unkeyed run started' },
    );
    // a few sweeps later the other acme runs still wait
    await new Promise((r) => setTimeout(r, 1_500));
    const st = await runStatuses(h.db, acme);
    expect([...st.values()].filter((s) => s === 'Running')).toHaveLength(LIMIT);
    const waiting = acme.filter((id) => st.get(id) === 'Pending');
    expect(waiting).toHaveLength(4);
    const facts = await getRunBlockerFacts(h.db.pool, TENANT, waiting[0]!);
    expect(facts?.concurrency).toMatchObject({ value: 'acme', limit: LIMIT, claimed: false, live: LIMIT });

    // run.created says which key each run got, and why the unkeyed one has none
    const created = await h.db.pool.query<{ run_id: string; detail: { concurrencyKey?: unknown } }>(
      `select run_id, detail from events where run_id = any($1::uuid[]) and kind = 'run.created'`,
      [[acme[0], unkeyed]],
    );
    const detailOf = new Map(created.rows.map((r) => [r.run_id, r.detail.concurrencyKey]));
    expect(detailOf.get(acme[0]!)).toEqual({ key: 'input.customerId', value: 'acme', limit: LIMIT });
    expect(detailOf.get(unkeyed)).toEqual({ key: 'input.customerId', value: null, reason: 'input.customerId is missing from the run input' });

    stopWorker = await startToolWorker(h, 16);
    await waitFor(async () => [...(await runStatuses(h.db, ids)).values()].every((s) => s === 'Completed'), {
      timeoutMs: 60_000,
      intervalMs: 100,
      description: 'every run completed',
    });
    // Replay run.started / run.completed of each key in commit-time order: never more than LIMIT live.
    const ev = await h.db.pool.query<{ kind: string; key: string | null }>(
      `select e.kind, r.concurrency_key as key from events e join runs r on r.id = e.run_id
        where e.run_id = any($1::uuid[]) and e.kind in ('run.started', 'run.completed') order by e.at, e.kind desc`,
      [ids],
    );
    const live = new Map<string, number>();
    const peak = new Map<string, number>();
    for (const e of ev.rows) {
      const k = e.key ?? '(none)';
      live.set(k, (live.get(k) ?? 0) + (e.kind === 'run.started' ? 1 : -1));
      peak.set(k, Math.max(peak.get(k) ?? 0, live.get(k)!));
    }
    expect(ev.rows).toHaveLength(2 * ids.length);
    expect(peak.get('acme')).toBe(LIMIT);
    expect(peak.get('beta')).toBeLessThanOrEqual(LIMIT);
    const claimed = await h.db.pool.query<{ n: number }>(`select count(*)::int as n from runs where id = any($1::uuid[]) and concurrency_claimed`, [ids]);
    expect(claimed.rows[0]!.n).toBe(8);
  });
});
