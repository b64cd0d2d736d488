import { describe, expect, it } from 'vitest';
import type { RunChangedPing } from '@flowline/queue';
import { createPingMerger, mergePing, type MergerTimers } from './merger';

function manualTimers() {
  const due = new Map<number, () => void>();
  let next = 1;
  const timers: MergerTimers = {
    set: (fn) => {
      const h = next++;
      due.set(h, fn);
      return h;
    },
    clear: (h) => void due.delete(h as number),
  };
  const fireAll = () => {
    const fns = [...due.values()];
    due.clear();
    for (const f of fns) f();
  };
  return { timers, fireAll, armed: () => due.size };
}

const ping = (runId: string, seq: number, kind: RunChangedPing['kind'] = 'node'): RunChangedPing => ({ runId, seq, kind });

describe('ping merging', () => {
  it('delivers one ping per run per window carrying the highest seq seen, whatever the arrival order', () => {
    const t = manualTimers();
    const out: RunChangedPing[] = [];
    const m = createPingMerger(50, (p) => out.push(p), t.timers);
    for (const s of [3, 7, 5, 6]) m.add(ping('a', s));
    m.add(ping('b', 2));
    expect(out).toEqual([]);
    expect(t.armed()).toBe(2);
    t.fireAll();
    expect(out).toEqual([ping('a', 7), ping('b', 2)]);
    m.add(ping('a', 8));
    t.fireAll();
    expect(out.at(-1)).toEqual(ping('a', 8));
  });

  it('keeps the most significant kind of the merged pings (run over gate over node)', () => {
    expect(mergePing(ping('a', 4, 'node'), ping('a', 3, 'run'))).toEqual(ping('a', 4, 'run'));
    expect(mergePing(ping('a', 4, 'gate'), ping('a', 9, 'node'))).toEqual(ping('a', 9, 'gate'));
  });

  it('delivers at once with a zero window, flushes pending pings on demand and drops them on close', () => {
    const out: RunChangedPing[] = [];
    createPingMerger(0, (p) => out.push(p)).add(ping('a', 1));
    expect(out).toEqual([ping('a', 1)]);
    const t = manualTimers();
    const m = createPingMerger(50, (p) => out.push(p), t.timers);
    m.add(ping('b', 2));
    m.flush();
    expect(out.at(-1)).toEqual(ping('b', 2));
    m.add(ping('c', 3));
    m.close();
    t.fireAll();
    expect(m.pendingCount()).toBe(0);
    expect(out.map((p) => p.runId)).toEqual(['a', 'b']);
  });
});
