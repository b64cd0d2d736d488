/**
 * Run priority and the backlog bounds (issue #16): the pure decisions — admission order, the
 * hold score, expiry of runs never admitted, the MAX_PENDING_RUNS verdict — and the planner
 * ending an expired Pending run Failed/Expired.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  backlogVerdict,
  compareAdmission,
  DEFAULT_RUN_PRIORITY,
  HOLD_BAND,
  holdScore,
  isRunPriority,
  parseTenantIntegers,
  pendingExpiry,
  runPriorityOf,
} from './backlog';
import { concurrencyKeyOf, concurrencyPlaceFree } from './concurrency';
import { JsonNumber } from '../conditions/exact-json';
import { isEmptyPlan } from './plan-result';
import { plan } from './plan';
import { contextAt, edge, graphOf, node, snapshotOf } from './test-kit';

const chain = () => graphOf([node('s', 'Start'), node('t', 'Tool', { config: { toolName: 'echo', arguments: {} } }), node('e', 'End')], [edge('a', 's', 't'), edge('b', 't', 'e')]);

describe('run priority', () => {
  it('is an integer 1–5; anything else reads as the default 3', () => {
    for (const p of [1, 2, 3, 4, 5]) expect([isRunPriority(p), runPriorityOf(p)]).toEqual([true, p]);
    for (const bad of [0, 6, 2.5, -1, NaN, '4', null, undefined]) {
      expect(isRunPriority(bad)).toBe(false);
      expect(runPriorityOf(bad)).toBe(DEFAULT_RUN_PRIORITY);
    }
  });

  it('admits higher priority first, then older, then by id', () => {
    const runs = [
      { id: 'c', priority: 1, createdAt: 1 },
      { id: 'b', priority: 3, createdAt: 5 },
      { id: 'a', priority: 3, createdAt: 5 },
      { id: 'd', priority: 5, createdAt: 9 },
      { id: 'e', createdAt: 2 },
    ];
    expect([...runs].sort(compareAdmission).map((r) => r.id)).toEqual(['d', 'e', 'a', 'b', 'c']);
  });

  it('orders holds by band then by seq: every higher-priority item before every lower one, FIFO within a band (property)', () => {
    const item = fc.record({ priority: fc.integer({ min: 1, max: 5 }), seq: fc.integer({ min: 0, max: 1e13 }) });
    fc.assert(
      fc.property(item, item, (a, b) => {
        const sa = holdScore(a.priority, a.seq);
        const sb = holdScore(b.priority, b.seq);
        expect(Number.isSafeInteger(sa)).toBe(true);
        if (a.priority !== b.priority) expect(sa < sb).toBe(a.priority > b.priority);
        else expect(Math.sign(sa - sb)).toBe(Math.sign(a.seq - b.seq));
      }),
    );
    expect(holdScore(5, 7)).toBe(7);
    expect(holdScore(1, 7)).toBe(4 * HOLD_BAND + 7);
  });
});

describe('pendingExpiry', () => {
  const pending = { status: 'Pending' as const, startedAt: null, parentRunId: null, createdAt: 1_000 };

  it('expires a Pending, never started, top-level run once the TTL has passed since its creation', () => {
    expect(pendingExpiry(pending, 500, 1_499)).toEqual({ expired: false, at: 1_500 });
    expect(pendingExpiry(pending, 500, 1_500)).toEqual({ expired: true, reason: 'not admitted within PENDING_RUN_TTL_MS (500 ms)' });
  });

  it('never expires with TTL 0 / absent, nor a started, child or non-Pending run', () => {
    expect(pendingExpiry(pending, 0, 1e12)).toEqual({ expired: false, at: null });
    expect(pendingExpiry(pending, undefined, 1e12)).toEqual({ expired: false, at: null });
    expect(pendingExpiry({ ...pending, startedAt: 1_100 }, 500, 1e12).expired).toBe(false);
    expect(pendingExpiry({ ...pending, parentRunId: 'p' }, 500, 1e12).expired).toBe(false);
    expect(pendingExpiry({ ...pending, status: 'Running' }, 500, 1e12).expired).toBe(false);
  });

  it('expires exactly when now − createdAt ≥ ttl (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e12 }), fc.integer({ min: 1, max: 1e9 }), fc.integer({ min: 0, max: 2e9 }), (createdAt, ttl, dt) => {
        const v = pendingExpiry({ ...pending, createdAt }, ttl, createdAt + dt);
        expect(v.expired).toBe(dt >= ttl);
        if (!v.expired) expect(v.at).toBe(createdAt + ttl);
      }),
    );
  });
});

describe('the planner and PENDING_RUN_TTL_MS', () => {
  it('ends an expired Pending run Failed/Expired with run.failed naming the TTL, even when a slot is free', () => {
    const snap = snapshotOf(chain(), { q: 1 }, { createdAt: 1_000 });
    const result = plan(snap, { ...contextAt(2_000), pendingRunTtlMs: 1_000 });
    expect(result.run?.set).toMatchObject({ status: 'Failed', failureClass: 'Expired', finishedAt: 2_000 });
    expect(result.run?.set.reason).toContain('PENDING_RUN_TTL_MS (1000 ms)');
    expect(result.events).toEqual([{ kind: 'run.failed', nodeKey: null, detail: { class: 'Expired', reason: 'not admitted within PENDING_RUN_TTL_MS (1000 ms)' } }]);
    expect(result.enqueue).toEqual([]);
    expect(result.nodes).toEqual([]);
  });

  it('admits a run with a slot before its TTL, and a run without one wakes at its expiry when that comes before the slot retry', () => {
    const fresh = snapshotOf(chain(), { q: 1 }, { createdAt: 1_000 });
    expect(plan(fresh, { ...contextAt(1_999), pendingRunTtlMs: 1_000 }).run?.set.status).toBe('Running');
    const waiting = { ...fresh, runSlotAvailable: false };
    const early = plan(waiting, { ...contextAt(1_500), pendingRunTtlMs: 1_000, slotRetryMs: 2_000 });
    expect(isEmptyPlan(early)).toBe(true);
    expect(early.wakeAt).toBe(2_000);
    expect(plan(waiting, { ...contextAt(1_500), pendingRunTtlMs: 10_000, slotRetryMs: 2_000 }).wakeAt).toBe(3_500);
    expect(plan(waiting, { ...contextAt(1_500), pendingRunTtlMs: 1_000 }).wakeAt).toBe(2_000);
  });

  it('leaves a cancel to win over expiry, and never expires a started or child run', () => {
    const cancel = { ...snapshotOf(chain(), { q: 1 }, { createdAt: 0 }), intents: [{ id: 'i1', kind: 'cancel' as const, reason: null }] };
    expect(plan(cancel, { ...contextAt(5_000), pendingRunTtlMs: 1 }).run?.set.failureClass).not.toBe('Expired');
    const child = snapshotOf(chain(), { q: 1 }, { createdAt: 0, parentRunId: 'p' });
    expect(plan(child, { ...contextAt(5_000), pendingRunTtlMs: 1 }).run?.set.status).toBe('Running');
  });
});

describe('backlogVerdict', () => {
  it('refuses at the limit with a Retry-After of at least one second; 0 is unbounded', () => {
    expect(backlogVerdict(9, 10, 5)).toEqual({ ok: true });
    expect(backlogVerdict(10, 10, 5)).toEqual({ ok: false, retryAfterSeconds: 5 });
    expect(backlogVerdict(11, 10, 0.2)).toEqual({ ok: false, retryAfterSeconds: 1 });
    expect(backlogVerdict(1e9, 0, 5)).toEqual({ ok: true });
  });
});

describe('parseTenantIntegers', () => {
  it('reads tenant=value pairs and names a bad entry', () => {
    expect(parseTenantIntegers(' a=5, b = 0 ,', 0, 10)).toEqual({ a: 5, b: 0 });
    expect(parseTenantIntegers('', 0, 10)).toEqual({});
    expect(() => parseTenantIntegers('a', 0, 10)).toThrow("'a' is not tenant=value");
    expect(() => parseTenantIntegers('a=11', 0, 10)).toThrow("value of 'a' must be 0–10");
    expect(() => parseTenantIntegers('a=1,a=2', 0, 10)).toThrow("tenant 'a' is listed twice");
  });
});

describe('concurrency keys', () => {
  const graph = { concurrency: { key: 'input.customerId', limit: 2 } };

  it('keys a run by a string, number, exact number or boolean at the path', () => {
    expect(concurrencyKeyOf(graph, { customerId: 'acme' })).toEqual({ kind: 'keyed', path: 'input.customerId', value: 'acme', limit: 2 });
    expect(concurrencyKeyOf(graph, { customerId: 7 })).toMatchObject({ kind: 'keyed', value: '7' });
    expect(concurrencyKeyOf(graph, { customerId: new JsonNumber('12345678901234567890') })).toMatchObject({ kind: 'keyed', value: '12345678901234567890' });
    expect(concurrencyKeyOf(graph, { customerId: false })).toMatchObject({ kind: 'keyed', value: 'false' });
    expect(concurrencyKeyOf({ concurrency: { key: 'input', limit: 1 } }, 'whole')).toMatchObject({ kind: 'keyed', value: 'whole' });
  });

  it('leaves a run without a key, saying why, when the path is missing, null, an object, an array or too long', () => {
    expect(concurrencyKeyOf(graph, {})).toEqual({ kind: 'unkeyed', path: 'input.customerId', reason: 'input.customerId is missing from the run input' });
    expect(concurrencyKeyOf(graph, null)).toMatchObject({ kind: 'unkeyed' });
    expect(concurrencyKeyOf(graph, { customerId: null })).toMatchObject({ kind: 'unkeyed', reason: 'input.customerId is null, not a string, number or boolean' });
    expect(concurrencyKeyOf(graph, { customerId: { id: 1 } })).toMatchObject({ kind: 'unkeyed', reason: expect.stringContaining('an object') });
    expect(concurrencyKeyOf(graph, { customerId: [1] })).toMatchObject({ kind: 'unkeyed', reason: expect.stringContaining('an array') });
    expect(concurrencyKeyOf(graph, { customerId: 'x'.repeat(201) })).toMatchObject({ kind: 'unkeyed', reason: expect.stringContaining('longer than 200') });
    expect(concurrencyKeyOf({}, { customerId: 'acme' })).toEqual({ kind: 'none' });
  });

  it('frees a place while live + ahead < limit (property)', () => {
    fc.assert(
      fc.property(fc.nat(50), fc.nat(50), fc.integer({ min: 1, max: 50 }), (live, ahead, limit) => {
        expect(concurrencyPlaceFree(live, ahead, limit)).toBe(live + ahead < limit);
      }),
    );
  });

  it('keeps a Pending run without a place Pending and asks again, like a run without a tenant slot', () => {
    const snap = { ...snapshotOf(chain()), concurrencyKeyAvailable: false };
    const result = plan(snap, { ...contextAt(1_000), slotRetryMs: 2_000 });
    expect(isEmptyPlan(result)).toBe(true);
    expect(result.wakeAt).toBe(3_000);
    expect(plan({ ...snap, concurrencyKeyAvailable: true }, contextAt(1_000)).run?.set.status).toBe('Running');
  });
});
