import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { RUN_STATUSES } from '../model';
import {
  BULK_ACTIONS,
  bulkActionApplies,
  bulkJobStatus,
  bulkOperationId,
  bulkRunOutcome,
  checkBulkRequest,
  checkRunMetadata,
  checkRunSearch,
  DEFAULT_METADATA_LIMITS as L,
  isEmptySearch,
  retryFailedAnswer,
} from './index';

describe('checkRunMetadata', () => {
  it('accepts string values under simple keys and treats absence as no metadata', () => {
    expect(checkRunMetadata({ batch: 'x', 'team.name': 'a-b', k_1: '' }, L)).toEqual({ ok: true, metadata: { batch: 'x', 'team.name': 'a-b', k_1: '' } });
    expect(checkRunMetadata(undefined, L)).toEqual({ ok: true, metadata: {} });
    expect(checkRunMetadata(null, L)).toEqual({ ok: true, metadata: {} });
  });

  it('refuses each bad key or value with an issue keyed metadata.<key>', () => {
    const r = checkRunMetadata({ 'bad key': 'x', ok: 1, long: 'v'.repeat(257), _x: 'y' }, L);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues.map((i) => i.key).sort()).toEqual(['metadata._x', 'metadata.bad key', 'metadata.long', 'metadata.ok']);
  });

  it('refuses more keys than the limit and a non-object', () => {
    const many = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v']));
    expect(checkRunMetadata(many, L)).toMatchObject({ ok: false, issues: [{ key: 'metadata' }] });
    expect(checkRunMetadata(['a'], L)).toMatchObject({ ok: false, issues: [{ key: 'metadata' }] });
    expect(checkRunMetadata('a', L)).toMatchObject({ ok: false });
  });

  it('bounds a value in characters, not bytes', () => {
    expect(checkRunMetadata({ k: 'é'.repeat(256) }, L).ok).toBe(true);
    expect(checkRunMetadata({ k: 'é'.repeat(257) }, L).ok).toBe(false);
  });

  it('never accepts a key off the pattern (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (k) => {
        const r = checkRunMetadata({ [k]: 'v' }, L);
        expect(r.ok).toBe(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(k));
      }),
    );
  });
});

describe('checkRunSearch', () => {
  it('reads every member from query strings', () => {
    const r = checkRunSearch(
      {
        definitionId: 'AAAAAAAA-0000-4000-8000-000000000000',
        definitionVersion: '3',
        status: 'Failed,Cancelled',
        failureClass: 'Timeout',
        metadata: ['batch:x', 'url:http://a'],
        createdAfter: '2026-01-01T00:00:00Z',
        createdBefore: '2026-01-02T01:00:00+01:00',
        finishedAfter: '2026-01-01T00:00:00.5Z',
        finishedBefore: '2026-02-01 00:00:00Z',
        conversationId: 'c-1',
      },
      L,
    );
    expect(r).toEqual({
      ok: true,
      search: {
        definitionId: 'aaaaaaaa-0000-4000-8000-000000000000',
        definitionVersion: 3,
        statuses: ['Failed', 'Cancelled'],
        failureClass: 'Timeout',
        metadata: { batch: 'x', url: 'http://a' },
        createdAfter: '2026-01-01T00:00:00Z',
        createdBefore: '2026-01-02T01:00:00+01:00',
        finishedAfter: '2026-01-01T00:00:00.5Z',
        finishedBefore: '2026-02-01T00:00:00Z',
        conversationId: 'c-1',
      },
    });
  });

  it('reads statuses as repeated values and metadata as an object', () => {
    expect(checkRunSearch({ status: ['Pending', 'Running,Pending'], metadata: { a: 'b' } }, L)).toEqual({
      ok: true,
      search: { statuses: ['Pending', 'Running'], metadata: { a: 'b' } },
    });
  });

  it('keys an issue to each bad member', () => {
    const r = checkRunSearch(
      { definitionId: 'nope', definitionVersion: '0', status: 'Done', failureClass: 'Oops', metadata: ['novalue', 'bad key:x'], createdAfter: 'yesterday', finishedBefore: '2026-01-01', conversationId: '' },
      L,
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues.map((i) => i.key)).toEqual([
      'definitionId',
      'definitionVersion',
      'status',
      'failureClass',
      'metadata',
      'metadata.bad key',
      'createdAfter',
      'finishedBefore',
      'conversationId',
    ]);
  });

  it('refuses an instant with a field out of range', () => {
    for (const t of ['2026-02-29T00:00:00Z', '2026-04-31T00:00:00Z', '2026-01-01T24:00:00Z', '2026-01-01T00:60:00Z', '2026-01-01T00:00:00+24:00', '2026-01-01T00:00:00']) {
      expect(checkRunSearch({ createdAfter: t }, L), t).toMatchObject({ ok: false, issues: [{ key: 'createdAfter' }] });
    }
    expect(checkRunSearch({ createdAfter: '2024-02-29T23:59:59.123456789-05:30' }, L).ok).toBe(true);
  });

  it('refuses two values for one metadata key', () => {
    expect(checkRunSearch({ metadata: ['a:1', 'a:2'] }, L)).toMatchObject({ ok: false, issues: [{ key: 'metadata.a' }] });
  });

  it('an empty input is the empty search', () => {
    const r = checkRunSearch({}, L);
    expect(r.ok && isEmptySearch(r.search)).toBe(true);
  });
});

describe('checkBulkRequest', () => {
  it('accepts an action with a non-empty filter', () => {
    expect(checkBulkRequest({ action: 'cancel', filter: { metadata: { batch: 'x' } } }, L)).toEqual({
      ok: true,
      request: { action: 'cancel', search: { metadata: { batch: 'x' } }, fork: null, migrate: null },
    });
    expect(checkBulkRequest({ action: 'fork', filter: { status: 'Failed' }, fromNodeKey: 'f' }, L)).toMatchObject({
      ok: true,
      request: { fork: { fromNodeKey: 'f', failedOnly: false } },
    });
  });

  it('refuses an empty filter, an unknown action, a fork without its node and fork options on another action', () => {
    expect(checkBulkRequest({ action: 'cancel', filter: {} }, L)).toMatchObject({ ok: false, issues: [{ key: 'filter' }] });
    expect(checkBulkRequest({ action: 'delete', filter: { status: 'Failed' } }, L)).toMatchObject({ ok: false, issues: [{ key: 'action' }] });
    expect(checkBulkRequest({ action: 'fork', filter: { status: 'Failed' } }, L)).toMatchObject({ ok: false, issues: [{ key: 'fromNodeKey' }] });
    expect(checkBulkRequest({ action: 'cancel', filter: { status: 'Failed' }, fromNodeKey: 'x' }, L)).toMatchObject({ ok: false, issues: [{ key: 'fromNodeKey' }] });
    expect(checkBulkRequest({ action: 'cancel', filter: { status: 'Nope' } }, L)).toMatchObject({ ok: false, issues: [{ key: 'filter.status' }] });
    expect(checkBulkRequest({ action: 'cancel', filter: [] }, L)).toMatchObject({ ok: false, issues: [{ key: 'filter' }] });
  });
});

describe('bulkActionApplies', () => {
  const arb = fc.record({ status: fc.constantFrom(...RUN_STATUSES), paused: fc.boolean(), parentRunId: fc.option(fc.constant('p'), { nil: null }) });

  it('cancel applies exactly to live and Scheduled runs, retry-failed to Failed runs, resume to paused live runs, fork to top-level runs', () => {
    fc.assert(
      fc.property(arb, (run) => {
        const live = ['Pending', 'Running', 'WaitingForApproval'].includes(run.status);
        expect(bulkActionApplies('cancel', run)).toBe(live || run.status === 'Scheduled');
        expect(bulkActionApplies('retry-failed', run)).toBe(run.status === 'Failed');
        expect(bulkActionApplies('resume', run)).toBe(live && run.paused);
        expect(bulkActionApplies('fork', run)).toBe(run.parentRunId === null);
      }),
    );
  });

  it('every action has a rule', () => {
    for (const a of BULK_ACTIONS) expect(typeof bulkActionApplies(a, { status: 'Failed', paused: true, parentRunId: null })).toBe('boolean');
  });
});

describe('outcomes and status', () => {
  it('maps verb answers to outcomes', () => {
    expect(bulkRunOutcome('applied')).toBe('applied');
    expect(bulkRunOutcome('already')).toBe('noop');
    expect(bulkRunOutcome('refused')).toBe('refused');
    expect(bulkRunOutcome('gone')).toBe('refused');
  });

  it('reads a retry-failed run: retried applied, reopened already, still Failed without a retry refused', () => {
    expect(retryFailedAnswer({ exists: true, runStatus: 'Failed', retried: 2 })).toBe('applied');
    expect(retryFailedAnswer({ exists: true, runStatus: 'Running', retried: 0 })).toBe('already');
    expect(retryFailedAnswer({ exists: true, runStatus: 'Failed', retried: 0 })).toBe('refused');
    expect(retryFailedAnswer({ exists: false, runStatus: null, retried: 0 })).toBe('gone');
  });

  it('a job is Pending or Running while runs remain, then Completed, or Failed when none was done', () => {
    fc.assert(
      fc.property(fc.nat(50), fc.nat(50), fc.nat(50), fc.boolean(), (total, a, b, claimed) => {
        const done = Math.min(a, total);
        const failed = Math.min(b, total - done);
        const s = bulkJobStatus({ total, done, failed }, claimed);
        if (done + failed < total) expect(s).toBe(claimed ? 'Running' : 'Pending');
        else expect(s).toBe(total > 0 && done === 0 ? 'Failed' : 'Completed');
      }),
    );
  });

  it('derives one operation id per job and run', () => {
    expect(bulkOperationId('b', 'r')).toBe(bulkOperationId('b', 'r'));
    expect(bulkOperationId('b', 'r')).not.toBe(bulkOperationId('b', 's'));
  });
});
