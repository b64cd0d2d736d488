import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  bulkBatchLimit,
  bulkCanarySize,
  bulkJobStatus,
  bulkMigrateAnswer,
  bulkPauseReason,
  checkBulkMigrate,
  checkBulkRequest,
  DEFAULT_METADATA_LIMITS as L,
  INITIAL_BULK_GATE,
  resumedGate,
  type BulkMigrateOptions,
} from './index';

const DEF = '6f1c7c9e-0d1a-4c49-9a55-3d2f0f5d9b11';
const opts = (o: Partial<BulkMigrateOptions> = {}): BulkMigrateOptions => ({ toVersion: 7, nodeMap: {}, canaryPercent: null, maxErrorRate: null, ...o });

describe('checkBulkRequest for a migrate', () => {
  it('accepts toVersion with a definition filter and the optional nodeMap, canary share and error rate', () => {
    const r = checkBulkRequest({ action: 'migrate', filter: { definitionId: DEF }, toVersion: 7, nodeMap: { a: 'b' }, canaryPercent: 10, maxErrorRate: 0.05 }, L);
    expect(r).toEqual({
      ok: true,
      request: { action: 'migrate', search: { definitionId: DEF }, fork: null, migrate: { toVersion: 7, nodeMap: { a: 'b' }, canaryPercent: 10, maxErrorRate: 0.05 } },
    });
  });

  it('refuses a migrate without toVersion or without a definition in its filter, keyed by member', () => {
    const r = checkBulkRequest({ action: 'migrate', filter: { status: 'Running' } }, L);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues.map((i) => i.key).sort()).toEqual(['filter.definitionId', 'toVersion']);
  });

  it('refuses the migrate members on another action', () => {
    const r = checkBulkRequest({ action: 'cancel', filter: { definitionId: DEF }, toVersion: 7, canaryPercent: 5 }, L);
    expect(r).toMatchObject({ ok: false, issues: [{ key: 'toVersion' }, { key: 'canaryPercent' }] });
  });

  it('refuses out-of-range shares and malformed node maps', () => {
    for (const bad of [0, 100, -1, 150, Number.NaN, '10']) expect(checkBulkMigrate({ toVersion: 2, canaryPercent: bad })).toMatchObject({ ok: false, issues: [{ key: 'canaryPercent' }] });
    for (const bad of [1, -0.1, 2, 'x']) expect(checkBulkMigrate({ toVersion: 2, maxErrorRate: bad })).toMatchObject({ ok: false, issues: [{ key: 'maxErrorRate' }] });
    expect(checkBulkMigrate({ toVersion: 2, nodeMap: { 'bad key': 'x' } })).toMatchObject({ ok: false, issues: [{ key: 'nodeMap.bad key' }] });
    expect(checkBulkMigrate({ toVersion: 2, nodeMap: ['a'] })).toMatchObject({ ok: false, issues: [{ key: 'nodeMap' }] });
    expect(checkBulkMigrate({ toVersion: 0 })).toMatchObject({ ok: false, issues: [{ key: 'toVersion' }] });
    expect(checkBulkMigrate({ toVersion: 2, maxErrorRate: 0 })).toMatchObject({ ok: true });
  });
});

describe('the canary gate', () => {
  it('sizes the canary as a rounded-up share, at least one run', () => {
    expect(bulkCanarySize(1000, 10)).toBe(100);
    expect(bulkCanarySize(7, 10)).toBe(1);
    expect(bulkCanarySize(0, 10)).toBe(0);
    expect(bulkCanarySize(1001, 10)).toBe(101);
  });

  it('cuts batches at the canary boundary and pauses there until released', () => {
    const o = opts({ canaryPercent: 10 });
    expect(bulkBatchLimit({ total: 1000, done: 80, failed: 0 }, o, INITIAL_BULK_GATE, 50)).toBe(20);
    expect(bulkPauseReason({ total: 1000, done: 80, failed: 0 }, o, INITIAL_BULK_GATE)).toBeNull();
    expect(bulkPauseReason({ total: 1000, done: 98, failed: 2 }, o, INITIAL_BULK_GATE)).toBe('canary');
    const gate = resumedGate({ total: 1000, done: 98, failed: 2 });
    expect(bulkPauseReason({ total: 1000, done: 150, failed: 2 }, o, gate)).toBeNull();
    expect(bulkBatchLimit({ total: 1000, done: 100, failed: 0 }, o, gate, 50)).toBe(50);
  });

  it('never pauses a finished job, and a job without a canary takes whole batches', () => {
    expect(bulkPauseReason({ total: 5, done: 5, failed: 0 }, opts({ canaryPercent: 50 }), INITIAL_BULK_GATE)).toBeNull();
    expect(bulkBatchLimit({ total: 1000, done: 0, failed: 0 }, opts(), INITIAL_BULK_GATE, 50)).toBe(50);
  });

  it('pauses after exactly the canary share whatever the batch size (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5000 }), fc.double({ min: 0.01, max: 99.99, noNaN: true }), fc.integer({ min: 1, max: 500 }), (total, pct, batch) => {
        const o = opts({ canaryPercent: pct });
        let p = { total, done: 0, failed: 0 };
        for (;;) {
          p = { ...p, done: p.done + Math.min(bulkBatchLimit(p, o, INITIAL_BULK_GATE, batch), total - p.done) };
          const why = bulkPauseReason(p, o, INITIAL_BULK_GATE);
          if (why !== null || p.done >= total) {
            expect(why === 'canary' ? p.done : Math.min(total, bulkCanarySize(total, pct))).toBe(Math.min(total, bulkCanarySize(total, pct)));
            return;
          }
        }
      }),
    );
  });
});

describe('the error-rate gate', () => {
  it('pauses once the failed share of at least the minimum sample exceeds the rate', () => {
    const o = opts({ maxErrorRate: 0.1 });
    expect(bulkPauseReason({ total: 100, done: 0, failed: 3 }, o, INITIAL_BULK_GATE, 20)).toBeNull();
    expect(bulkPauseReason({ total: 100, done: 18, failed: 2 }, o, INITIAL_BULK_GATE, 20)).toBeNull();
    expect(bulkPauseReason({ total: 100, done: 17, failed: 3 }, o, INITIAL_BULK_GATE, 20)).toBe('errorRate');
  });

  it('measures afresh after a resume, so the failures already seen do not pause it again', () => {
    const o = opts({ maxErrorRate: 0.1 });
    const gate = resumedGate({ total: 100, done: 17, failed: 3 });
    expect(bulkPauseReason({ total: 100, done: 37, failed: 3 }, o, gate, 20)).toBeNull();
    expect(bulkPauseReason({ total: 100, done: 34, failed: 6 }, o, gate, 20)).toBe('errorRate');
  });

  it('reads Paused while runs remain and the gate holds it', () => {
    expect(bulkJobStatus({ total: 10, done: 1, failed: 0 }, true, true)).toBe('Paused');
    expect(bulkJobStatus({ total: 10, done: 10, failed: 0 }, true, true)).toBe('Completed');
  });
});

describe('bulkMigrateAnswer', () => {
  const plan = (verdict: 'compatible' | 'needsMapping' | 'incompatible') => ({
    verdict,
    reasons: verdict === 'compatible' ? [] : [{ code: 'NodeMissing' as const, nodeKey: 'gate', message: 'gone' }],
    mapping: [],
  });
  it('applied when executed, already when compatible with nothing to move, refused with the reasons otherwise', () => {
    expect(bulkMigrateAnswer({ executed: true, plan: plan('compatible') })).toEqual({ answer: 'applied', reason: null, reasons: [] });
    expect(bulkMigrateAnswer({ executed: false, plan: plan('compatible') })).toEqual({ answer: 'already', reason: null, reasons: [] });
    expect(bulkMigrateAnswer({ executed: false, plan: plan('incompatible') })).toMatchObject({ answer: 'refused', reason: 'incompatible', reasons: [{ nodeKey: 'gate' }] });
    expect(bulkMigrateAnswer({ executed: false, plan: plan('needsMapping') })).toMatchObject({ answer: 'refused', reason: 'needsMapping' });
  });
});
