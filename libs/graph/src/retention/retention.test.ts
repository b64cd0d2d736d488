import { describe, expect, it } from 'vitest';
import {
  DAY_MS,
  isRunExpired,
  MAX_RETENTION_DAYS,
  parseTenantRetention,
  planRetention,
  retentionCutoff,
  retentionDaysOf,
  retentionEnabled,
  TenantRetentionError,
  type RetentionPolicy,
} from './retention';

const NOW = Date.UTC(2026, 11, 2);
const policy: RetentionPolicy = { defaultDays: 7, tenantDays: { beta: 30, gamma: 0 } };

describe('parseTenantRetention', () => {
  it('reads tenant=days pairs, spaces and empty entries allowed', () => {
    expect(parseTenantRetention('')).toEqual({});
    expect(parseTenantRetention(' acme = 7 , beta=90,, gamma=0 ')).toEqual({ acme: 7, beta: 90, gamma: 0 });
    expect(parseTenantRetention(`x=${MAX_RETENTION_DAYS}`)).toEqual({ x: MAX_RETENTION_DAYS });
  });

  it.each([
    ['acme:7', "'acme:7' is not tenant=days"],
    ['acme=', "'acme=' is not tenant=days"],
    ['acme=-1', "'acme=-1' is not tenant=days"],
    ['acme=1.5', "'acme=1.5' is not tenant=days"],
    ['=3', "'=3' is not tenant=days"],
    [`acme=${MAX_RETENTION_DAYS + 1}`, `retention of 'acme' must be 0–${MAX_RETENTION_DAYS} days`],
    ['acme=1,acme=2', "tenant 'acme' is listed twice"],
  ])('refuses %s with a keyed error', (text, message) => {
    let err: unknown;
    try {
      parseTenantRetention(text);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TenantRetentionError);
    expect((err as TenantRetentionError).code).toBe('TenantRetentionInvalid');
    expect((err as Error).message).toBe(message);
  });

  it('does not take a prototype member for a listed tenant', () => {
    expect(retentionDaysOf({ defaultDays: 3, tenantDays: parseTenantRetention('a=1') }, 'constructor')).toBe(3);
    expect(parseTenantRetention('constructor=2')).toEqual({ constructor: 2 });
  });
});

describe('retention cutoffs', () => {
  it('uses the tenant override, else the default; 0 keeps forever', () => {
    expect(retentionDaysOf(policy, 'acme')).toBe(7);
    expect(retentionDaysOf(policy, 'beta')).toBe(30);
    expect(retentionCutoff(policy, 'acme', NOW)).toBe(NOW - 7 * DAY_MS);
    expect(retentionCutoff(policy, 'beta', NOW)).toBe(NOW - 30 * DAY_MS);
    expect(retentionCutoff(policy, 'gamma', NOW)).toBeNull();
    expect(retentionCutoff({ defaultDays: 0, tenantDays: { a: 2 } }, 'other', NOW)).toBeNull();
  });

  it('is enabled only when some tenant has a retention', () => {
    expect(retentionEnabled({ defaultDays: 0, tenantDays: {} })).toBe(false);
    expect(retentionEnabled({ defaultDays: 0, tenantDays: { a: 0 } })).toBe(false);
    expect(retentionEnabled({ defaultDays: 0, tenantDays: { a: 1 } })).toBe(true);
    expect(retentionEnabled({ defaultDays: 1, tenantDays: {} })).toBe(true);
  });

  it('plans one cutoff per tenant with a retention, in tenant order, leaving out the kept-forever', () => {
    expect(planRetention(policy, ['gamma', 'beta', 'acme', 'beta'], NOW)).toEqual([
      { tenantId: 'acme', cutoff: NOW - 7 * DAY_MS, days: 7 },
      { tenantId: 'beta', cutoff: NOW - 30 * DAY_MS, days: 30 },
    ]);
    expect(planRetention({ defaultDays: 0, tenantDays: {} }, ['a', 'b'], NOW)).toEqual([]);
  });
});

describe('isRunExpired', () => {
  const run = (tenantId: string, status: 'Completed' | 'Failed' | 'Cancelled' | 'Running' | 'Pending', ageDays: number | null) => ({
    tenantId,
    status,
    finishedAt: ageDays === null ? null : NOW - ageDays * DAY_MS,
  });

  it('expires terminal runs finished strictly before the cutoff', () => {
    expect(isRunExpired(policy, run('acme', 'Completed', 8), NOW)).toBe(true);
    expect(isRunExpired(policy, run('acme', 'Failed', 8), NOW)).toBe(true);
    expect(isRunExpired(policy, run('acme', 'Cancelled', 8), NOW)).toBe(true);
    expect(isRunExpired(policy, run('acme', 'Completed', 7), NOW)).toBe(false);
    expect(isRunExpired(policy, run('acme', 'Completed', 6), NOW)).toBe(false);
  });

  it('never expires a live run or a kept-forever tenant', () => {
    expect(isRunExpired(policy, run('acme', 'Running', 100), NOW)).toBe(false);
    expect(isRunExpired(policy, run('acme', 'Pending', 100), NOW)).toBe(false);
    expect(isRunExpired(policy, run('acme', 'Completed', null), NOW)).toBe(false);
    expect(isRunExpired(policy, run('gamma', 'Completed', 10_000), NOW)).toBe(false);
    expect(isRunExpired(policy, run('beta', 'Completed', 29), NOW)).toBe(false);
    expect(isRunExpired(policy, run('beta', 'Completed', 31), NOW)).toBe(true);
  });

  it('agrees with planRetention for every tenant and age', () => {
    for (const tenantId of ['acme', 'beta', 'gamma']) {
      const planned = planRetention(policy, [tenantId], NOW)[0];
      for (const age of [0, 1, 6.9, 7, 7.1, 29, 30.5, 400]) {
        const r = run(tenantId, 'Completed', age);
        expect(isRunExpired(policy, r, NOW)).toBe(planned !== undefined && r.finishedAt! < planned.cutoff);
      }
    }
  });
});
