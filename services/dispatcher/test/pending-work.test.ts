import { describe, expect, it, vi } from 'vitest';
import type { RunSnapshot, WorkResult } from '@flowline/graph';
import { PendingWork } from '../src/pending-work';

const result = (invocationId: string): WorkResult => ({
  invocationId,
  nodeKey: 'tool',
  outcome: { ok: true, output: { result: 1 }, startedAt: 1, finishedAt: 2 },
});

/** Marks `ids` ready as runs of `tenant` (the tenant learned first, as from the API's wake). */
const readyAs = (p: PendingWork, tenant: string, ids: string[]) => {
  for (const id of ids) p.rememberTenant(id, tenant);
  p.markReady(ids);
};

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

  it("takes a small tenant's runs in the next batch behind another tenant's burst (weighted round robin, issue #16)", () => {
    const p = new PendingWork();
    const burst = Array.from({ length: 500 }, (_, i) => `a${i}`);
    readyAs(p, 'acme', burst);
    readyAs(p, 'beta', ['b0', 'b1', 'b2']);
    const first = p.takeReady(10);
    expect(first.filter((id) => id.startsWith('b')).sort()).toEqual(['b0', 'b1', 'b2']);
    // within a tenant, oldest first; the batch is full
    expect(first.filter((id) => id.startsWith('a'))).toEqual(['a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6']);
    expect(p.readyCount).toBe(493);
    expect(p.takeReady(1000)).toEqual(burst.slice(7));
    expect(p.readyCount).toBe(0);
  });

  it('shares batches by TENANT_WEIGHTS while both tenants have ready runs', () => {
    const p = new PendingWork({ weights: { heavy: 3 } });
    readyAs(p, 'heavy', Array.from({ length: 100 }, (_, i) => `h${i}`));
    readyAs(p, 'light', Array.from({ length: 100 }, (_, i) => `l${i}`));
    const taken = [p.takeReady(8), p.takeReady(8), p.takeReady(8)].flat();
    expect(taken.filter((id) => id.startsWith('h'))).toHaveLength(18);
    expect(taken.filter((id) => id.startsWith('l'))).toHaveLength(6);
  });

  it('learns a run\'s tenant from its snapshot for its next ready mark, and files a run it cannot place as of an unknown tenant', () => {
    const p = new PendingWork();
    readyAs(p, 'acme', Array.from({ length: 50 }, (_, i) => `a${i}`));
    p.rememberTenant('late', 'beta');
    p.markReady(['late']);
    p.markReady(['stranger']);
    const batch = p.takeReady(3);
    expect(batch).toContain('late');
    expect(batch).toContain('stranger');
    expect(batch).toContain('a0');
    // a run still ready is not queued twice; a run taken and marked again waits at its tenant's end; a forgotten run leaves its tenant's turn
    readyAs(p, 'acme', ['a0', 'a1']);
    p.forgetRun('a3');
    const rest = Array.from({ length: 49 }, (_, i) => `a${i + 1}`).filter((id) => id !== 'a3');
    expect(p.takeReady(100)).toEqual([...rest, 'a0']);
  });

  it('forgets the oldest tenant hints past its bound (TENANT_HINT_RUNS), and keeps none at 0', () => {
    const p = new PendingWork({ maxTenantHints: 2 });
    p.rememberTenant('r1', 'x');
    p.rememberTenant('r2', 'y');
    p.rememberTenant('r3', 'y');
    p.markReady(Array.from({ length: 20 }, (_, i) => `u${i}`));
    p.markReady(['r1', 'r2', 'r3']);
    // r1's hint is gone: it waits among the unknown tenant's runs in order; r2 and r3 are y's
    expect(p.takeReady(4).sort()).toEqual(['r2', 'r3', 'u0', 'u1']);
    const none = new PendingWork({ maxTenantHints: 0 });
    readyAs(none, 'x', ['n1', 'n2']);
    readyAs(none, 'y', ['n3']);
    expect(none.takeReady(3)).toEqual(['n1', 'n2', 'n3']);
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
