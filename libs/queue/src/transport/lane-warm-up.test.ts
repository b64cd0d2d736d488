import { describe, expect, it } from 'vitest';
import type { WorkItem } from '@flowline/graph';
import { fromWire, isExactWorkItem, toWire } from '../protocol';
import { warmUpItem, warmUpLane } from './lane-warm-up';

describe('lane warm-up', () => {
  it('builds an item a real job is read like: the hand-written fast path takes it', () => {
    for (const lane of ['tool', 'llm'] as const) expect(isExactWorkItem(fromWire(toWire(warmUpItem(lane, 1_000))))).toBe(true);
  });

  it('runs the whole per-job path and hands the lane the parsed item', () => {
    const seen: WorkItem[] = [];
    const ret = fromWire(warmUpLane('tool', 5_000, (item) => seen.push(item)));
    expect(seen).toHaveLength(1);
    expect(seen[0]).toEqual(warmUpItem('tool', 5_000));
    expect(ret).toEqual({
      runId: seen[0]!.runId,
      nodeKey: 'warm-up',
      invocationId: seen[0]!.invocationId,
      outcome: { ok: true, output: { echoed: { q: 'warm-up' } }, startedAt: 5_000, finishedAt: 5_000 },
    });
  });

  it("lets a lane's own warm-up failure reach the caller", () => {
    expect(() =>
      warmUpLane('llm', 0, () => {
        throw new Error('lane broke');
      }),
    ).toThrow('lane broke');
  });
});
