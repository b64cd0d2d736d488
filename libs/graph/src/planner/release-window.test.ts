import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EMPTY_WINDOW_STATE, parseTenantWeights, planRelease, releasesEverything, windowCapacity, type WindowState, type WindowTenant } from './release-window';

const t = (tenantId: string, backlog: number, weight = 1): WindowTenant => ({ tenantId, backlog, weight });
const total = (take: { count: number }[]) => take.reduce((s, x) => s + x.count, 0);

/** Releases one item per call `calls` times from endless backlogs; counts per tenant. */
function drip(weights: Record<string, number>, calls: number, capacity = 1): Record<string, number> {
  let state: WindowState = EMPTY_WINDOW_STATE;
  const got: Record<string, number> = {};
  for (let i = 0; i < calls; i++) {
    const d = planRelease({ capacity, tenants: Object.entries(weights).map(([id, w]) => t(id, 1_000_000, w)), state });
    for (const x of d.take) got[x.tenantId] = (got[x.tenantId] ?? 0) + x.count;
    state = d.state;
  }
  return got;
}

describe('planRelease', () => {
  it('releases a lone tenant everything that fits in one call', () => {
    expect(planRelease({ capacity: 32, tenants: [t('a', 3)], state: EMPTY_WINDOW_STATE }).take).toEqual([{ tenantId: 'a', count: 3 }]);
    expect(planRelease({ capacity: 2, tenants: [t('a', 5)], state: EMPTY_WINDOW_STATE }).take).toEqual([{ tenantId: 'a', count: 2 }]);
  });

  it('releases nothing into a full lane and keeps the state', () => {
    const state: WindowState = { deficits: { a: 2 }, cursor: 'a' };
    expect(planRelease({ capacity: 0, tenants: [t('a', 5)], state })).toEqual({ take: [], state });
  });

  it('alternates equal tenants one by one when the window frees one slot at a time', () => {
    let state: WindowState = EMPTY_WINDOW_STATE;
    const seq: string[] = [];
    for (let i = 0; i < 6; i++) {
      const d = planRelease({ capacity: 1, tenants: [t('a', 100), t('b', 100)], state });
      seq.push(...d.take.map((x) => x.tenantId));
      state = d.state;
    }
    expect(seq).toEqual(['a', 'b', 'a', 'b', 'a', 'b']);
  });

  it('serves weights 3:1 exactly over whole rounds, resuming an interrupted visit', () => {
    expect(drip({ a: 3, b: 1 }, 400)).toEqual({ a: 300, b: 100 });
    let state: WindowState = EMPTY_WINDOW_STATE;
    const first = planRelease({ capacity: 2, tenants: [t('a', 10, 3), t('b', 10, 1)], state });
    expect(first.take).toEqual([{ tenantId: 'a', count: 2 }]);
    expect(first.state).toEqual({ deficits: { a: 1 }, cursor: 'a' });
    state = first.state;
    expect(planRelease({ capacity: 3, tenants: [t('a', 10, 3), t('b', 10, 1)], state }).take).toEqual([
      { tenantId: 'a', count: 2 },
      { tenantId: 'b', count: 1 },
    ]);
  });

  it('gives an idle tenant share to the busy ones and banks no credit for an emptied hold', () => {
    const d = planRelease({ capacity: 10, tenants: [t('a', 100), t('b', 2)], state: EMPTY_WINDOW_STATE });
    expect(total(d.take)).toBe(10);
    expect(d.take.find((x) => x.tenantId === 'b')?.count).toBe(2);
    expect(d.state.deficits['b']).toBeUndefined();
  });

  it('starts after a cursor whose tenant no longer holds work', () => {
    const d = planRelease({ capacity: 1, tenants: [t('a', 5), t('c', 5)], state: { deficits: {}, cursor: 'b' } });
    expect(d.take).toEqual([{ tenantId: 'c', count: 1 }]);
  });

  it('takes every whole hold, forgets the credit and keeps the cursor when everything fits', () => {
    const state: WindowState = { deficits: { a: 2, b: 1 }, cursor: 'b' };
    const facts = { capacity: 9, tenants: [t('b', 4, 3), t('a', 5)], state };
    expect(releasesEverything(facts)).toBe(true);
    expect(planRelease(facts)).toEqual({
      take: [
        { tenantId: 'a', count: 5 },
        { tenantId: 'b', count: 4 },
      ],
      state: { deficits: {}, cursor: 'b' },
    });
    expect(releasesEverything({ capacity: 8, tenants: facts.tenants })).toBe(false);
    expect(releasesEverything({ capacity: 5, tenants: [] })).toBe(false);
    expect(releasesEverything({ capacity: Number.NaN, tenants: [t('a', 1)] })).toBe(false);
  });

  it('treats bad numbers as nothing held and a bad weight as 1', () => {
    const d = planRelease({ capacity: Number.NaN, tenants: [t('a', 5)], state: EMPTY_WINDOW_STATE });
    expect(d.take).toEqual([]);
    expect(drip({ a: Number.NaN, b: 0 }, 10)).toEqual({ a: 5, b: 5 });
    expect(planRelease({ capacity: 5, tenants: [t('a', Number.POSITIVE_INFINITY)], state: EMPTY_WINDOW_STATE }).take).toEqual([]);
  });
});

const tenantsArb = fc.uniqueArray(
  fc.record({ tenantId: fc.constantFrom('a', 'b', 'c', 'd', 'e'), backlog: fc.nat({ max: 40 }), weight: fc.integer({ min: 1, max: 5 }) }),
  { selector: (x) => x.tenantId, maxLength: 5 },
);
const stateArb: fc.Arbitrary<WindowState> = fc.record({
  deficits: fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'z'), fc.integer({ min: 0, max: 5 })),
  cursor: fc.option(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'z', '0'), { nil: null }),
});

describe('planRelease properties', () => {
  it('is work-conserving: releases exactly min(capacity, total backlog), never more than a tenant holds', () => {
    fc.assert(
      fc.property(fc.nat({ max: 100 }), tenantsArb, stateArb, (capacity, tenants, state) => {
        const d = planRelease({ capacity, tenants, state });
        const held = tenants.reduce((s, x) => s + x.backlog, 0);
        expect(total(d.take)).toBe(Math.min(capacity, held));
        for (const x of d.take) {
          expect(x.count).toBeGreaterThan(0);
          expect(x.count).toBeLessThanOrEqual(tenants.find((y) => y.tenantId === x.tenantId)!.backlog);
        }
        for (const [id, credit] of Object.entries(d.state.deficits)) {
          expect(credit).toBeGreaterThan(0);
          expect(credit).toBeLessThanOrEqual(tenants.find((y) => y.tenantId === id)!.weight + 5);
        }
      }),
    );
  });

  it('is fair: over any run of releases of busy tenants, each share is within one quantum of its weight share', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.record({ tenantId: fc.constantFrom('a', 'b', 'c', 'd'), weight: fc.integer({ min: 1, max: 5 }) }), { selector: (x) => x.tenantId, minLength: 1, maxLength: 4 }),
        fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 60 }),
        (tenants, capacities) => {
          let state: WindowState = EMPTY_WINDOW_STATE;
          const got: Record<string, number> = {};
          let released = 0;
          for (const capacity of capacities) {
            const d = planRelease({ capacity, tenants: tenants.map((x) => t(x.tenantId, 10_000, x.weight)), state });
            for (const x of d.take) got[x.tenantId] = (got[x.tenantId] ?? 0) + x.count;
            released += total(d.take);
            state = d.state;
          }
          const sumW = tenants.reduce((s, x) => s + x.weight, 0);
          const maxW = Math.max(...tenants.map((x) => x.weight));
          for (const x of tenants) {
            const ideal = (released * x.weight) / sumW;
            expect(Math.abs((got[x.tenantId] ?? 0) - ideal)).toBeLessThanOrEqual(2 * maxW);
          }
        },
      ),
    );
  });

  it('releases everything exactly when everything fits', () => {
    fc.assert(
      fc.property(fc.nat({ max: 100 }), tenantsArb, stateArb, (capacity, tenants, state) => {
        const d = planRelease({ capacity, tenants, state });
        const held = tenants.reduce((s, x) => s + x.backlog, 0);
        expect(releasesEverything({ capacity, tenants })).toBe(held > 0 && capacity >= held);
        if (releasesEverything({ capacity, tenants })) expect(d.state).toEqual({ deficits: {}, cursor: state.cursor });
      }),
    );
  });

  it('is deterministic', () => {
    fc.assert(
      fc.property(fc.nat({ max: 50 }), tenantsArb, stateArb, (capacity, tenants, state) => {
        expect(planRelease({ capacity, tenants, state })).toEqual(planRelease({ capacity, tenants: [...tenants].reverse(), state }));
      }),
    );
  });
});

describe('windowCapacity', () => {
  it('is the target minus the waiting depth, never negative', () => {
    expect(windowCapacity(32, 0)).toBe(32);
    expect(windowCapacity(32, 30)).toBe(2);
    expect(windowCapacity(32, 40)).toBe(0);
  });
});

describe('parseTenantWeights', () => {
  it('reads tenant=weight pairs', () => {
    expect(parseTenantWeights('')).toEqual({});
    expect(parseTenantWeights('a=3, b=1')).toEqual({ a: 3, b: 1 });
  });

  it('names the bad entry', () => {
    expect(() => parseTenantWeights('a=3,b')).toThrow("'b' is not tenant=weight");
    expect(() => parseTenantWeights('a=0')).toThrow("weight of 'a' must be 1–1000");
    expect(() => parseTenantWeights('a=1,a=2')).toThrow("tenant 'a' is listed twice");
  });
});
