import { describe, expect, it } from 'vitest';
import { frameKey, renderProfiles, selfTimes, type CpuProfile } from './cpu-profile';

const root = '/repo';
const frame = (functionName: string, url: string, lineNumber = 0) => ({ functionName, url, lineNumber });

/**
 * root → tick (dispatcher) → plan (graph); root → [ioredis] write, [ioredis] parse, (idle), (garbage collector).
 * Samples every 100 µs from 1,000: plan ×3, tick ×1, write ×2, parse ×1, idle ×2, gc ×1.
 */
function profile(): CpuProfile {
  const nodes = [
    { id: 1, callFrame: frame('(root)', '') },
    { id: 2, callFrame: frame('tick', 'file:///repo/services/dispatcher/dist/tick.js', 9) },
    { id: 3, callFrame: frame('plan', 'file:///repo/libs/graph/dist/plan.js', 41) },
    { id: 4, callFrame: frame('write', 'file:///repo/node_modules/ioredis/built/Redis.js', 3) },
    { id: 5, callFrame: frame('parse', 'file:///repo/node_modules/ioredis/built/Parser.js', 7) },
    { id: 6, callFrame: frame('(idle)', '') },
    { id: 7, callFrame: frame('(garbage collector)', '') },
  ];
  const samples = [3, 3, 2, 4, 6, 6, 5, 3, 4, 7];
  return { nodes, startTime: 1000, endTime: 2100, samples, timeDeltas: samples.map(() => 100) };
}

describe('frameKey', () => {
  it('names app code by function and place from the repository root, and node_modules code by package', () => {
    expect(frameKey(frame('plan', 'file:///repo/libs/graph/dist/plan.js', 41), root).key).toBe('plan libs/graph/dist/plan.js:42');
    expect(frameKey(frame('add', 'file:///repo/node_modules/bullmq/dist/cjs/queue.js'), root).key).toBe('[bullmq]');
    expect(frameKey(frame('x', 'file:///repo/node_modules/@msgpackr-extract/a/index.js'), root).key).toBe('[@msgpackr-extract/a]');
    expect(frameKey(frame('', 'node:internal/streams/writable', 9), root).key).toBe('(anonymous) node:internal/streams/writable:10');
    expect(frameKey(frame('(program)', ''), root).key).toBe('(program)');
  });
});

describe('selfTimes', () => {
  it('sums each function’s samples, one row per package under node_modules, and leaves idle out of the busy time', () => {
    const p = selfTimes([profile()], undefined, root);
    // 10 samples of 100 µs (the last one runs to endTime), 2 of them idle
    expect(p.busyMs).toBeCloseTo(0.8);
    expect(p.rows).toEqual([
      { name: '[ioredis] write', selfMs: expect.closeTo(0.3) as number },
      { name: 'plan libs/graph/dist/plan.js:42', selfMs: expect.closeTo(0.3) as number },
      { name: '(garbage collector)', selfMs: expect.closeTo(0.1) as number },
      { name: 'tick services/dispatcher/dist/tick.js:10', selfMs: expect.closeTo(0.1) as number },
    ]);
  });

  it('keeps only the samples inside the window', () => {
    // samples at 1,100 … 2,000; the window 1,450–1,750 holds the 5th to the 7th (idle, idle, parse)
    const p = selfTimes([profile()], { fromUs: 1450, toUs: 1750 }, root);
    expect(p.busyMs).toBeCloseTo(0.1);
    expect(p.rows.map((r) => r.name)).toEqual(['[ioredis] parse']);
  });

  it('adds up several profiles of one process', () => {
    const p = selfTimes([profile(), profile()], undefined, root);
    expect(p.busyMs).toBeCloseTo(1.6);
    expect(p.rows[0]!.selfMs).toBeCloseTo(0.6);
  });
});

describe('renderProfiles', () => {
  it('prints the top rows of each process with their share of its busy time', () => {
    const md = renderProfiles('W1', new Map([['dispatcher-1', selfTimes([profile()], undefined, root)]]), 2);
    expect(md).toContain('**dispatcher-1**: 1 ms on CPU');
    expect(md).toContain('| [ioredis] write | 0.3 | 37.5 |');
    expect(md).not.toContain('garbage collector');
  });
});
