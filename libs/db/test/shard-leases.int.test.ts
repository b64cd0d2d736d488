import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, waitFor, type TestDatabase } from '@flowline/testing';
import { claimShards, deadDispatcherExists, DispatcherLiveness, releaseShards } from '../src';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.drop());

async function resetLeases() {
  await db.pool.query('DELETE FROM shard_leases');
  await db.pool.query('DELETE FROM dispatchers');
}

describe('shard leases', () => {
  it('gives a lone dispatcher every shard and renews them on the next claim', async () => {
    await resetLeases();
    expect(await claimShards(db.pool, 'a', 8, 60_000)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const before = await db.pool.query(`SELECT max(expires_at) AS e FROM shard_leases WHERE owner = 'a'`);
    expect(await claimShards(db.pool, 'a', 8, 120_000)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const after = await db.pool.query(`SELECT min(expires_at) AS e FROM shard_leases WHERE owner = 'a'`);
    expect(after.rows[0].e.getTime()).toBeGreaterThan(before.rows[0].e.getTime());
  });

  it('rebalances to a fair share when a second dispatcher joins, never sharing a shard', async () => {
    await resetLeases();
    await claimShards(db.pool, 'a', 8, 60_000);
    expect(await claimShards(db.pool, 'b', 8, 60_000)).toEqual([]);
    const a = await claimShards(db.pool, 'a', 8, 60_000);
    expect(a).toEqual([0, 1, 2, 3]);
    const b = await claimShards(db.pool, 'b', 8, 60_000);
    expect(b).toEqual([4, 5, 6, 7]);
    expect(await claimShards(db.pool, 'a', 8, 60_000)).toEqual(a);
  });

  it('hands the shards of a dispatcher that stopped heartbeating to the others once its lease expires', async () => {
    await resetLeases();
    await claimShards(db.pool, 'a', 4, 300);
    expect(await claimShards(db.pool, 'b', 4, 60_000)).toEqual([]);
    const taken = await waitFor(
      async () => {
        const b = await claimShards(db.pool, 'b', 4, 60_000);
        return b.length === 4 ? b : null;
      },
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    expect(taken).toEqual([0, 1, 2, 3]);
    const owners = await db.pool.query(`SELECT count(*) AS n FROM shard_leases WHERE owner = 'a'`);
    expect(owners.rows[0].n).toBe(0);
  });

  it('frees every shard on release so a peer takes them at once', async () => {
    await resetLeases();
    await claimShards(db.pool, 'a', 4, 60_000);
    expect(await releaseShards(db.pool, 'a')).toBe(4);
    expect(await claimShards(db.pool, 'b', 4, 60_000)).toEqual([0, 1, 2, 3]);
  });

  it('never lets concurrent claimers own the same shard', async () => {
    await resetLeases();
    const ids = ['a', 'b', 'c', 'd'];
    for (let round = 0; round < 3; round++) {
      const owned = await Promise.all(ids.map((id) => claimShards(db.pool, id, 16, 60_000)));
      const all = owned.flat();
      expect(new Set(all).size).toBe(all.length);
    }
    const final = await Promise.all(ids.map((id) => claimShards(db.pool, id, 16, 60_000)));
    expect(final.flat().sort((x, y) => x - y)).toEqual(Array.from({ length: 16 }, (_, i) => i));
    for (const o of final) expect(o).toHaveLength(4);
  });

  it("takes a dead peer's shards on the next claim, long before its lease ends, once its liveness lock is gone", async () => {
    await resetLeases();
    const a = new DispatcherLiveness(db.url);
    const b = new DispatcherLiveness(db.url);
    await a.acquire();
    await b.acquire();
    try {
      // a holds everything for a minute, then b joins: while a lives, b waits for its fair share
      expect(await claimShards(db.pool, 'a', 8, 60_000, a.key)).toHaveLength(8);
      expect(await claimShards(db.pool, 'b', 8, 60_000, b.key)).toEqual([]);
      expect(await deadDispatcherExists(db.pool)).toBe(false);
      // a's process dies: its session ends and the lock with it
      await a.close();
      expect(await deadDispatcherExists(db.pool)).toBe(true);
      expect(await claimShards(db.pool, 'b', 8, 60_000, b.key)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      expect(await deadDispatcherExists(db.pool)).toBe(false);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('judges a dispatcher that names no liveness key by its lease alone', async () => {
    await resetLeases();
    expect(await claimShards(db.pool, 'a', 4, 60_000, null)).toHaveLength(4);
    expect(await deadDispatcherExists(db.pool)).toBe(false);
    expect(await claimShards(db.pool, 'b', 4, 60_000, null)).toEqual([]);
  });

  it('reports the loss of its own connection, so the dispatcher stops naming a key no session holds', async () => {
    await resetLeases();
    let lost = 0;
    const a = new DispatcherLiveness(db.url, () => lost++);
    await a.acquire();
    try {
      expect(a.held).toBe(true);
      await db.pool.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'flowline-dispatcher-liveness' AND datname = current_database()`);
      await waitFor(() => !a.held, { timeoutMs: 5_000, description: 'liveness connection seen lost' });
      expect(lost).toBe(1);
      await a.acquire();
      expect(a.held).toBe(true);
    } finally {
      await a.close();
    }
  });
});
