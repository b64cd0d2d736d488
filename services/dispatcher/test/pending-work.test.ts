import { describe, expect, it, vi } from 'vitest';
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
    expect(p.takeReady(2)).toEqual(['a', 'b']);
    expect(p.takeReady(10)).toEqual(['c']);
    expect(p.readyCount).toBe(0);
  });

  it('attaches an outcome once however often it is reported and drops it only when consumed', () => {
    const p = new PendingWork();
    p.addResult('run', result('i1'));
    p.addResult('run', result('i1'));
    expect(p.attach(snapshotOf('run')).results).toHaveLength(1);
    const planned = p.attach(snapshotOf('run'));
    p.consume('run', [], planned);
    expect(p.attach(snapshotOf('run')).results).toHaveLength(1);
    p.consume('run', ['i1'], planned);
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
    p.consume('run', ['i1'], p.attach(snapshotOf('run')));
    expect(p.lookupInvocation('i1')).toEqual({ runId: 'run', nodeKey: 'tool' });
    p.addResult('run', result('i1'));
    p.consume('run', ['i1'], p.attach(snapshotOf('run')));
    expect(p.lookupInvocation('i1')).toBeUndefined();
  });

  it('keeps an outcome that arrived while its start was being committed', () => {
    const p = new PendingWork();
    p.addStarted('run', { invocationId: 'i1', nodeKey: 'tool', at: 1 });
    const planned = p.attach(snapshotOf('run'));
    p.addResult('run', result('i1'));
    p.consume('run', ['i1'], planned);
    const next = p.attach(snapshotOf('run'));
    expect(next.results.map((r) => r.invocationId)).toEqual(['i1']);
    expect(next.started).toHaveLength(0);
  });

  it('forgets runs of lost shards', () => {
    const p = new PendingWork();
    p.addResult('keep', result('i1'));
    p.addResult('drop', result('i2'));
    p.retainRuns((id) => id === 'keep');
    expect(p.takeReady(10)).toEqual(['keep']);
    expect(p.attach(snapshotOf('drop')).results).toHaveLength(0);
  });

  it('wakes a waiting tick loop as soon as a run becomes ready', async () => {
    const p = new PendingWork();
    const waiting = p.whenReady(60_000);
    p.markReady(['a']);
    await waiting;
    expect(p.readyCount).toBe(1);
  });
  it('makes a run with only a start ready after the start delay, and sooner when its outcome arrives', () => {
    vi.useFakeTimers();
    try {
      const p = new PendingWork({ startDelayMs: 20 });
      p.addStarted('slow', { invocationId: 'i1', nodeKey: 'tool', at: 1 });
      p.addStarted('quick', { invocationId: 'i2', nodeKey: 'tool', at: 1 });
      expect(p.readyCount).toBe(0);
      p.addResult('quick', result('i2'));
      expect(p.takeReady(10)).toEqual(['quick']);
      vi.advanceTimersByTime(15);
      // a start arriving later waits its own full delay
      p.addStarted('later', { invocationId: 'i3', nodeKey: 'tool', at: 1 });
      vi.advanceTimersByTime(5);
      expect(p.takeReady(10)).toEqual(['slow']);
      expect(p.attach(snapshotOf('slow')).started).toHaveLength(1);
      vi.advanceTimersByTime(14);
      expect(p.readyCount).toBe(0);
      vi.advanceTimersByTime(1);
      expect(p.takeReady(10)).toEqual(['later']);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('PendingWork invocation refs (issue #19: the lane a finished job freed)', () => {
  it('keeps the lane learned at enqueue when a snapshot re-learns the invocation without one', () => {
    const p = new PendingWork();
    p.rememberInvocation('i1', { runId: 'r1', nodeKey: 'n1', lane: 'tool' });
    p.rememberInvocation('i1', { runId: 'r1', nodeKey: 'n1' });
    expect(p.lookupInvocation('i1')).toEqual({ runId: 'r1', nodeKey: 'n1', lane: 'tool' });
  });

  it('takes a new lane, and drops a lane of another run', () => {
    const p = new PendingWork();
    p.rememberInvocation('i1', { runId: 'r1', nodeKey: 'n1', lane: 'tool' });
    p.rememberInvocation('i1', { runId: 'r1', nodeKey: 'n1', lane: 'llm' });
    expect(p.lookupInvocation('i1')?.lane).toBe('llm');
    p.rememberInvocation('i1', { runId: 'r2', nodeKey: 'n1' });
    expect(p.lookupInvocation('i1')).toEqual({ runId: 'r2', nodeKey: 'n1' });
  });
});
