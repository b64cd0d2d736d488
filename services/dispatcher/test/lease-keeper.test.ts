import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { LeaseKeeper, type LeaseStore } from '../src/lease-keeper';

/** A lease table answering what the test scripts; stands in for the claim statement's result. */
function scripted(answers: (number[] | Error)[]): LeaseStore & { released: number } {
  const store = {
    released: 0,
    async claim() {
      const next = answers.shift();
      if (next === undefined) throw new Error('no scripted answer left');
      if (next instanceof Error) throw next;
      return next;
    },
    async release() {
      store.released++;
    },
  };
  return store;
}

const log = pino({ level: 'silent' });

describe('LeaseKeeper', () => {
  it('reports shards gained and lost as the claims change', async () => {
    const gained: number[][] = [];
    const lost: number[][] = [];
    const k = new LeaseKeeper(scripted([[0, 1, 2], [1, 2, 3]]), 3000, { gained: async (s) => void gained.push(s), lost: (s) => void lost.push(s) }, log);
    await k.runOnce();
    await k.runOnce();
    expect(gained).toEqual([[0, 1, 2], [3]]);
    expect(lost).toEqual([[0]]);
    expect([...k.shards]).toEqual([1, 2, 3]);
  });

  it('drops every shard at once when a renewal fails after the lease may have lapsed', async () => {
    const lost: number[][] = [];
    const k = new LeaseKeeper(scripted([[0, 1], new Error('db down')]), 300, { gained: async () => {}, lost: (s) => void lost.push(s) }, log);
    await k.runOnce();
    await new Promise((r) => setTimeout(r, 300));
    await k.runOnce();
    expect(lost).toEqual([[0, 1]]);
    expect(k.owns(0)).toBe(false);
  });

  it('keeps its shards through a failed renewal while the lease is surely still held', async () => {
    const k = new LeaseKeeper(scripted([[4], new Error('blip')]), 60_000, { gained: async () => {}, lost: () => {} }, log);
    await k.runOnce();
    await k.runOnce();
    expect(k.owns(4)).toBe(true);
  });

  it('releases its leases on a graceful stop but not when it halts', async () => {
    const graceful = scripted([[0]]);
    const a = new LeaseKeeper(graceful, 3000, { gained: async () => {}, lost: () => {} }, log);
    await a.runOnce();
    await a.relinquish({ release: true });
    expect(graceful.released).toBe(1);
    expect(a.shards.size).toBe(0);

    const halted = scripted([[0]]);
    const b = new LeaseKeeper(halted, 3000, { gained: async () => {}, lost: () => {} }, log);
    await b.runOnce();
    await b.relinquish({ release: false });
    expect(halted.released).toBe(0);
  });
});
