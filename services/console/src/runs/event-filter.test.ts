import { describe, expect, it } from 'vitest';
import type { LiveEvent } from '@flowline/client';
import { RUN_EVENTS, eventChoices, eventMatches } from './event-filter';

const ev = (seq: number, kind: string, nodeKey: string | null, detail: unknown = {}): LiveEvent => ({ seq, kind, nodeKey, detail, at: '2026-01-01T00:00:00Z' }) as unknown as LiveEvent;

const events = [ev(1, 'run.started', null), ev(2, 'node.queued', 'fetch'), ev(3, 'node.failed', 'fetch', { reason: 'timeout talking to billing' }), ev(4, 'node.queued', 'sum')];
const keep = (f: Parameters<typeof eventMatches>[1]) => events.filter((e) => eventMatches(e, f)).map((e) => e.seq);

describe('narrowing the run’s events', () => {
  it('keeps one node’s events, or the run’s own', () => {
    expect(keep({ nodeKey: 'fetch' })).toEqual([2, 3]);
    expect(keep({ nodeKey: RUN_EVENTS })).toEqual([1]);
    expect(keep({})).toEqual([1, 2, 3, 4]);
  });

  it('keeps one kind, or a family by its prefix', () => {
    expect(keep({ kind: 'node.queued' })).toEqual([2, 4]);
    expect(keep({ kind: 'node.' })).toEqual([2, 3, 4]);
  });

  it('finds a text in the kind, the node or the detail, whatever its case, and ANDs it with the rest', () => {
    expect(keep({ text: 'BILLING' })).toEqual([3]);
    expect(keep({ text: 'sum' })).toEqual([4]);
    expect(keep({ text: 'queued', nodeKey: 'sum' })).toEqual([4]);
  });

  it('offers the nodes in the order they first appear and the kinds sorted', () => {
    expect(eventChoices(events)).toEqual({ nodes: ['fetch', 'sum'], kinds: ['node.failed', 'node.queued', 'run.started'] });
  });
});
