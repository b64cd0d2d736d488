import { describe, expect, it } from 'vitest';
import { pendingExpiry } from './backlog';
import { plan } from './plan';
import { contextAt, edge, graphOf, node, rowOf, snapshotOf, step } from './test-kit';

const chain = () => graphOf([node('s', 'Start'), node('t', 'Tool'), node('e', 'End')], [edge('st', 's', 't'), edge('te', 't', 'e')]);
const scheduled = (notBefore: number) => snapshotOf(chain(), { q: 1 }, { status: 'Scheduled', notBefore });

describe('a delayed start (Scheduled run)', () => {
  it('writes nothing before its notBefore and asks to be woken exactly then', () => {
    const result = plan(scheduled(5_000), contextAt(4_999));
    expect(result.run).toBeNull();
    expect(result.nodes).toEqual([]);
    expect(result.events).toEqual([]);
    expect(result.enqueue).toEqual([]);
    expect(result.wakeAt).toBe(5_000);
  });

  it('is released at its notBefore and, with a run slot free, starts in the same tick', () => {
    const { snap, result } = step(scheduled(5_000), 5_000);
    expect(snap.run.status).toBe('Running');
    expect(result.events[0]).toEqual({ kind: 'run.started', nodeKey: null, detail: {} });
    expect(rowOf(snap, 't').status).toBe('Queued');
  });

  it('becomes an ordinary Pending run when no tenant slot is free (fair share applies once released)', () => {
    const result = plan({ ...scheduled(5_000), runSlotAvailable: false }, { ...contextAt(6_000), slotRetryMs: 250 });
    expect(result.run?.set).toEqual({ status: 'Pending' });
    expect(result.events).toEqual([]);
    expect(result.enqueue).toEqual([]);
    // it asks again for a slot like any Pending run
    expect(result.wakeAt).toBe(6_250);
  });

  it('stays behind a concurrency key place like any Pending run', () => {
    const result = plan({ ...scheduled(5_000), concurrencyKeyAvailable: false }, contextAt(6_000));
    expect(result.run?.set).toEqual({ status: 'Pending' });
  });

  it('counts the Pending TTL from its notBefore, not from its creation', () => {
    const run = { status: 'Pending' as const, startedAt: null, parentRunId: null, createdAt: 0, notBefore: 100_000 };
    expect(pendingExpiry(run, 1_000, 100_500)).toEqual({ expired: false, at: 101_000 });
    expect(pendingExpiry(run, 1_000, 101_000).expired).toBe(true);
    expect(pendingExpiry({ ...run, notBefore: null }, 1_000, 1_000).expired).toBe(true);
  });
});
