/**
 * The dispatch window's per-tenant hold on real Redis (issue #16): a sorted set released
 * highest priority first and first in first out within a priority, over several holds; a hold
 * left as a list by the layout before priorities is read and released in order; the blockers'
 * job fact reports a held job's place in that order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { EMPTY_WINDOW_STATE, type WorkItem } from '@flowline/graph';
import { cleanupRedisPrefix, testRedisUrl, uniquePrefix } from '@flowline/testing';
import { laneJobFact, UNSTAMP_DELAY_MS, WindowStore } from '../src/index';
import { toolItem as sharedToolItem } from './lane-fixtures';

const redisUrl = testRedisUrl();
const prefix = uniquePrefix();
let redis: Redis;

const toolItem = (invocationId: string): WorkItem => sharedToolItem({ runId: 'run-1', invocationId });

beforeAll(() => {
  redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
});
afterAll(async () => {
  await cleanupRedisPrefix(prefix, redisUrl);
  redis.disconnect();
});

/** Releases everything held for `tenant`, one item per release, and returns the ids in release order. */
async function drain(store: WindowStore, tenant: string): Promise<string[]> {
  const out: string[] = [];
  for (;;) {
    const facts = await store.facts('tool');
    const t = facts.tenants.find((x) => x.tenantId === tenant);
    if (!t || t.backlog === 0) return out;
    const jobs = await store.release('tool', facts.version, [{ tenantId: tenant, count: 1 }], EMPTY_WINDOW_STATE);
    for (const j of jobs ?? []) out.push(j.opts.jobId);
  }
}

describe('the per-tenant hold', () => {
  it('releases by priority, highest first, and in hold order within a priority, across holds', async () => {
    const store = new WindowStore(redis, `${prefix}:a`);
    await store.hold('tool', [
      { tenantId: 't', item: toolItem('p1-a'), priority: 1 },
      { tenantId: 't', item: toolItem('p3-a') },
      { tenantId: 't', item: toolItem('p5-a'), priority: 5 },
    ]);
    await store.hold('tool', [
      { tenantId: 't', item: toolItem('p5-b'), priority: 5 },
      { tenantId: 't', item: toolItem('p1-b'), priority: 1 },
      { tenantId: 't', item: toolItem('p3-b'), priority: 3 },
      // held again: idempotent, keeps its first place
      { tenantId: 't', item: toolItem('p5-a'), priority: 5 },
    ]);
    const facts = await store.facts('tool');
    expect(facts.tenants).toEqual([{ tenantId: 't', backlog: 6 }]);
    const fact = await laneJobFact(redis, `${prefix}:a`, 'tool', 'p3-a', 't');
    expect(fact).toEqual({ state: 'held', position: 3, depth: 6 });
    expect(await drain(store, 't')).toEqual(['p5-a', 'p5-b', 'p3-a', 'p3-b', 'p1-a', 'p1-b']);
    expect((await store.facts('tool')).tenants).toEqual([]);
  });

  it('a release of several takes the highest first', async () => {
    const store = new WindowStore(redis, `${prefix}:b`);
    await store.hold('tool', ['x1', 'x2', 'x3', 'x4'].map((id, i) => ({ tenantId: 't', item: toolItem(id), priority: [2, 4, 2, 4][i]! })));
    const facts = await store.facts('tool');
    const jobs = await store.release('tool', facts.version, [{ tenantId: 't', count: 3 }], EMPTY_WINDOW_STATE);
    expect(jobs?.map((j) => j.opts.jobId)).toEqual(['x2', 'x4', 'x1']);
  });

  it('reads a hold left as a list by the layout before priorities, in its order, before later default-priority work', async () => {
    const p = `${prefix}:c`;
    const store = new WindowStore(redis, p);
    // the old layout: items hash + an RPUSHed list + the tenants set
    for (const id of ['old-1', 'old-2']) {
      await redis.hset(`${p}:window:tool:items`, id, JSON.stringify({ kind: 'Tool', data: toolItem(id) }));
      await redis.rpush(`${p}:window:tool:q:t`, id);
    }
    await redis.sadd(`${p}:window:tool:tenants`, 't');
    expect(await laneJobFact(redis, p, 'tool', 'old-2', 't')).toEqual({ state: 'held', position: 2, depth: 2 });
    await store.hold('tool', [{ tenantId: 't', item: toolItem('new-3') }, { tenantId: 't', item: toolItem('new-5'), priority: 5 }]);
    expect(await redis.type(`${p}:window:tool:q:t`)).toBe('zset');
    expect(await drain(store, 't')).toEqual(['new-5', 'old-1', 'old-2', 'new-3']);
  });

  it('releases everything held in the hold itself when it all fits, forgetting credit and keeping the cursor', async () => {
    const p = `${prefix}:d`;
    const store = new WindowStore(redis, p);
    await redis.hset(`${p}:window:tool:state`, 'v', 7, 's', JSON.stringify({ deficits: { a: 1 }, cursor: 'b' }));
    // two already waiting on the lane: a target of 5 leaves room for 3
    await redis.rpush(`${p}:node.tool:wait`, 'w1', 'w2');
    await store.hold('tool', [{ tenantId: 'a', item: toolItem('a1') }]);
    const out = await store.holdOrRelease('tool', [{ tenantId: 'b', item: toolItem('b1') }, { tenantId: 'a', item: toolItem('a2'), priority: 5 }], 5);
    expect('released' in out && out.released.map((j) => j.opts.jobId).sort()).toEqual(['a1', 'a2', 'b1']);
    const facts = await store.facts('tool');
    // the popped items count as waiting until their add clears the stamps
    expect(facts).toMatchObject({ version: 8, state: { deficits: {}, cursor: 'b' }, tenants: [], waiting: 5 });
    expect(await store.heldAmong(['a1', 'b1'])).toEqual(new Set(['a1', 'b1']));
    // added to the lane: the stamps are cleared by the lane's next window call, in its round trip
    store.added('tool', 'released' in out ? out.released : []);
    expect(await redis.zcard(`${p}:window:tool:released`)).toBe(3);
    expect((await store.facts('tool')).waiting).toBe(2);
    expect(await redis.zcard(`${p}:window:tool:released`)).toBe(0);
  });

  it('passes new work straight through an idle lane with room, never writing it into the hold, with the state a release of everything leaves', async () => {
    const p = `${prefix}:g`;
    const store = new WindowStore(redis, p);
    await redis.hset(`${p}:window:tool:state`, 'v', 3, 's', JSON.stringify({ deficits: { a: 2 }, cursor: 'a' }));
    await redis.rpush(`${p}:node.tool:wait`, 'w1');
    // the same id twice is one job; room for both new ones (target 3, one waiting)
    const p1 = toolItem('p1');
    const out = await store.holdOrRelease('tool', [{ tenantId: 'a', item: p1 }, { tenantId: 'b', item: toolItem('p2') }, { tenantId: 'a', item: p1 }], 3);
    expect('released' in out && out.released.map((j) => j.opts.jobId)).toEqual(['p1', 'p2']);
    // the job of an item this call sent is built from the item itself, not parsed back from the hold's reply
    expect('released' in out && out.released[0]!.data).toBe(p1);
    // never held: no hold order was taken, no item or tenant written
    expect(await redis.exists(`${p}:window:tool:seq`, `${p}:window:tool:items`, `${p}:window:tool:tenants`)).toBe(0);
    expect(await store.facts('tool')).toMatchObject({ version: 4, state: { deficits: {}, cursor: 'a' }, tenants: [], waiting: 3 });
    // released within the grace: holding them again adds nothing
    expect(await store.holdOrRelease('tool', [{ tenantId: 'a', item: toolItem('p1') }], 10)).toEqual({ facts: expect.objectContaining({ tenants: [] }) });
    // more than the room: held, as before
    const held = await store.holdOrRelease('tool', [1, 2, 3, 4, 5].map((i) => ({ tenantId: 'c', item: toolItem(`q${i}`) })), 5);
    expect(held).toEqual({ facts: expect.objectContaining({ tenants: [{ tenantId: 'c', backlog: 5 }] }) });
  });

  it('clears owed release stamps within the delay when no window call comes', async () => {
    const p = `${prefix}:f`;
    const store = new WindowStore(redis, p);
    await store.hold('tool', [{ tenantId: 't', item: toolItem('s1') }]);
    const out = await store.holdOrRelease('tool', [], 1);
    store.added('tool', 'released' in out ? out.released : []);
    expect(await redis.zcard(`${p}:window:tool:released`)).toBe(1);
    await new Promise((r) => setTimeout(r, UNSTAMP_DELAY_MS + 30));
    expect(await redis.zcard(`${p}:window:tool:released`)).toBe(0);
  });

  it('only holds when not everything fits, and never with a target of 0', async () => {
    const p = `${prefix}:e`;
    const store = new WindowStore(redis, p);
    const first = await store.holdOrRelease('tool', [1, 2, 3].map((i) => ({ tenantId: 't', item: toolItem(`x${i}`) })), 2);
    expect(first).toEqual({ facts: expect.objectContaining({ version: 0, waiting: 0, tenants: [{ tenantId: 't', backlog: 3 }] }) });
    const none = await store.holdOrRelease('tool', [], 0);
    expect(none).toEqual({ facts: expect.objectContaining({ tenants: [{ tenantId: 't', backlog: 3 }] }) });
    // room for all three now: an empty hold releases them
    const all = await store.holdOrRelease('tool', [], 3);
    expect('released' in all && all.released.map((j) => j.opts.jobId)).toEqual(['x1', 'x2', 'x3']);
  });
});
