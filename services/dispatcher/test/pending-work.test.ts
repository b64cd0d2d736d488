import { describe, expect, it } from 'vitest';
import type { RunSnapshot, WorkResult } from '@flowline/graph';
import { PendingWork } from '../src/pending-work';

const result = (invocationId: string): WorkResult => ({
  invocationId,
  nodeKey: 'tool',
  outcome: { ok: true, output: { result: 1 }, startedAt: 1, finishedAt: 2 },
});

const snapshotOf = (runId: string) => ({ run: { id: runId }, results: [], started: [] }) as unknown as RunSnapshot;

describe('PendingWork', () => {
  it('hands out ready runs oldest first, at most the batch limit, each once', () => {
    const p = new PendingWork();
    p.markReady(['a', 'b', 'c']);
    p.markReady(['a']);
    expect(p.takeReady(2).runIds).toEqual(['a', 'b']);
    expect(p.takeReady(10).runIds).toEqual(['c']);
    expect(p.readyCount).toBe(0);
  });

  it('remembers which taken runs were due so their empty plans still commit', () => {
    const p = new PendingWork();
    p.markReady(['a']);
    p.markReady(['b'], { due: true });
    expect([...p.takeReady(5).due]).toEqual(['b']);
  });

  it('attaches an outcome once however often it is reported and drops it only when consumed', () => {
    const p = new PendingWork();
    p.addResult('run', result('i1'));
    p.addResult('run', result('i1'));
    expect(p.attach(snapshotOf('run')).results).toHaveLength(1);
    p.consume('run', []);
    expect(p.attach(snapshotOf('run')).results).toHaveLength(1);
    p.consume('run', ['i1']);
    expect(p.attach(snapshotOf('run')).results).toHaveLength(0);
  });

  it('does not attach a start for an invocation whose outcome is already known', () => {
    const p = new PendingWork();
    p.addStarted('run', { invocationId: 'i1', nodeKey: 'tool', at: 1 });
    p.addResult('run', result('i1'));
    const s = p.attach(snapshotOf('run'));
    expect(s.started).toHaveLength(0);
    expect(s.results).toHaveLength(1);
  });

  it('keeps an invocation mapped after its start is consumed and forgets it after its outcome is', () => {
    const p = new PendingWork();
    p.rememberInvocation('i1', { runId: 'run', nodeKey: 'tool' });
    p.addStarted('run', { invocationId: 'i1', nodeKey: 'tool', at: 1 });
    p.consume('run', ['i1']);
    expect(p.lookupInvocation('i1')).toEqual({ runId: 'run', nodeKey: 'tool' });
    p.addResult('run', result('i1'));
    p.consume('run', ['i1']);
    expect(p.lookupInvocation('i1')).toBeUndefined();
  });

  it('forgets runs of lost shards', () => {
    const p = new PendingWork();
    p.addResult('keep', result('i1'));
    p.addResult('drop', result('i2'));
    p.retainRuns((id) => id === 'keep');
    expect(p.takeReady(10).runIds).toEqual(['keep']);
    expect(p.attach(snapshotOf('drop')).results).toHaveLength(0);
  });

  it('wakes a waiting tick loop as soon as a run becomes ready', async () => {
    const p = new PendingWork();
    const waiting = p.whenReady(60_000);
    p.markReady(['a']);
    await waiting;
    expect(p.readyCount).toBe(1);
  });
});
